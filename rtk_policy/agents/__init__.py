"""Agent hook protocols: one module per agent turns wire JSON into a `HookRequest` and a `Decision`
back into wire JSON (see `rtk_policy.agents.common` for the interface every module offers)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rtk_policy.agents.protocol import AgentProtocol

AGENTS = ("claude", "copilot", "gemini", "cursor", "codex")


def agent_module(name: str) -> AgentProtocol:
    """The protocol module of agent `name` (one of `AGENTS`), imported on first use."""
    if name == "claude":
        from rtk_policy.agents import claude

        return claude
    if name == "copilot":
        from rtk_policy.agents import copilot

        return copilot
    if name == "gemini":
        from rtk_policy.agents import gemini

        return gemini
    if name == "cursor":
        from rtk_policy.agents import cursor

        return cursor
    if name == "codex":
        from rtk_policy.agents import codex

        return codex
    raise ValueError(f"unknown agent {name!r}")


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
