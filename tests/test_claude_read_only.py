"""`claude_read_only` (`policy/functions_readonly.py`): what Claude Code runs without asking.

The pre-tests (shell-active characters, unquoted globs) decide before the tables are read; these
cases hold them to their definitions on words with and without those characters.
"""

from __future__ import annotations

import pytest

from rtk_policy.policy.functions_readonly import _unquoted_glob, claude_read_only


@pytest.mark.parametrize(
    ("word", "expanded"),
    [
        ("plain", False), ("*.py", True), ("'*.py'", False), ('"a?b"', False), (r"\*x", False),
        ("a[0]", True), ("'a'*", True), ("", False), ("x'?'y*", True),
    ],
)  # fmt: skip
def test_an_unquoted_glob_is_one_bash_expands(word, expanded):
    assert _unquoted_glob(word) is expanded


@pytest.mark.parametrize(
    ("text", "read_only"),
    [
        ("ls src", True),
        ("ls *.py", True),  # ls may take globs
        ("git log --oneline", True),
        ("git log *.py", False),  # a glob for a program that may not take one
        ("git log '*.py'", True),  # quoted: no glob
        ("ls $(pwd)", False),  # shell-active characters after the program
        ("ls `pwd`", False),
        ("cat <in", False),
    ],
)
def test_shell_active_text_and_globs_are_not_read_only(text, read_only):
    argv = [word.strip("'") for word in text.split()]
    assert claude_read_only(argv, text.split(), text, "/work/p", "/work/p") is read_only
