"""Cursor (reference agent-hooks §1.8, rtk-behaviour §5.5).

Two events: `beforeShellExecution` (top-level `command`; no rewrite channel) and the generic
`preToolUse` (`tool_input.command`; rewrites go in `updated_input`). Answers `{"continue": true,
"permission": allow|ask|deny, "user_message"?, "agent_message"?, "updated_input"?}`
(`updated_input`: the whole tool input, only `command` changed); no opinion is `{}` (Cursor treats
invalid output from a permission hook as a block, so we always print). Checked against Cursor's
documented hook schema only: Cursor has no CLI that runs offline, so no end-to-end test drives it.
Another tool's `preToolUse` (Write, Delete, Read …) and `beforeReadFile` (`file_path`) are tool
calls: deny, ask or allow, never `updated_input`; `beforeReadFile` takes allow or deny only, so an
ask there is a deny that says so. The events after the fact (`afterFileEdit` …) are not judged.
"""

from __future__ import annotations

from typing import Any

from rtk_policy.agents import common
from rtk_policy.agents.common import HookRequest

NAME = "cursor"
NO_OPINION = "{}"
SHELL_TOOLS = ("Bash", "Shell", "bash", "shell", "run_terminal_cmd")
READ_EVENT = "beforeReadFile"
#: events that report what already happened: nothing to decide
AFTER_EVENTS = ("afterFileEdit", "afterShellExecution", "afterMCPExecution", "afterAgentResponse",
                "afterAgentThought", "postToolUse", "stop", "beforeSubmitPrompt", "sessionStart",
                "sessionEnd")  # fmt: skip
#: What Cursor does with each answer, by its documented schema (`common.notes`).
NOTES = {
    "none+rewrite": "Cursor needs a permission with updated_input, so a rewrite asks (as RTK"
    " does); beforeShellExecution has no rewrite channel at all",
    "*": "checked against Cursor's documented hook schema only: it has no CLI that runs offline",
}


def parse_request(payload: dict[str, Any]) -> HookRequest | None:
    """The request of a Cursor payload: a shell command, another tool's call, or None (an empty
    command, an event after the fact)."""
    event = common.text_field(payload, "hook_event_name")
    ids = {
        "session_id": common.first_text(payload, "conversation_id", "session_id"),
        "tool_use_id": common.text_field(payload, "generation_id"),
    }
    if event in AFTER_EVENTS:
        return None
    if event == READ_EVENT:
        tool_input = {"file_path": common.text_field(payload, "file_path")}
        return common.tool_request(NAME, payload, "Read", tool_input, variant=READ_EVENT, **ids)
    if "tool_input" in payload or "tool_name" in payload:
        tool_name = common.text_field(payload, "tool_name")
        if tool_name and tool_name not in SHELL_TOOLS:
            tool_input = payload.get("tool_input")
            return common.tool_request(NAME, payload, tool_name, tool_input, variant="preToolUse",
                                       **ids)  # fmt: skip
        tool_input, variant = payload.get("tool_input"), "preToolUse"
    else:
        tool_input = {"command": payload.get("command")}
        tool_name, variant = "Shell", "beforeShellExecution"
    return common.new_request(
        NAME,
        payload,
        tool_name or "Shell",
        tool_input,
        session_id=common.first_text(payload, "conversation_id", "session_id"),
        tool_use_id=common.text_field(payload, "generation_id"),
        variant=variant,
    )


def output(
    permission: str, user: str = "", agent: str = "", updated: dict[str, Any] | None = None
) -> str:
    """The Cursor JSON line (`updated`: the tool input to run instead)."""
    result: dict[str, Any] = {"continue": True, "permission": permission}
    if user:
        result["user_message"] = user
    if agent:
        result["agent_message"] = agent
    if updated is not None:
        result["updated_input"] = updated
    return common.dump(result)


def render(decision: Any, request: HookRequest) -> str | None:
    """The Cursor answer for `decision`."""
    if request.tool is not None:
        return render_tool(decision, request)
    verdict = common.verdict_of(decision)
    if verdict == "deny":
        reason = common.deny_reason(decision)
        return output("deny", reason, reason)
    rewritten = common.rewritten_of(decision, request) if request.variant == "preToolUse" else None
    updated = common.updated_input(request, rewritten)
    if verdict == "allow":
        return output("allow", "", "", updated)
    if verdict == "ask":
        return output("ask", common.ask_reason(decision), "", updated)
    if updated is not None:  # Cursor needs a permission with updated_input: ask, as RTK does
        return output("ask", "", "", updated)
    return NO_OPINION


def render_tool(decision: Any, request: HookRequest) -> str | None:
    """`permission` deny, ask or allow with the reason; `{}` for no opinion."""
    verdict, reason = common.tool_verdict(decision)
    if verdict == "ask" and request.variant == READ_EVENT:
        verdict, reason = "deny", common.unaskable_reason(reason)
    if verdict == "none":
        return NO_OPINION
    user = reason if verdict != "allow" else ""
    return output(verdict, user, reason if verdict == "deny" else "")


def pass_through(payload: dict[str, Any]) -> str | None:
    """Cursor: a tool we do not judge gets `{}`."""
    return NO_OPINION


def fail_answer(mode: str, message: str, request: HookRequest | None = None) -> str | None:
    """`open`: `{}`; `closed`: ask; `deny`: deny — with the error as the message."""
    verdict = common.fail_verdict(mode)
    if verdict is None:
        return NO_OPINION
    reason = common.fail_reason(message, mode)
    return output(verdict, reason, reason)
