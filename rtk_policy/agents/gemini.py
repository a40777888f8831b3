"""Gemini CLI `BeforeTool` (reference agent-hooks §1.8, rtk-behaviour §5.4).

Answers `{"decision": allow|ask_user|deny, "reason"?, "hookSpecificOutput": {"tool_input": {...}}?}`;
Gemini merges `hookSpecificOutput.tool_input` into the tool's arguments, so only `command` is sent.
A command with no opinion gets `{"decision":"ask_user"}`, as RTK answers; errors in `open` mode get
no output (Gemini's own flow decides). Another tool (`write_file`, `replace`, `read_file` …) gets
`deny` or `ask` (a forced confirmation) with the reason, and otherwise `{"decision":"allow"}`, which
does not skip Gemini's own policy check (reference agents-real).
"""

from __future__ import annotations

from typing import Any

from rtk_policy.agents import common
from rtk_policy.agents.common import HookRequest

NAME = "gemini"
SHELL_TOOLS = ("run_shell_command",)


def parse_request(payload: dict[str, Any]) -> HookRequest | None:
    """The request of a BeforeTool payload, or None for a non-shell tool or an empty command."""
    tool_name = common.text_field(payload, "tool_name")
    if tool_name not in SHELL_TOOLS:
        if not tool_name:
            return None
        fields = common.text_fields(payload, "session_id", "transcript_path")
        return common.tool_request(NAME, payload, tool_name, payload.get("tool_input"), **fields)
    fields = common.text_fields(payload, "session_id", "transcript_path")
    return common.new_request(NAME, payload, tool_name, payload.get("tool_input"), **fields)


def output(decision: str, reason: str = "", rewritten: str | None = None, warning: str = "") -> str:
    """The BeforeTool JSON line."""
    result: dict[str, Any] = {"decision": decision}
    if reason:
        result["reason"] = reason
    if rewritten is not None:
        result["hookSpecificOutput"] = {"tool_input": {"command": rewritten}}
    if warning:
        result["systemMessage"] = warning
    return common.dump(result)


def render(decision: Any, request: HookRequest) -> str | None:
    """The Gemini answer for `decision`."""
    if request.tool is not None:
        return render_tool(decision, request)
    verdict, warning = common.verdict_and_warning(decision)
    if verdict == "deny":
        return output("deny", common.deny_reason(decision), None, warning)
    rewritten = common.rewritten_of(decision, request)
    if verdict == "allow":
        return output("allow", "", rewritten, warning)
    if verdict == "ask":
        return output("ask_user", common.ask_reason(decision), rewritten, warning)
    return output("ask_user", "", rewritten, warning)


def render_tool(decision: Any, request: HookRequest) -> str | None:
    """`deny` or `ask` with the reason; `allow` for anything else (no `tool_input`, ever)."""
    verdict, reason = common.tool_verdict(decision)
    warning = common.warning_text(decision)
    if verdict in ("deny", "ask"):
        return output(verdict, reason, None, warning)
    return output("allow", "", None, warning)


def pass_through(payload: dict[str, Any]) -> str | None:
    """Gemini: a tool we do not judge is allowed, as RTK answers."""
    return output("allow")


def fail_answer(mode: str, message: str, request: HookRequest | None = None) -> str | None:
    """`open`: nothing; `closed`: ask_user; `deny`: deny — with the error as the reason."""
    verdict = common.fail_verdict(mode)
    if verdict is None:
        return None
    return output("ask_user" if verdict == "ask" else "deny", common.fail_reason(message, mode))
