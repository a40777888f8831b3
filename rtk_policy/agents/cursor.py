"""Cursor (reference agent-hooks §1.8, rtk-behaviour §5.5).

Two events: `beforeShellExecution` (top-level `command`; no rewrite channel) and the generic `preToolUse`
(`tool_input.command`; rewrites go in `updated_input`). Answers
`{"continue": true, "permission": allow|ask|deny, "user_message"?, "agent_message"?, "updated_input"?}`;
no opinion is `{}` (Cursor treats invalid output from a permission hook as a block, so we always print).
"""

from __future__ import annotations

from typing import Any

from rtk_policy.agents.common import (
    HookRequest,
    ask_reason,
    command_of,
    deny_reason,
    dump,
    fail_reason,
    rewritten_of,
    text_field,
)

NAME = "cursor"
NO_OPINION = "{}"
SHELL_TOOLS = ("Bash", "Shell", "bash", "shell", "run_terminal_cmd")


def parse_request(payload: dict[str, Any]) -> HookRequest | None:
    """The request of a Cursor payload, or None for a non-shell tool or an empty command."""
    if "tool_input" in payload or "tool_name" in payload:
        tool_name = text_field(payload, "tool_name")
        if tool_name and tool_name not in SHELL_TOOLS:
            return None
        tool_input = payload.get("tool_input")
        command = command_of(tool_input)
        variant = "preToolUse"
    else:
        tool_input = {"command": payload.get("command")}
        command = command_of(tool_input)
        tool_name, variant = "Shell", "beforeShellExecution"
    if not command.strip():
        return None
    return HookRequest(
        agent=NAME,
        command=command,
        tool_name=tool_name or "Shell",
        tool_input=tool_input,  # type: ignore[arg-type]
        cwd=text_field(payload, "cwd"),
        session_id=text_field(payload, "conversation_id") or text_field(payload, "session_id"),
        tool_use_id=text_field(payload, "generation_id"),
        variant=variant,
        raw=payload,
    )


def output(permission: str, user: str = "", agent: str = "", rewritten: str | None = None) -> str:
    """The Cursor JSON line."""
    result: dict[str, Any] = {"continue": True, "permission": permission}
    if user:
        result["user_message"] = user
    if agent:
        result["agent_message"] = agent
    if rewritten is not None:
        result["updated_input"] = {"command": rewritten}
    return dump(result)


def render(decision: Any, request: HookRequest) -> str | None:
    """The Cursor answer for `decision`."""
    verdict = getattr(decision, "verdict", "none")
    if verdict == "deny":
        reason = deny_reason(decision)
        return output("deny", reason, reason)
    rewritten = rewritten_of(decision, request) if request.variant == "preToolUse" else None
    if verdict == "allow":
        return output("allow", "", "", rewritten)
    if verdict == "ask":
        return output("ask", ask_reason(decision), "", rewritten)
    if rewritten is not None:  # Cursor needs a permission with updated_input: ask, as RTK does
        return output("ask", "", "", rewritten)
    return NO_OPINION


def pass_through(payload: dict[str, Any]) -> str | None:
    """Cursor: a tool we do not judge gets `{}`."""
    return NO_OPINION


def fail_answer(mode: str, message: str, request: HookRequest | None = None) -> str | None:
    """`open`: `{}`; `closed`: ask; `deny`: deny — with the error as the message."""
    if mode in ("closed", "deny"):
        reason = fail_reason(message, mode)
        return output("ask" if mode == "closed" else "deny", reason, reason)
    return NO_OPINION
