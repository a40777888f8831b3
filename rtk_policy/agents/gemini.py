"""Gemini CLI `BeforeTool` (reference agent-hooks §1.8, agents-real §Gemini).

What Gemini CLI 0.61 does with an answer (`packages/core/src/hooks/types.ts`,
`scheduler/hook-utils.ts`, `scheduler/scheduler.ts`): `decision` `"deny"` (or `"block"`) blocks and
shows `reason` to the model; `"ask"` forces a confirmation (headless: not run); any other decision
(`"allow"`, the policy engine's `"ask_user"`) is no decision at all, and Gemini's own policy check
then runs on the command. `hookSpecificOutput.tool_input` **replaces** the tool's arguments
(`tool.build(modifiedInput)`), so a rewrite carries the whole tool input, only `command` changed.

| verdict | stdout |
|---|---|
| deny | `{"decision": "deny", "reason": …}` |
| ask | `{"decision": "ask", "reason": …, "systemMessage": …}` (+ `tool_input` when rewritten) |
| allow | `{"decision": "allow"}` (+ `tool_input` when rewritten); Gemini's policy still applies |
| none, rewritten | `{"hookSpecificOutput": {"tool_input": …}}` only |
| none, not rewritten | nothing |

Another tool (`write_file`, `replace`, `read_file` …) is judged as a tool call: `deny` or `ask` with
the reason, otherwise `{"decision":"allow"}` (no decision for Gemini), never `tool_input`.
"""

from __future__ import annotations

from typing import Any

from rtk_policy.agents import common
from rtk_policy.agents.common import HookRequest

NAME = "gemini"
SHELL_TOOLS = ("run_shell_command",)


#: What Gemini CLI 0.61 does with each answer (`common.notes`).
NOTES = {
    "ask": "Gemini asks the user (headless: the command is not run)",
    "allow": "a hook allow does not skip Gemini's own policy check",
    "none": "no output: Gemini's own policy decides",
    "none+rewrite": "Gemini runs the rewritten tool input (every field kept) if its own policy"
    " allows it",
}
NOTES["ask+rewrite"] = NOTES["ask"]
NOTES["allow+rewrite"] = NOTES["none+rewrite"]


def parse_request(payload: dict[str, Any]) -> HookRequest | None:
    """The request of a BeforeTool payload, or None for a non-shell tool or an empty command."""
    tool_name = common.text_field(payload, "tool_name")
    fields = common.text_fields(payload, "session_id", "transcript_path")
    if tool_name not in SHELL_TOOLS:
        if not tool_name:
            return None
        return common.tool_request(NAME, payload, tool_name, payload.get("tool_input"), **fields)
    return common.new_request(NAME, payload, tool_name, payload.get("tool_input"), **fields)


def output(
    decision: str | None,
    reason: str = "",
    tool_input: dict[str, Any] | None = None,
    system_message: str = "",
) -> str | None:
    """The BeforeTool JSON line (None when there is nothing to say)."""
    result: dict[str, Any] = {}
    if decision:
        result["decision"] = decision
    if reason:
        result["reason"] = reason
    if tool_input is not None:
        result["hookSpecificOutput"] = {"tool_input": tool_input}
    if system_message:
        result["systemMessage"] = system_message
    return common.dump(result) if result else None


def render(decision: Any, request: HookRequest) -> str | None:
    """The Gemini answer for `decision`."""
    if request.tool is not None:
        return render_tool(decision, request)
    verdict, warning = common.verdict_and_warning(decision)
    if verdict == "deny":
        return output("deny", common.deny_reason(decision), None, warning)
    tool_input = common.updated_input(request, common.rewritten_of(decision, request))
    if verdict == "ask":
        reason = common.ask_reason(decision)  # Gemini shows the systemMessage in its confirmation
        return output("ask", reason, tool_input, "; ".join(filter(None, (reason, warning))))
    return output("allow" if verdict == "allow" else None, "", tool_input, warning)


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
    """`open`: nothing; `closed`: ask; `deny`: deny — with the error as the reason."""
    verdict = common.fail_verdict(mode)
    if verdict is None:
        return None
    reason = common.fail_reason(message, mode)
    return output(verdict, reason, None, reason if verdict == "ask" else "")
