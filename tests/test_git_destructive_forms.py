"""git's destructive forms judged as real git runs them (issue 18, class 3): each form runs in a
fresh repository made here (harmless effects; pushes with --dry-run), and the baseline asks or
denies exactly when git lost work: an edit overwritten, an untracked file or an unmerged branch
deleted, a remote branch force-updated or deleted. Long options are abbreviated as git allows
(`reset --ha`, `clean --forc`, `branch --del --forc`, `push --mir`), and forms git refuses (an
ambiguous prefix such as `push --forc`, `checkout --track main a.txt`) lose nothing and get no
opinion. Configuration given through the environment counts as `-c` does."""

from __future__ import annotations

import shlex
import shutil

import pytest
from git_helpers import git

from rtk_policy.config.load import Config
from rtk_policy.engine.pipeline import Engine
from rtk_policy.policy import load_policy_set
from rtk_policy.policy.load import packs_dir

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
PROJECT = "/home/dev/project"


@pytest.fixture(scope="module")
def engine() -> Engine:
    """The shipped packs."""
    return Engine(policies=load_policy_set([str(packs_dir())]), config=Config(audit_enabled=False))


def _verdict(engine: Engine, command: str) -> str:
    context = engine.context(agent="claude", cwd=PROJECT, project_dir=PROJECT)
    return engine.decide(command, context).verdict


def _repo(tmp_path):
    """a.txt committed as "one" on main, as "other" on branch other, edited to "edit"; b.txt."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main", ".")
    (repo / "a.txt").write_text("one\n")
    (repo / "b.txt").write_text("b\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "one")
    git(repo, "checkout", "-qb", "other")
    (repo / "a.txt").write_text("other\n")
    git(repo, "commit", "-qam", "other")
    git(repo, "checkout", "-q", "main")
    (repo / "a.txt").write_text("edit\n")
    (repo / "list").write_text("a.txt\n")
    return repo


CHECKOUTS = [
    "checkout --recurse-submodules main a.txt", "checkout --rec main a.txt",
    "checkout --conflict merge main a.txt", "checkout --conflict=merge main a.txt",
    "checkout --no-overlay main a.txt", "checkout -q main a.txt", "checkout other a.txt",
    "checkout --track main a.txt", "checkout -t main a.txt", "checkout --no-track main a.txt",
    "checkout --detach main a.txt", "checkout --orphan x main a.txt", "checkout -l main a.txt",
    "checkout -b x main a.txt", "checkout --f main", "checkout --fo main", "checkout main",
    "checkout --conflict merge main", "checkout --pathspec-from-file=list main",
    "switch --di main", "switch --d main", "switch --discard-changes main", "switch main",
    "restore --unified --staged a.txt", "restore --inter-hunk-context --staged a.txt",
]  # fmt: skip


@pytest.mark.parametrize("form", CHECKOUTS)
def test_checkout_switch_restore(tmp_path, engine, form):
    """Asked exactly when git overwrote the edit of a.txt."""
    repo = _repo(tmp_path)
    git(repo, *form.split())
    lost = (repo / "a.txt").read_text() != "edit\n"
    assert (_verdict(engine, f"git {form}") == "ask") is lost


RESETS = ["--hard", "--ha", "--har", "--h", "--merge", "--mer", "--m", "--mixed", "--soft",
          "--keep", "--k", "--no-refresh"]  # fmt: skip


@pytest.mark.parametrize("form", RESETS)
def test_reset(tmp_path, engine, form):
    """With a staged edit of a.txt and an unstaged one of b.txt: asked exactly when git lost
    one of them (`--merge` throws away the staged edit)."""
    repo = _repo(tmp_path)
    git(repo, "add", "a.txt")
    (repo / "b.txt").write_text("b edit\n")
    git(repo, "reset", form, "HEAD")
    lost = (repo / "a.txt").read_text() != "edit\n" or (repo / "b.txt").read_text() != "b edit\n"
    assert (_verdict(engine, f"git reset {form} HEAD") == "ask") is lost


CLEANS = ["--forc", "--fo", "--f", "-f", "--force", "--force -n", "-fn", "--dry-run -f", "",
          "--fo --dry"]  # fmt: skip


@pytest.mark.parametrize("form", CLEANS)
def test_clean(tmp_path, engine, form):
    """Asked exactly when git deleted the untracked file."""
    repo = _repo(tmp_path)
    (repo / "new.txt").write_text("new\n")
    git(repo, "clean", *form.split())
    deleted = not (repo / "new.txt").exists()
    assert (_verdict(engine, f"git clean {form}".strip()) == "ask") is deleted


BRANCHES = ["--del --forc other", "-D other", "--delete --force other", "-d -f other",
            "-df other", "--d --f other", "-d other", "--del other", "-d --fo other"]  # fmt: skip


@pytest.mark.parametrize("form", BRANCHES)
def test_branch_delete(tmp_path, engine, form):
    """Branch other is not merged: asked exactly when git deleted it."""
    repo = _repo(tmp_path)
    git(repo, "branch", *form.split())
    gone = git(repo, "rev-parse", "--verify", "-q", "other").returncode != 0
    assert (_verdict(engine, f"git branch {form}") == "ask") is gone


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    """A clone whose main was rewritten (a push must force); the remote also has feature."""
    root = tmp_path_factory.mktemp("push")
    git(root, "init", "-q", "--bare", "remote.git")
    work = root / "clone"
    git(root, "init", "-q", "-b", "main", str(work))
    git(work, "commit", "-q", "--allow-empty", "-m", "one")
    git(work, "remote", "add", "origin", str(root / "remote.git"))
    git(work, "push", "-q", "origin", "main", "main:feature")
    git(work, "commit", "-q", "--amend", "--allow-empty", "-m", "rewritten")
    return work


PUSHES = ["--forc origin main", "--force origin main", "--fo origin main", "--mir origin",
          "origin main", "--del origin feature", "--for origin main", "--force-w origin main",
          "--repo :x origin main"]  # fmt: skip


@pytest.mark.parametrize("form", PUSHES)
def test_push(clone, engine, form):
    """Asked or denied exactly when git's dry run force-updates or deletes a remote branch."""
    out = git(clone, "push", "--dry-run", "--porcelain", *form.split()).stdout
    rewrites = any(line[:1] in {"+", "-"} for line in out.splitlines())
    assert (_verdict(engine, f"git push {form}") in {"ask", "deny"}) is rewrites


