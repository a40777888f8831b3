"""Claude Code `PreToolUse` (DESIGN §2; reference agent-hooks §1.2–§1.4).

| verdict | stdout |
|---|---|
| allow | `permissionDecision: "allow"` (+ `updatedInput` when rewritten) |
| ask | `permissionDecision: "ask"` + reason (+ `updatedInput`) |
| none, rewritten | `updatedInput` + reason "RTK auto-rewrite", no `permissionDecision` |
| none, not rewritten | nothing (or only a `systemMessage` for warnings) |
| deny | `permissionDecision: "deny"` + a reason for the agent |

Another tool (Write, Edit, Read …) gets the same answers without `updatedInput`: deny, ask, allow
or nothing.
"""

from __future__ import annotations

from rtk_policy.util import record
from rtk_policy.agents import common
from rtk_policy.agents.common import HookRequest

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~4 ms on a cold hook)
if TYPE_CHECKING:
    from typing import Any

NAME = "claude"
#: Tool names carrying a bash command. An absent tool_name is taken as Bash (the matcher filtered it).
SHELL_TOOLS = ("Bash",)


#: What Claude Code 2.1.328 does with each answer (agents-real.md; `common.notes`).
NOTES = {
    "ask": "Claude Code asks the user; headless (-p) it cannot ask and refuses the command",
    "ask+rewrite": "Claude Code asks the user about the rewritten command; headless (-p) it"
    " refuses it",
    "none": "no output: Claude Code's own permission flow decides",
    "none+rewrite": "no decision: Claude Code's own permission rules decide on the rewritten"
    " command (outside its read-only set it needs approval)",
}


def parse_request(payload: dict[str, Any], agent: str = NAME) -> HookRequest | None:
    """The request of a Claude-shaped payload: a Bash call, or another tool's call."""
    tool_name = common.text_field(payload, "tool_name")
    if "tool_name" in payload and tool_name not in SHELL_TOOLS:
        fields = common.text_fields(payload, "session_id", "tool_use_id", "permission_mode")
        return common.tool_request(agent, payload, tool_name, payload.get("tool_input"), **fields)
    fields = common.text_fields(
        payload, "session_id", "tool_use_id", "permission_mode", "transcript_path"
    )
    return common.new_request(
        agent, payload, tool_name or "Bash", payload.get("tool_input"), **fields
    )


def parse_compatible(payload: dict[str, Any], agent: str, **fields: str) -> HookRequest | None:
    """Another agent's Claude-compatible payload (its shell tool name already checked), parsed as
    a Claude `Bash` call that keeps the payload's own `tool_name` and sets `fields` (variant)."""
    request = parse_request({**payload, "tool_name": "Bash"}, agent=agent)
    if request is None or request.tool is not None:
        return request
    return record.evolve(request, tool_name=common.text_field(payload, "tool_name"), **fields)


def output(
    decision: str | None,
    reason: str | None,
    updated_input: dict[str, Any] | None,
    system_message: str = "",
) -> str | None:
    """The PreToolUse JSON line for the given parts (None when there is nothing to say)."""
    specific: dict[str, Any] = {
        "hookEventName": "PreToolUse",
        **common.permission_fields(decision, reason, updated_input, "updatedInput"),
    }
    result: dict[str, Any] = {}
    if len(specific) > 1:
        result["hookSpecificOutput"] = specific
    if system_message:
        result["systemMessage"] = system_message
    return common.dump(result) if result else None


def render(decision: Any, request: HookRequest) -> str | None:
    """The Claude Code answer for `decision`."""
    if request.tool is not None:
        return render_tool(decision, request)
    verdict, warning = common.verdict_and_warning(decision)
    if verdict == "deny":
        return output("deny", common.deny_reason(decision), None, warning)
    rewritten = common.rewritten_of(decision, request)
    updated = common.updated_input(request, rewritten)
    if verdict == "allow":
        return output("allow", common.allow_reason(decision, rewritten), updated, warning)
    if verdict == "ask":
        return output("ask", common.ask_reason(decision), updated, warning)
    reason = common.REWRITE_REASON if updated is not None else None
    return output(None, reason, updated, warning)


def render_tool(decision: Any, request: HookRequest) -> str | None:
    """The answer for a tool that is not Bash: its verdict and reason, never `updatedInput`."""
    verdict, reason = common.tool_verdict(decision)
    if verdict == "none":
        return output(None, None, None, common.warning_text(decision))
    return output(verdict, reason, None, common.warning_text(decision))


def pass_through(payload: dict[str, Any]) -> str | None:
    """Claude Code: a tool we do not judge gets no output."""
    return None


def fail_answer(mode: str, message: str, request: HookRequest | None = None) -> str | None:
    """`open`: nothing; `closed`: ask; `deny`: deny — each with the error as the reason."""
    verdict = common.fail_verdict(mode)
    return output(verdict, common.fail_reason(message, mode), None) if verdict else None
