"""git's long options as git 2.39 resolves them (`shell/git_options.py`): the tables are git's own
(`git SUB --git-completion-helper-all`), and every prefix of every option is resolved as git
resolves it: ambiguous (git refuses the command), an option that takes its value as the next
word, or one that takes none. Each probe runs `git SUB --PREFIX --zzzz-no-such-option` in a fresh
repository: git's error names the ambiguity, the unknown prefix, or the unknown option after it
(the prefix took no value); any other outcome means the prefix took the next word as its value."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from git_helpers import git

from rtk_policy.policy.functions_git import git_operands, git_options
from rtk_policy.shell.git_options import TABLES_239 as TABLES
from rtk_policy.shell.git_options import expand_long

UNKNOWN = "--zzzz-no-such-option"


def _version() -> tuple[int, ...]:
    if shutil.which("git") is None:
        return ()
    out = subprocess.run(["git", "--version"], capture_output=True, text=True, check=False)
    return tuple(int(p) for p in out.stdout.split()[2].split(".")[:2] if p.isdigit())


GIT_239 = _version() == (2, 39)
needs_239 = pytest.mark.skipif(not GIT_239, reason="the tables are git 2.39's")


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    """A fresh repository with one commit."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    root = tmp_path_factory.mktemp("options")
    git(root, "init", "-q", "-b", "main", ".")
    git(root, "commit", "-q", "--allow-empty", "-m", "one")
    return root


def _real(repo, sub: str, prefix: str) -> str:
    """What git makes of `--PREFIX` (module docstring)."""
    err = git(repo, sub, f"--{prefix}", UNKNOWN).stderr
    if "ambiguous option" in err:
        return "ambiguous"
    if f"unknown option `{prefix}'" in err:
        return "unknown"
    return "flag" if f"unknown option `{UNKNOWN[2:]}'" in err else "value"


@needs_239
@pytest.mark.parametrize("sub", sorted(TABLES))
def test_the_tables_are_gits_own(repo, sub):
    """Each table names exactly the long options git 2.39 knows for the subcommand."""
    out = git(repo, sub, "--git-completion-helper-all").stdout.split()
    assert set(TABLES[sub]) == {w[2:].rstrip("=") for w in out if w.startswith("--") and w != "--"}


@needs_239
@pytest.mark.parametrize("sub", sorted(TABLES))
def test_every_prefix_resolves_as_git_resolves_it(repo, sub):
    """Ambiguous, takes the next word, or takes none: as git says, for every prefix."""
    table = TABLES[sub]
    wrong = []
    for prefix in sorted({name[:k] for name in table for k in range(1, len(name) + 1)}):
        name = expand_long(f"--{prefix}", table)
        ours = "ambiguous" if name is None else ("value" if table[name] else "flag")
        if _real(repo, sub, prefix) != ours:
            wrong.append(prefix)
    assert wrong == []


@pytest.mark.parametrize(
    ("args", "options", "operands"),
    [
        (["push", "--forc", "origin", "main"], [], []),  # ambiguous: git runs nothing
        (["push", "--mir", "origin"], ["--mirror"], ["origin"]),
        (["-C", "r", "reset", "--ha", "HEAD~1"], ["--hard"], ["HEAD~1"]),
        (["branch", "--del", "--forc", "x"], ["--delete", "--force"], ["x"]),
        (["checkout", "--conflict", "merge", "main", "f"], ["--conflict=merge"], ["main", "f"]),
        (["checkout", "--track", "main", "f"], ["--track"], ["main", "f"]),
        (["checkout", "-b", "x", "main"], ["-b"], ["main"]),
        (["checkout", "-bx", "main"], ["-bx"], ["main"]),
        (["restore", "-Ws", "HEAD", "f"], ["-Ws"], ["f"]),
        (["push", "--no-forc"], [], []),
        (["push", "--no-force", "-o", "x", "o"], ["--no-force", "-o"], ["o"]),
        (["clean", "--", "--force"], [], ["--force"]),
    ],
)  # fmt: skip
def test_options_and_operands(args, options, operands):
    """What git_options and git_operands give for typical words."""
    assert (git_options(args), git_operands(args)) == (options, operands)
