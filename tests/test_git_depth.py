"""git in depth (issue 18, class 4): paths checked out over local edits, forced switches and
worktree removals, and code git runs from its configuration or environment."""

from __future__ import annotations

from pathlib import Path

import pytest

from rtk_policy.config.load import Config
from rtk_policy.engine.pipeline import Engine
from rtk_policy.policy import load_policy_set
from rtk_policy.shell import parse
from rtk_policy.shell.git_code import alias_command, scripts
from rtk_policy.shell.words import make_word

PACK = Path(__file__).resolve().parents[1] / "policies" / "security-baseline.yaml"


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine(policies=load_policy_set([str(PACK)]), config=Config(audit_enabled=False))


def words(text: str) -> list:
    out, at = [], 0
    for part in text.split():
        at = text.index(part, at)
        out.append(make_word(part, at))
        at += len(part)
    return out


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("git checkout HEAD~1 src/", "ask"),
        ("git checkout --ours conflicted.txt", "ask"),
        ("git checkout HEAD --pathspec-from-file=paths.txt", "ask"),
        ("git -C repo checkout -f main", "ask"),
        ("git checkout --forc main", "ask"),
        ("git switch --discard main", "ask"),
        ("git worktree remove -f ../wt", "ask"),
        ("git -c filter.x.clean='rm -rf ~' add .", "deny"),
        ("git -c alias.nuke='!git push --force' nuke", "deny"),
        ("GIT_EXTERNAL_DIFF='rm -rf /' git diff", "deny"),
        ("git config core.sshCommand 'sh -c \"rm -rf /\"'", "deny"),
        ("git -c alias.wipe='reset --hard' wipe", "ask"),
        ("git -c diff.x.textconv=./conv.sh diff", "ask"),
        ("git --config-env core.x=Y reset --hard", "ask"),
        ("git checkout main", "none"),
        ("git checkout -B feature origin/feature", "none"),
        ("git checkout --detach HEAD~2", "none"),
        ("git checkout -t origin/feature", "none"),
        ("git switch -", "none"),
        ("git worktree prune", "none"),
        ("git -c core.pager='delta --dark' log", "none"),
        ("git -c alias.lg='log --oneline' lg", "none"),
        ("git config --unset alias.x", "none"),
        ("GIT_EDITOR=vim git commit", "none"),
    ],
)
def test_git_verdicts(engine, text, verdict):
    assert engine.decide(text, engine.context()).verdict == verdict


def test_scripts_of_settings_config_and_environment():
    assert scripts(words("git -c core.pager=./p.sh -c color.ui=auto log")) == ["./p.sh"]
    assert scripts(words("git -calias.x=!make x")) == ["make"]
    assert scripts(words("git config --global alias.y !run")) == ["run"]
    assert scripts(words("git config --get core.pager")) == []
    assert scripts(words("git fetch"), [("GIT_SSH_COMMAND", "./ssh.sh")]) == ["./ssh.sh"]
    assert scripts(words("git -c core.pager=cat log"), [("GIT_SSH_COMMAND", "ssh -v")]) == []


def test_an_alias_that_is_a_git_command_is_that_command():
    sub = alias_command(words("git -c alias.fp=push fp --force"))
    assert [w.value for w in sub] == ["git", "push", "--force"]
    assert alias_command(words("git -c alias.fp=!sh fp")) == []


def test_subcommand_and_operands_skip_global_options():
    seg = parse("git -C repo --git-dir .git checkout HEAD a.txt").segments[0]
    assert (seg.subcommand, seg.operands) == ("checkout", ("HEAD", "a.txt"))