def _merging(tmp_path):
    """A merge of other stopped on a conflict in a.txt, resolved by hand."""
    repo = _repo(tmp_path)
    (repo / "a.txt").write_text("mine\n")
    git(repo, "commit", "-qam", "mine")
    git(repo, "merge", "other")
    (repo / "a.txt").write_text("edit\n")  # the resolution
    return repo


def _rebasing(tmp_path):
    """A rebase of main onto other stopped on a conflict, with an edit of b.txt made since."""
    repo = _repo(tmp_path)
    (repo / "a.txt").write_text("mine\n")
    git(repo, "commit", "-qam", "mine")
    git(repo, "rebase", "other")
    (repo / "a.txt").write_text("edit\n")
    return repo


@pytest.mark.parametrize(
    ("start", "form"),
    [(_merging, "merge --abort"), (_merging, "merge --abo"), (_merging, "merge --quit"),
     (_rebasing, "rebase --abort"), (_rebasing, "rebase --ab"), (_rebasing, "rebase --quit")],
)  # fmt: skip
def test_abort(tmp_path, engine, start, form):
    """Asked exactly when git threw away the edit made during the merge or rebase."""
    repo = start(tmp_path)
    git(repo, *form.split())
    lost = (repo / "a.txt").read_text() != "edit\n"
    assert (_verdict(engine, f"git {form}") == "ask") is lost


@pytest.mark.parametrize("form", ["tag -d v1", "tag --delete v1", "tag --del v1"])
def test_tag_delete_loses_no_work(tmp_path, engine, form):
    """git tag -d leaves the working tree alone and prints the commit the tag named (it can be
    put back): no opinion."""
    repo = _repo(tmp_path)
    git(repo, "tag", "v1")
    head = git(repo, "rev-parse", "--short", "HEAD").stdout.strip()
    out = git(repo, *form.split()).stdout
    assert head in out and (repo / "a.txt").read_text() == "edit\n"
    assert _verdict(engine, f"git {form}") == "none"


ENVIRONMENTS = [
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.nuke GIT_CONFIG_VALUE_0=reset git nuke --hard",
    "GIT_CONFIG_PARAMETERS=\"'alias.nuke=reset'\" git nuke --hard",
    "GIT_CONFIG_PARAMETERS=\"'alias.nuke'='reset'\" git nuke --hard",
    "GIT_CONFIG_COUNT=2 GIT_CONFIG_KEY_0=color.ui GIT_CONFIG_VALUE_0=never "
    "GIT_CONFIG_KEY_1=alias.nuke GIT_CONFIG_VALUE_1='reset --hard' git nuke",
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_1=alias.nuke GIT_CONFIG_VALUE_1='reset --hard' git nuke",
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.nuke GIT_CONFIG_VALUE_0=reset git nuke --soft",
]


@pytest.mark.parametrize("command", ENVIRONMENTS)
def test_configuration_from_the_environment(tmp_path, engine, command):
    """An alias set in the environment runs as one set with -c: asked exactly when git lost the
    edit (a key missing for GIT_CONFIG_COUNT makes git refuse the command)."""
    repo = _repo(tmp_path)
    words = shlex.split(command)
    at = words.index("git")
    env = dict(w.split("=", 1) for w in words[:at])
    git(repo, *words[at + 1 :], env=env)
    lost = (repo / "a.txt").read_text() != "edit\n"
    assert (_verdict(engine, command) == "ask") is lost


@pytest.mark.parametrize(
    "form",
    ["--recurse-submodules checkout main", "--recurse-submodules on-demand main",
     "--unified 3 main", "--inter-hunk-context 3 main"],
)  # fmt: skip
def test_checkout_words_that_name_nothing_to_check_out(tmp_path, engine, form):
    """A --recurse-submodules value typed as the next word is read by git 2.39 as a tree-ish
    that no ref is named like, then as paths that match no file: git refuses and loses nothing.
    -U / --inter-hunk-context (of later releases) take the number: git 2.39 refuses them as
    unknown. No opinion on either."""
    repo = _repo(tmp_path)
    done = git(repo, "checkout", *form.split())
    assert done.returncode != 0 and (repo / "a.txt").read_text() == "edit\n"
    assert _verdict(engine, f"git checkout {form}") == "none"
