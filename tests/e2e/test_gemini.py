"""Gemini CLI specifics: what its hook code does with the answers issue 16's fix needs.

Our hook entry (as `init` writes it) is pointed at a probe script with a canned answer, so these
tests pin down Gemini CLI 0.61.0's own behaviour (packages/core `hooks/types.ts`: `block` and
`deny` block, `ask` asks, any other decision continues; `hookSpecificOutput.tool_input` is the
new tool input) rather than ours: they say which answer our adapter must give.
"""

from __future__ import annotations

import json

import pytest

from .conftest import make_world


@pytest.fixture(scope="module")
def gemini(tmp_path_factory, policy_cache):
    """Gemini CLI whose BeforeTool hook entry (written by `init`) runs the probe script."""
    world = make_world(
        tmp_path_factory.mktemp("gemini-probe"), policy_cache, "gemini", "in-process"
    )
    probe = world.sandbox.probe_hook()
    path = world.sandbox.home / ".gemini" / "settings.json"
    settings = json.loads(path.read_text())
    settings["hooks"]["BeforeTool"][0]["hooks"][0]["command"] = str(probe)
    path.write_text(json.dumps(settings, indent=2))
    return world


def answer(world, **fields) -> None:
    """Make the probe answer `fields` as JSON."""
    world.sandbox.probe_hook(json.dumps(fields))


def test_ask_is_honoured_headless(gemini):
    """`{"decision": "ask"}` stops the command in a headless --yolo run — by waiting for an
    approval that never comes: the run hangs until it is killed."""
    work = gemini.sandbox.repo("probe-ask")
    answer(gemini, decision="ask", reason="probe asks")
    run = gemini.run(work, "touch ran.marker", timeout=15)
    assert not (work / "ran.marker").exists(), run.describe()
    assert run.timed_out and run.model.tool_results == [], run.describe()


def test_ask_user_is_taken_as_allow(gemini):
    """`{"decision": "ask_user"}` (our answer today) is not a decision Gemini knows: it runs."""
    work = gemini.sandbox.repo("probe-ask-user")
    answer(gemini, decision="ask_user", reason="probe asks")
    run = gemini.run(work, "touch ran.marker")
    assert (work / "ran.marker").exists(), run.describe()


def test_whole_tool_input_keeps_dir_path(gemini):
    """A rewrite that sends the whole tool input, command changed, runs in `dir_path`."""
    work = gemini.sandbox.repo("probe-tool-input")
    (work / "sub").mkdir()
    tool_input = {
        "command": "touch rewritten.marker",
        "description": "Run the test command",
        "dir_path": "sub",
    }
    answer(gemini, decision="allow", hookSpecificOutput={"tool_input": tool_input})
    run = gemini.run(work, "touch ran.marker", tool_args={"dir_path": "sub"})
    assert (work / "sub" / "rewritten.marker").exists(), run.describe()
    assert not (work / "ran.marker").exists() and not (work / "sub" / "ran.marker").exists()
