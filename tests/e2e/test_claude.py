"""Claude Code specifics: issue 17's scenarios ("rewrites that help and never get in the way").

All in `-p --permission-mode default` with no allow rule unless a test adds one: what a new user
has. `-p` cannot ask, so "needs approval" shows as a refused call ("This command requires
approval"). The no-hook world is the control: what Claude Code does without rtk-policy.
Claude Code's own read-only set (commands it runs unasked in every mode) is described in
/work/notes/claude-readonly.md; `git status`, `ls -la` and `git log` are in it.
"""

from __future__ import annotations

import json
import re

import pytest

from .conftest import NO_HOOK, make_world

READ_ONLY = {
    "git status": "On branch main",
    "ls -la": "tracked.txt",
    "git log --oneline -1": "init",
}
REFUSED = "requires approval"


@pytest.fixture(scope="module")
def claude(tmp_path_factory, policy_cache):
    """Claude Code with the default install (thin client) and RTK (the stub) on PATH."""
    world = make_world(tmp_path_factory.mktemp("claude-rtk"), policy_cache, "claude", "thin")
    yield world
    world.sandbox.stop_servers()


@pytest.fixture(scope="module")
def claude_without_rtk(tmp_path_factory, policy_cache):
    """Claude Code with the default install and no `rtk` on PATH."""
    world = make_world(
        tmp_path_factory.mktemp("claude-nortk"), policy_cache, "claude", "thin", rtk=False
    )
    yield world
    world.sandbox.stop_servers()


@pytest.fixture(scope="module")
def bare(tmp_path_factory, policy_cache):
    """Claude Code without rtk-policy: the control."""
    return make_world(tmp_path_factory.mktemp("claude-bare"), policy_cache, "claude", NO_HOOK)


def repo_for(world, command: str):
    """A fresh repository named after `command`."""
    return world.sandbox.repo(re.sub(r"\W+", "-", command).strip("-"))


@pytest.mark.parametrize("command", READ_ONLY)
def test_read_only_runs_unprompted_without_hook(bare, command):
    """Control: Claude Code runs its read-only commands unasked in default mode."""
    work = repo_for(bare, command)
    run = bare.run(work, command, flags=())
    assert READ_ONLY[command] in run.tool_result and REFUSED not in run.tool_result, run.describe()


@pytest.mark.parametrize("command", READ_ONLY)
def test_read_only_rewritten_runs_unprompted(claude, command):
    """With RTK present a read-only command is rewritten and still runs unasked."""
    work = repo_for(claude, command)
    run = claude.run(work, command, flags=())
    assert (str(work), command) in claude.sandbox.rtk_calls(), run.describe()
    assert READ_ONLY[command] in run.tool_result, run.describe()


def test_without_rtk_no_rewrite_no_prompt(claude_without_rtk):
    """With RTK absent nothing is rewritten and a read-only command runs unasked, as before."""
    work = repo_for(claude_without_rtk, "git status")
    run = claude_without_rtk.run(work, "git status", flags=())
    records = claude_without_rtk.sandbox.audit(cwd=work)
    assert [r["rewrite"]["after"] for r in records] == [None], records
    assert "On branch main" in run.tool_result, run.describe()


def test_no_new_prompt_and_no_new_allow(claude, bare):
    """A command we have no opinion on gets exactly Claude Code's own answer (here: it needs
    approval, refused in -p), with and without the hook."""
    outcomes = []
    for world in (bare, claude):
        work = world.sandbox.repo("touch-default-mode")
        run = world.run(work, "touch ran.marker", flags=())
        outcomes.append(((work / "ran.marker").exists(), "approval" in run.tool_result))
    assert outcomes[0] == outcomes[1] == (False, True), outcomes


def test_command_line_deny_not_run(claude):
    """A command denied by a command-line rule the hook cannot see does not run."""
    work = repo_for(claude, "cli-deny")
    run = claude.run(work, "git push origin main", flags=("--disallowedTools", "Bash(git push:*)"))
    assert not claude.sandbox.remote_has("cli-deny"), run.describe()


def test_command_line_deny_not_run_with_rtk_allowed(claude):
    """…even when the user allowed `Bash(rtk:*)`, as the README would have them do."""
    work = repo_for(claude, "cli-deny-rtk")
    flags = ("--allowedTools", "Bash(rtk:*)", "--disallowedTools", "Bash(git push:*)")
    run = claude.run(work, "git push origin main", flags=flags)
    assert not claude.sandbox.remote_has("cli-deny-rtk"), run.describe()


def test_settings_deny_rule_not_escaped(claude):
    """A deny rule in settings the hook reads (the project's) stops the command, even with
    `Bash(rtk:*)` allowed there; the model is told which rule."""
    work = repo_for(claude, "settings-deny")
    project_settings(work, deny=["Bash(git push:*)"], allow=["Bash(rtk:*)"])
    run = claude.run(work, "git push origin main", flags=())
    assert not claude.sandbox.remote_has("settings-deny"), run.describe()
    assert "Bash(git push:*)" in run.tool_result, run.describe()


def test_untrusted_project_allow_does_not_loosen(claude, bare):
    """A project's own allow rule (which the agent could have written) does not make a command
    run that Claude Code alone would not run: Claude Code drops it while the workspace is not
    trusted ("workspace not yet trusted"), and so does the hook (settings/claude_trust.py)."""
    for world in (bare, claude):
        work = world.sandbox.repo("project-allow")
        project_settings(work, allow=["Bash(touch:*)"])
        run = world.run(work, "touch ran.marker", flags=())
        assert not (work / "ran.marker").exists(), (world.form, run.describe())


def test_trusted_project_allow_runs(claude, bare):
    """The other side: once the user trusted the workspace (`~/.claude.json`, as the trust dialog
    records it), Claude Code honours the project's allow rule, and the hook's allow agrees."""
    for world in (bare, claude):
        work = world.sandbox.repo("project-allow-trusted")
        project_settings(work, allow=["Bash(touch:*)"])
        trust(world.sandbox.home, work)
        run = world.run(work, "touch ran.marker", flags=())
        assert (work / "ran.marker").exists(), (world.form, run.describe())


def trust(home, work) -> None:
    """Record `work` in `home/.claude.json` as a workspace whose trust dialog was accepted."""
    path = home / ".claude.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    data.setdefault("projects", {}).setdefault(str(work.resolve()), {})
    data["projects"][str(work.resolve())]["hasTrustDialogAccepted"] = True
    path.write_text(json.dumps(data))


def project_settings(work, **permissions: list[str]) -> None:
    """Write `work/.claude/settings.json` with these permission lists."""
    (work / ".claude").mkdir()
    (work / ".claude" / "settings.json").write_text(json.dumps({"permissions": permissions}))


def hook_milliseconds(debug: str) -> list[int]:
    """Claude Code's own timing of each PreToolUse:Bash hook call in a `--debug-file` log."""
    pattern = r"Hooks: PreToolUse:Bash \[.*?\] finished with status \d+ \((\d+)ms\)"
    return [int(ms) for ms in re.findall(pattern, debug)]


def test_first_call_after_init_is_fast(tmp_path_factory):
    """The first hook call after `init` (in-process form, its own empty cache) takes at most
    twice a later cold call, as Claude Code times them."""
    root = tmp_path_factory.mktemp("claude-first")
    world = make_world(root / "world", root / "cache", "claude", "in-process")
    times = []
    for name in ("first", "second"):
        work = world.sandbox.repo(name)
        run = world.run(work, "touch ran.marker")
        times += hook_milliseconds(run.debug)
    assert len(times) == 2, times
    assert times[0] <= 2 * times[1], times
