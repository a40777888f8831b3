"""The scenarios of issue 16 point 5, in every agent CLI, with both hook forms `init` writes.

Each test runs one real CLI headless against the fake model, which asks for one command; what
ran is read from the stub `rtk`'s log and from marker files, what the model saw from the fake
model's record, what our hook decided from its audit log (so a test can tell "the hook stopped
it" from "the hook never ran"). Unless a test says otherwise the CLI runs in its yes-to-all mode
(Claude Code `--allowedTools Bash`, Codex `approval_policy = "never"`, Gemini `--yolo`, Copilot
`--allow-all-tools`): whatever our hook does not stop, runs.

The thin client (`init`'s default) runs every scenario; the in-process form (`init
--in-process`) runs those where the form could matter: the hook's answer itself (rewrite, deny,
ask, no opinion) — the broken install, where forms fail differently, is in
test_broken_install.py.

Tests that fail today because of known protocol bugs (issue 16) are `xfail(strict=True)`, so they
turn into failures, and their mark must go, once the bug is fixed.
"""

from __future__ import annotations

import pytest

from .conftest import FORMS, NO_HOOK

AGENT_NAMES = ("claude", "codex", "gemini", "copilot")

#: (agent, scenario) -> why it fails today. Scenario names are the test names without `test_`.
KNOWN_FAILURES: dict[tuple[str, str], str] = {}


#: The default install; scenarios whose answer could differ by hook form also run in-process.
THIN = ("thin",)


def worlds(scenario: str, agents: tuple[str, ...] = AGENT_NAMES, forms: tuple[str, ...] = THIN):
    """`world` parameters for `scenario`, each known failure marked xfail(strict)."""
    params = []
    for agent in agents:
        for form in forms:
            reason = form != NO_HOOK and KNOWN_FAILURES.get((agent, scenario))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            params.append(pytest.param((agent, form), id=f"{agent}-{form}", marks=marks))
    return pytest.mark.parametrize("world", params, indirect=True)


def decided(world, work, verdict: str) -> None:
    """Assert our hook judged the command run in `work` and answered `verdict`."""
    records = world.sandbox.audit(cwd=work)
    assert records, f"our hook never ran (no audit record for {work})"
    assert [r["verdict"] for r in records] == [verdict], records


@worlds("rewrite", forms=FORMS)
def test_rewrite(world):
    """`git status` becomes `rtk git status`, which runs in the same folder; the model sees
    git's output."""
    work = world.sandbox.repo("rewrite")
    run = world.run(work, "git status")
    assert (str(work), "git status") in world.sandbox.rtk_calls(), run.describe()
    assert "On branch main" in run.tool_result, run.describe()


@worlds("compound_rewrite")
def test_compound_rewrite(world):
    """Each segment of `git status && ls -la` is rewritten and runs."""
    work = world.sandbox.repo("compound")
    run = world.run(work, "git status && ls -la")
    calls = [argv for cwd, argv in world.sandbox.rtk_calls() if cwd == str(work)]
    assert calls == ["git status", "ls -la"], run.describe()
    assert "tracked.txt" in run.tool_result, run.describe()


@worlds("deny_baseline", forms=FORMS)
def test_deny_baseline(world):
    """A command the baseline denies does not run, and the model is told why."""
    work = world.sandbox.repo("deny-baseline")
    run = world.run(work, "touch ran.marker && git push --force origin main")
    decided(world, work, "deny")
    assert not (work / "ran.marker").exists(), run.describe()
    assert not world.sandbox.remote_has("deny-baseline"), run.describe()
    assert "force push overwrites history" in run.tool_result, run.describe()


@worlds("deny_user_policy")
def test_deny_user_policy(world):
    """A user policy's deny stops the command and its message reaches the model."""
    work = world.sandbox.repo("deny-user")
    (work / "keep-me").mkdir()
    run = world.run(work, "rm -rf keep-me")
    decided(world, work, "deny")
    assert (work / "keep-me").is_dir(), run.describe()
    assert "the keep-me folder stays" in run.tool_result, run.describe()


