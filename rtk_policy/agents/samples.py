"""A shell-tool payload in each agent's own shape, for `doctor` and `explain --agent`: what the
agent's CLI sends for one command (reference agents-real.md: the payload of each CLI)."""

from __future__ import annotations

import json
from typing import Any


def sample_payload(agent: str, command: str, cwd: str) -> dict[str, Any]:
    """The payload `agent` sends before running `command` in `cwd` (Claude Code's by default)."""
    if agent == "copilot":
        return {
            "sessionId": "sample",
            "timestamp": 0,
            "cwd": cwd,
            "toolName": "bash",
            "toolArgs": json.dumps({"command": command, "description": "sample"}),
        }
    if agent == "gemini":
        return {
            "session_id": "sample",
            "cwd": cwd,
            "hook_event_name": "BeforeTool",
            "tool_name": "run_shell_command",
            "tool_input": {"command": command, "description": "sample", "dir_path": "."},
        }
    if agent == "cursor":
        return {
            "conversation_id": "sample",
            "generation_id": "sample",
            "hook_event_name": "beforeShellExecution",
            "command": command,
            "cwd": cwd,
        }
    payload: dict[str, Any] = {
        "session_id": "sample",
        "transcript_path": "",
        "cwd": cwd,
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_use_id": "toolu_sample",
        "tool_input": {"command": command, "description": "sample"},
    }
    if agent == "codex":
        payload.update(turn_id="sample", model="sample", tool_input={"command": command})
    return payload
