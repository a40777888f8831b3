"""The agents' own permission rules read by our hook (issue 16 point 4), in the real Gemini CLI:
a deny rule in the user's policy folder stops the command we would rewrite (`git push` is rewritten
to `rtk git push`, which Gemini's own `commandPrefix` rule no longer matches), and an allow list in
`tools.allowed` (which makes Gemini deny every other shell command) still runs the commands it
allows: a rewrite to `rtk …` would be denied by Gemini, so none is made unless `rtk` is allowed."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import FORMS

WORLDS = pytest.mark.parametrize(
    "world", [("gemini", form) for form in FORMS], indirect=True, ids=[f"gemini-{f}" for f in FORMS]
)


@contextlib.contextmanager
def gemini_file(path: Path, update: dict | str) -> Iterator[None]:
    """`path` with `update` merged in (a dict into the JSON object) or written (text); restored."""
    before = path.read_text() if path.exists() else None
    if isinstance(update, dict):
        data = json.loads(before) if before else {}
        data.update(update)
        path.write_text(json.dumps(data, indent=2) + "\n")
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(update)
    try:
        yield
    finally:
        if before is None:
            path.unlink()
        else:
            path.write_text(before)


@WORLDS
def test_a_deny_rule_in_the_users_policy_folder_is_not_slipped_past(world):
    """`~/.gemini/policies/*.toml` denies `git push`: our hook reads it and denies the push
    (the rewrite `rtk git push …` would have escaped Gemini's own rule)."""
    work = world.sandbox.repo("gemini-policy-deny")
    rule = '[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = "git push"\n'
    rule += 'decision = "deny"\npriority = 900\n'
    with gemini_file(world.sandbox.home / ".gemini" / "policies" / "e2e.toml", rule):
        run = world.run(work, "git push origin main")
    assert not world.sandbox.remote_has("gemini-policy-deny"), run.describe()
    records = world.sandbox.audit(cwd=work)
    assert [r["verdict"] for r in records] == ["deny"], records
    assert "Gemini CLI deny rule" in run.tool_result, run.describe()


@WORLDS
def test_an_allow_list_keeps_its_commands_running(world):
    """`tools.allowed: [run_shell_command(git status)]`: Gemini denies every other shell command,
    so the hook allows `git status` as typed (no rewrite) and it runs."""
    work = world.sandbox.repo("gemini-allow-list")
    settings = world.sandbox.home / ".gemini" / "settings.json"
    with gemini_file(settings, {"tools": {"allowed": ["run_shell_command(git status)"]}}):
        run = world.run(work, "git status")
    assert "On branch main" in run.tool_result, run.describe()
    assert not [c for c in world.sandbox.rtk_calls() if c[0] == str(work)], run.describe()


@WORLDS
def test_an_allow_list_with_rtk_gets_the_rewrite(world):
    """With `run_shell_command(rtk)` allowed too, the rewrite is made and runs."""
    work = world.sandbox.repo("gemini-allow-rtk")
    allowed = ["run_shell_command(git status)", "run_shell_command(rtk)"]
    settings = world.sandbox.home / ".gemini" / "settings.json"
    with gemini_file(settings, {"tools": {"allowed": allowed}}):
        run = world.run(work, "git status")
    assert (str(work), "git status") in world.sandbox.rtk_calls(), run.describe()
    assert "On branch main" in run.tool_result, run.describe()