@worlds("ask", forms=FORMS)
def test_ask(world):
    """A command a policy asks about does not run unapproved in a headless run. (Gemini CLI
    answers a hook's `ask` in a headless run by waiting for ever: a run killed at the timeout
    counts as not run, see test_gemini.py.)"""
    work = world.sandbox.repo("ask")
    (work / "tracked.txt").write_text("uncommitted change\n")
    run = world.run(work, "touch ran.marker && git reset --hard", timeout=45)
    decided(world, work, "ask")
    assert not (work / "ran.marker").exists(), run.describe()
    assert (work / "tracked.txt").read_text() == "uncommitted change\n", run.describe()


@worlds("no_opinion", forms=FORMS)
def test_no_opinion(world):
    """A command no policy decides and none rewrites is left to the agent, which runs it here."""
    work = world.sandbox.repo("no-opinion")
    run = world.run(work, "touch ran.marker")
    decided(world, work, "none")
    assert (work / "ran.marker").exists(), run.describe()
    assert not world.sandbox.rtk_calls() or all(
        c != str(work) for c, _ in world.sandbox.rtk_calls()
    ), run.describe()


#: Per agent: one more argument of the shell call whose effect a test can see, the folder
#: (below the repository) the rewritten command must run in, and text the model must see.
KEPT_ARGUMENT = {
    "claude": ({"run_in_background": True}, "", "Command running in background"),
    "codex": ({"workdir": "sub"}, "sub", "On branch main"),
    "gemini": ({"dir_path": "sub"}, "sub", "On branch main"),
    "copilot": ({"mode": "async"}, "", "command started in background"),
}


@worlds("rewrite_keeps_arguments")
def test_rewrite_keeps_arguments(world):
    """A rewrite changes only the command: the call's other arguments still apply (Claude Code
    `run_in_background`, Codex `workdir`, Gemini `dir_path`, Copilot `mode`)."""
    work = world.sandbox.repo("kept-arguments")
    (work / "sub").mkdir()
    argument, folder, seen = KEPT_ARGUMENT[world.agent.name]
    run = world.run(work, "git status", tool_args=argument)
    assert (str(work / folder).rstrip("/"), "git status") in world.sandbox.rtk_calls(), (
        run.describe()
    )
    assert seen in run.model.tool_results[0], run.describe()


@worlds("own_deny_rule", forms=(*THIN, NO_HOOK))
def test_own_deny_rule(world):
    """The agent's own deny rule still stops a command we have no opinion on."""
    work = world.sandbox.repo("own-deny")
    with world.agent.own_deny_rule(world.sandbox, "mkdir own-deny") as flags:
        run = world.run(work, "mkdir own-deny", flags=flags)
    assert not (work / "own-deny").exists(), run.describe()


@worlds("own_deny_rule_rewritten", forms=(*THIN, NO_HOOK))
def test_own_deny_rule_rewritten(world):
    """The agent's own deny rule on `git push` still stops `git push origin main`, which we
    would rewrite to `rtk git push origin main` (issue 16 point 4, issue 17 point 3). The
    no-hook world is the control: the agent's rule alone stops it."""
    work = world.sandbox.repo("own-deny-rewritten")
    with world.agent.own_deny_rule(world.sandbox, "git push") as flags:
        run = world.run(work, "git push origin main", flags=flags)
    assert not world.sandbox.remote_has("own-deny-rewritten"), run.describe()
    assert not [c for c in world.sandbox.rtk_calls() if c[0] == str(work)], run.describe()


@worlds("allow_user_policy")
def test_allow_user_policy(world):
    """A command a user policy allows runs — in Claude Code's default mode too, unprompted."""
    work = world.sandbox.repo("allow-user")
    flags = () if world.agent.name == "claude" else None
    run = world.run(work, "touch allowed.marker", flags=flags)
    decided(world, work, "allow")
    assert (work / "allowed.marker").exists(), run.describe()
