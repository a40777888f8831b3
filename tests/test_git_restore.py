"""`git restore` discards working-tree edits exactly as real git does (`git_restore_discards`,
rule git-discard-changes): each form runs in a fresh repository with an edited file, and the
rule asks exactly when git overwrote the edit (or, for the forms git reads from the terminal or
refuses only after reading, when it may)."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from rtk_policy.config.load import Config
from rtk_policy.engine.pipeline import Engine
from rtk_policy.policy import load_policy_set
from rtk_policy.policy.functions_git import git_restore_discards
from rtk_policy.policy.load import packs_dir

#: the words after `git restore`; `list` names a file holding `a.txt`
FORMS = [
    "a.txt", "--staged a.txt", "--no-staged a.txt", "-S --no-staged a.txt",
    "-W --no-worktree a.txt", "--no-worktree -W a.txt", "--staged --pathspec-from-file --worktree",
    "--staged --pathspec-from-file=list", "--pathspec-from-file list", "--pathspec-from-file=list",
    "-SW a.txt", "-qS a.txt", "-Ws HEAD a.txt", "-sHEAD a.txt", "--source HEAD a.txt",
    "--source=HEAD -S a.txt", "-s HEAD -S a.txt", "--work a.txt", "--stag a.txt",
    "--no-work a.txt", "-S -- a.txt", "--staged --no-staged a.txt", "--conflict=merge a.txt",
    "-q a.txt", "--no-worktree a.txt", "-W -S --no-worktree a.txt", "-S -W a.txt",
    "--s HEAD a.txt", "-h", "", "-s HEAD", ".", "-- a.txt",
]  # fmt: skip
#: forms whose discarding depends on what the user types (`-p` asks per hunk): asked all the same
MAY = ["-p a.txt", "--patch a.txt"]
PROJECT = "/home/dev/project"


def _git(repo, *args: str) -> subprocess.CompletedProcess:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(repo),
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}  # fmt: skip
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=20, check=False)  # fmt: skip


def real_git_discards(tmp_path, form: str) -> bool:
    """Whether `git restore FORM` overwrote the working-tree edit of a tracked file."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", ".")
    (repo / "a.txt").write_text("one\n")
    _git(repo, "add", "a.txt")
    _git(repo, "commit", "-qm", "one")
    (repo / "a.txt").write_text("two\n")
    (repo / "list").write_text("a.txt\n")
    _git(repo, "restore", *form.split())
    return (repo / "a.txt").read_text() == "one\n"


@pytest.fixture(scope="module")
def engine() -> Engine:
    """The shipped packs."""
    return Engine(policies=load_policy_set([str(packs_dir())]), config=Config(audit_enabled=False))


def _asks(engine: Engine, command: str) -> bool:
    context = engine.context(agent="claude", cwd=PROJECT, project_dir=PROJECT)
    return "git-discard-changes" in engine.decide(command, context).rule_ids


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@pytest.mark.parametrize("form", FORMS)
def test_the_rule_asks_exactly_when_git_discards(tmp_path, engine, form):
    """Real git and the rule agree on every form."""
    discarded = real_git_discards(tmp_path, form)
    assert git_restore_discards(["restore", *form.split()]) is discarded
    assert _asks(engine, f"git restore {form}".strip()) is discarded


@pytest.mark.parametrize("form", MAY)
def test_an_interactive_restore_is_asked(engine, form):
    """`-p` discards what the user (or the agent typing for it) accepts: asked."""
    assert _asks(engine, f"git restore {form}")


@pytest.mark.parametrize(
    "command",
    ["git -C repo restore src/app.py", "git --no-pager restore -W --staged .",
     "sudo git restore ."],
)  # fmt: skip
def test_global_options_and_wrappers_still_ask(engine, command):
    """The words after `restore` are read wherever git's global options put it."""
    assert _asks(engine, command)
