"""Cursor: our answers checked against its documented hook schema — not against Cursor itself.

Cursor has no CLI that runs offline against a fake model, so unlike the other agents it is not
driven end to end. Instead the hook command `rtk-policy init --agent cursor` wrote into
`~/.cursor/hooks.json` is run the way Cursor runs it (through the shell, the payload on stdin),
in both forms, and every answer is checked against the schema in agent-hooks.md §1.8 (secondary
sources: cupcake, agent-hooks-bridge, Dippy's notes; cursor.com/docs/agent/hooks):

- input `beforeShellExecution`: `command`, `cwd`, `conversation_id`, `generation_id`,
  `workspace_roots`, `hook_event_name`; the generic `preToolUse`: `tool_name`, `tool_input`;
- output: one JSON object with `continue`, `permission` (`allow` | `deny` | `ask`),
  `user_message`, `agent_message`, and `updated_input` only on `preToolUse`. A permission hook
  whose output is not valid JSON is treated as a block, so "no opinion" must still be JSON.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from .conftest import FORMS, make_world

KEYS = {"continue", "permission", "user_message", "agent_message", "updated_input"}
PERMISSIONS = {"allow", "deny", "ask"}

#: command -> (the verdict our policies give it, as test_scenarios names them)
COMMANDS = {
    "git status": "rewrite",
    "touch allowed.marker": "allow",
    "git push --force origin main": "deny",
    "git reset --hard": "ask",
    "touch ran.marker": "none",
}


@pytest.fixture(scope="module", params=FORMS)
def cursor(request, tmp_path_factory, policy_cache):
    """(sandbox, hook command) of `init --global --agent cursor` in each form."""
    world = make_world(
        tmp_path_factory.mktemp(f"cursor-{request.param}"),
        policy_cache,
        "cursor",
        request.param,
        cli=False,
    )
    hooks = json.loads((world.sandbox.home / ".cursor" / "hooks.json").read_text())
    (entry,) = hooks["hooks"]["beforeShellExecution"]
    yield world.sandbox, entry["command"]
    world.sandbox.stop_servers()


def call(cursor, payload: dict) -> dict:
    """Run the installed hook command on `payload` as Cursor does; its one JSON answer."""
    sandbox, command = cursor
    done = subprocess.run(
        ["/bin/sh", "-c", command],
        input=json.dumps(payload),
        text=True,
        capture_output=True,
        cwd=sandbox.root,
        env=sandbox.env(),
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1, done.stdout
    answer = json.loads(lines[0])
    assert isinstance(answer, dict) and set(answer) <= KEYS, answer
    assert answer.get("permission", "allow") in PERMISSIONS, answer
    assert all(
        isinstance(answer[k], str) for k in ("user_message", "agent_message") if k in answer
    ), answer
    return answer


def before_shell(work, command: str) -> dict:
    """A `beforeShellExecution` payload."""
    return {
        "conversation_id": "conv-e2e",
        "generation_id": "gen-e2e",
        "command": command,
        "cwd": str(work),
        "hook_event_name": "beforeShellExecution",
        "workspace_roots": [str(work)],
    }


def pre_tool_use(work, command: str) -> dict:
    """A generic `preToolUse` payload for the shell tool."""
    return {
        "conversation_id": "conv-e2e",
        "generation_id": "gen-e2e",
        "hook_event_name": "preToolUse",
        "tool_name": "Shell",
        "tool_input": {"command": command, "cwd": str(work)},
        "cwd": str(work),
        "workspace_roots": [str(work)],
    }


@pytest.mark.parametrize("command", COMMANDS)
def test_before_shell_execution_answers(cursor, command):
    """`beforeShellExecution` has no rewrite channel: never `updated_input`; a deny tells the
    agent why; an ask asks; everything else is `{}` or an allow."""
    work = cursor[0].repo(f"before-{COMMANDS[command]}")
    answer = call(cursor, before_shell(work, command))
    assert "updated_input" not in answer, answer
    verdict = COMMANDS[command]
    if verdict == "deny":
        assert answer["permission"] == "deny" and answer.get("agent_message"), answer
    elif verdict == "ask":
        assert answer["permission"] == "ask", answer
    elif verdict == "allow":
        assert answer["permission"] == "allow", answer
    else:
        assert answer == {}, answer


@pytest.mark.parametrize("command", list(COMMANDS))
def test_pre_tool_use_answers(cursor, command):
    """`preToolUse` carries rewrites in `updated_input` (the whole tool input, only the
    command changed, as every other agent needs), with a permission Cursor knows."""
    work = cursor[0].repo(f"pre-{COMMANDS[command]}")
    answer = call(cursor, pre_tool_use(work, command))
    verdict = COMMANDS[command]
    if verdict == "rewrite":
        assert answer["permission"] in PERMISSIONS, answer
        assert answer["updated_input"] == {"command": "rtk git status", "cwd": str(work)}, answer
    elif verdict == "deny":
        assert answer["permission"] == "deny" and answer.get("agent_message"), answer
        assert "updated_input" not in answer, answer
    elif verdict in ("ask", "allow"):
        assert answer["permission"] == verdict, answer
    else:
        assert answer == {}, answer
