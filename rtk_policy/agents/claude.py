"""Claude Code `PreToolUse` (DESIGN §2; reference agent-hooks §1.2–§1.4).

| verdict | stdout |
|---|---|
| allow | `permissionDecision: "allow"` (+ `updatedInput` when rewritten) |
| ask | `permissionDecision: "ask"` + reason (+ `updatedInput`) |
| none, rewritten | `updatedInput` + reason "RTK auto-rewrite", no `permissionDecision` |
| none, not rewritten | nothing (or only a `systemMessage` for warnings) |
| deny | `permissionDecision: "deny"` + a reason for the agent |
"""

from __future__ import annotations

from typing import Any

from rtk_policy.agents.common import (
    REWRITE_REASON,
    HookRequest,
    allow_reason,
    ask_reason,
    command_of,
    deny_reason,
    dump,
    fail_reason,
    rewritten_of,
    text_field,
    warning_text,
    with_command,
)

NAME = "claude"
#: Tool names carrying a bash command. An absent tool_name is taken as Bash (the matcher filtered it).
SHELL_TOOLS = ("Bash",)


def parse_request(payload: dict[str, Any], agent: str = NAME) -> HookRequest | None:
    """The request of a Claude-shaped payload, or None for a non-shell tool."""
    tool_name = text_field(payload, "tool_name")
    if "tool_name" in payload and tool_name not in SHELL_TOOLS:
        return None
    tool_input = payload.get("tool_input")
    command = command_of(tool_input)
    if not command.strip():
        return None
    return HookRequest(
        agent=agent,
        command=command,
        tool_name=tool_name or "Bash",
        tool_input=tool_input,  # type: ignore[arg-type]
        cwd=text_field(payload, "cwd"),
        session_id=text_field(payload, "session_id"),
        tool_use_id=text_field(payload, "tool_use_id"),
        permission_mode=text_field(payload, "permission_mode"),
        transcript_path=text_field(payload, "transcript_path"),
        raw=payload,
    )


def output(
    decision: str | None,
    reason: str | None,
    updated_input: dict[str, Any] | None,
    system_message: str = "",
) -> str | None:
    """The PreToolUse JSON line for the given parts (None when there is nothing to say)."""
    specific: dict[str, Any] = {"hookEventName": "PreToolUse"}
    if reason:
        specific["permissionDecisionReason"] = reason
    if updated_input is not None:
        specific["updatedInput"] = updated_input
    if decision:
        specific["permissionDecision"] = decision
    result: dict[str, Any] = {}
    if len(specific) > 1:
        result["hookSpecificOutput"] = specific
    if system_message:
        result["systemMessage"] = system_message
    return dump(result) if result else None


def render(decision: Any, request: HookRequest) -> str | None:
    """The Claude Code answer for `decision`."""
    verdict = getattr(decision, "verdict", "none")
    warning = warning_text(decision)
    if verdict == "deny":
        return output("deny", deny_reason(decision), None, warning)
    rewritten = rewritten_of(decision, request)
    updated = with_command(request.tool_input, rewritten) if rewritten is not None else None
    if verdict == "allow":
        return output("allow", allow_reason(decision, rewritten), updated, warning)
    if verdict == "ask":
        return output("ask", ask_reason(decision), updated, warning)
    reason = REWRITE_REASON if updated is not None else None
    return output(None, reason, updated, warning)


def pass_through(payload: dict[str, Any]) -> str | None:
    """Claude Code: a tool we do not judge gets no output."""
    return None


def fail_answer(mode: str, message: str, request: HookRequest | None = None) -> str | None:
    """`open`: nothing; `closed`: ask; `deny`: deny — each with the error as the reason."""
    if mode in ("closed", "deny"):
        return output("ask" if mode == "closed" else "deny", fail_reason(message, mode), None)
    return None
