"""`git push` updates the remote branches `git_push_branches` names, as real git reads the words:
each form is pushed with `--dry-run --porcelain` from a clone whose every branch was rewritten, and
the refs git reports it would update are compared with the function's answer (`HEAD`: the
checked-out branch; `*`: every branch). Then rule git-push-force-with-lease asks exactly for the
lease pushes that rewrite main or master."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess

import pytest

from rtk_policy.config.load import Config
from rtk_policy.engine.pipeline import Engine
from rtk_policy.policy import load_policy_set
from rtk_policy.policy.functions_git import git_push_branches
from rtk_policy.policy.load import packs_dir

BRANCHES = ("main", "master", "feature", "work")
#: the words after `git push --force-with-lease` (the clone has `work` checked out)
FORMS = [
    "", "origin", "origin main", "origin feature", "origin HEAD", "origin HEAD:main",
    "origin work:master", "origin +feature", "origin refs/heads/main", "origin feature main",
    "--repo=origin", "--repo origin", "-o ci.skip origin feature", "--push-option=x origin main",
    "--all origin", "-u origin feature", "--atomic origin feature master",
    "origin -- main", "--no-verify origin refs/heads/feature:refs/heads/main",
]  # fmt: skip


def _git(repo, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(repo),
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}  # fmt: skip
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True,
                          check=check)  # fmt: skip


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    """A clone of a bare remote holding BRANCHES, each rewritten locally (a push must force)."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    root = tmp_path_factory.mktemp("push")
    _git(root, "init", "-q", "--bare", "remote.git")
    _git(root / "remote.git", "config", "receive.advertisePushOptions", "true")  # for -o
    work = root / "clone"
    _git(root, "init", "-q", "-b", "main", str(work))
    _git(work, "commit", "-q", "--allow-empty", "-m", "one")
    _git(work, "remote", "add", "origin", str(root / "remote.git"))
    for branch in BRANCHES[1:]:
        _git(work, "branch", branch)
    _git(work, "push", "-q", "origin", *BRANCHES)
    _git(work, "fetch", "-q", "origin")
    for branch in BRANCHES:
        _git(work, "checkout", "-q", branch)
        _git(work, "branch", "-q", "--set-upstream-to", f"origin/{branch}")
        _git(work, "commit", "-q", "--amend", "--allow-empty", "-m", f"rewritten {branch}")
    return work


def _updated(clone, form: str) -> set[str]:
    """The branches git would update on the remote for `git push --force-with-lease FORM`.

    With push options, git's dry run races the local receive-pack, which may close the pipe
    before git has written them: git dies of SIGPIPE and says nothing. That run is tried again;
    git killed by any signal fails the test (it would read as "no branch updated")."""
    for _ in range(20):
        done = _git(clone, "push", "--dry-run", "--porcelain", "--force-with-lease", *form.split(),
                    check=False)  # fmt: skip
        if done.returncode != -signal.SIGPIPE:
            break
    assert done.returncode >= 0, f"git push --dry-run {form}: killed by signal {-done.returncode}"
    found = set()
    for line in done.stdout.splitlines():
        parts = line.split("\t")
        if len(parts) >= 2 and parts[0] in {"+", "*", " ", "-"}:
            found.add(parts[1].split(":")[-1].removeprefix("refs/heads/"))
    return found


@pytest.mark.parametrize("form", FORMS)
def test_the_branches_are_those_git_updates(clone, form):
    """git's own dry run updates exactly the branches the function names."""
    named = set(git_push_branches(["push", "--force-with-lease", *form.split()]))
    expected = {"work" if b == "HEAD" else b for b in named}
    if "*" in expected:
        expected = (expected - {"*"}) | set(BRANCHES)
    assert _updated(clone, form) == expected, form


@pytest.fixture(scope="module")
def engine() -> Engine:
    """The shipped packs."""
    return Engine(policies=load_policy_set([str(packs_dir())]), config=Config(audit_enabled=False))


@pytest.mark.parametrize("form", FORMS)
def test_a_lease_push_asks_exactly_when_it_rewrites_the_default_branch(clone, engine, form):
    """Asked when main or master is rewritten, the agent's business otherwise (a `+` refspec
    forces without a lease: denied)."""
    command = f"git push --force-with-lease {form}".strip()
    context = engine.context(cwd="/home/dev/project", project_dir="/home/dev/project")
    verdict = engine.decide(command, context, messages=False).verdict
    rewrites_default = bool(_updated(clone, form) & {"main", "master"})
    expected = "ask" if rewrites_default else "none"
    assert verdict == ("deny" if " +" in command else expected), command


def test_option_values_are_not_refspecs():
    """`--repo main`, `-o main` and a lease's expected value name no branch."""
    assert git_push_branches(["push", "--repo", "main", "origin", "feature"]) == ["feature"]
    assert git_push_branches(["push", "-o", "main", "origin", "x"]) == ["x"]
    lease = ["push", "--force-with-lease=main:abc", "origin", "x"]
    assert git_push_branches(lease) == ["main", "x"]
    assert git_push_branches(["-C", "repo", "push"]) == ["HEAD"]
    assert git_push_branches(["status"]) == []
