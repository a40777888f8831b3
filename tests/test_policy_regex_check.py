"""Regular expressions in policies are RE2 on both backends: a literal pattern RE2 rejects is a load
error with its position (at run time it would make the rule an error on every command), and
`re_find(pattern, text)` takes its pattern first, as `glob` and `bash_rule_matches` do."""

from __future__ import annotations

import subprocess
import sys

import pytest
from policy_helpers import write

from rtk_policy.policy import PolicyLoadError, available_backends, load_policy_set
from rtk_policy.policy.regex import pattern_problem, re_find

BACKENDS = available_backends()

POLICY = """\
name: patterns
kind: permission
rules:
  - id: lookbehind
    decision: deny
    match: segment.text.matches("(?<=rm )-rf")
  - id: backreference-and-lookahead
    decision: ask
    match: re_find(r"(a)\\1", segment.text) != "" || matches(segment.text, 'ok(?!x)')
  - id: fine
    decision: ask
    match: re_find("(\\\\d+)", segment.text) != "" && segment.text.matches('^git\\\\s')
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_check_rejects_patterns_re2_cannot_compile(tmp_path, backend):
    path = write(tmp_path, "patterns.yaml", POLICY)
    with pytest.raises(PolicyLoadError) as caught:
        load_policy_set([path], backend=backend, use_cache=False)
    problems = [(p.line, p.col, p.message) for p in caught.value.problems]
    assert [(line, column) for line, column, _ in problems] == [(6, 33), (9, 20), (9, 75)]
    assert all(message.startswith("invalid RE2 pattern") for _, _, message in problems)
    assert "(?<=" in problems[0][2] and "(?!" in problems[2][2]


def test_valid_patterns_load_on_every_backend(tmp_path):
    fine = POLICY.split("  - id: lookbehind")[0] + "  - id: fine" + POLICY.split("  - id: fine")[1]
    path = write(tmp_path, "fine.yaml", fine)
    for backend in BACKENDS:
        assert len(load_policy_set([path], backend=backend, use_cache=False).rules) == 1


def test_pattern_problem_names_what_re2_rejects():
    assert pattern_problem(r"^git\s+push") == ""
    assert "invalid RE2 pattern" in pattern_problem("(?<=a)b")


def test_re_find_takes_the_pattern_first_and_answers_group_one():
    assert re_find(r"v(\d+)", "v12 v3") == "12" and re_find("b.", "abc") == "bc"
    assert re_find("z", "abc") == ""


def test_re_find_is_linear_on_a_pattern_that_hangs_backtracking_engines():
    """`(a+)+$` on 36 a's and a b takes Python's `re` minutes; RE2 answers at once."""
    code = (
        "from rtk_policy.policy.regex import re_find; "
        "print(repr(re_find('(a+)+$', 'a' * 36 + 'b')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "''"
