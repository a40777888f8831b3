"""Agent hook protocols: one module per agent turns wire JSON into a `HookRequest` and a `Decision`
back into wire JSON (see `rtk_policy.agents.common` for the interface every module offers)."""

from __future__ import annotations

import importlib
from types import ModuleType

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~4 ms on a cold hook)
if TYPE_CHECKING:
    from typing import Any

AGENTS = ("claude", "copilot", "gemini", "cursor", "codex")


def agent_module(name: str) -> ModuleType:
    """The protocol module of agent `name` (one of `AGENTS`)."""
    if name not in AGENTS:
        raise ValueError(f"unknown agent {name!r}")
    return importlib.import_module(f"rtk_policy.agents.{name}")


def detect_agent(payload: Any) -> str:
    """Guess the agent from a payload's shape; Claude Code when nothing else fits."""
    if not isinstance(payload, dict):
        return "claude"
    if "toolName" in payload or "toolArgs" in payload:
        return "copilot"
    event = payload.get("hook_event_name")
    tool_name = payload.get("tool_name")
    if event == "BeforeTool" or tool_name == "run_shell_command":
        return "gemini"
    if (
        event == "beforeShellExecution"
        or "cursor_version" in payload
        or "conversation_id" in payload
    ):
        return "cursor"
    if "turn_id" in payload:
        return "codex"
    if tool_name in ("runTerminalCommand", "run_in_terminal"):
        return "copilot"
    return "claude"
