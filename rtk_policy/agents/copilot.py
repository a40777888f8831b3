"""GitHub Copilot (reference agent-hooks §1.8, rtk-behaviour §5.3). Three dialects:

- `claude`: the Claude-compatible payload (`tool_name` Bash/bash/runTerminalCommand/run_in_terminal,
  `tool_input.command`) — answered exactly as Claude Code is;
- `cli`: Copilot CLI camelCase (`toolName` bash/powershell, `toolArgs` a JSON string or object) — a flat
  `{permissionDecision, permissionDecisionReason, modifiedArgs}` object;
- `ide`: JetBrains Copilot (`toolName` run_in_terminal, camelCase) honours only deny, so a rewrite is
  answered with a deny that tells the agent to re-run the rewritten command, an ask with nothing.

Another tool (`create`, `edit`, `view`, `apply_patch` …: every tool reaches a `preToolUse` entry
without a matcher) gets deny, ask or nothing in its dialect; where only a deny counts (`ide`) an ask
is a deny that says so.
"""

from __future__ import annotations

import json
from typing import Any

from rtk_policy.agents import claude, common
from rtk_policy.agents.common import BadRequest, HookRequest

NAME = "copilot"
CLAUDE_SHAPE_TOOLS = ("Bash", "bash", "runTerminalCommand", "run_in_terminal")
CLI_TOOLS = ("bash", "powershell")
IDE_TOOLS = ("run_in_terminal",)
#: What Copilot CLI 1.0.102 does with each answer (`common.notes`).
NOTES = {
    "ask": "Copilot CLI asks the user; headless (-p) it cannot ask and denies the command",
    "none": "no output: Copilot's own permission flow decides",
    "none+rewrite": "Copilot runs modifiedArgs (every field kept) under its own permission flow",
    "allow+rewrite": "Copilot runs modifiedArgs (every field kept)",
}
NOTES["ask+rewrite"] = NOTES["ask"]


def _loose_args(payload: dict[str, Any]) -> dict[str, Any]:
    """`toolArgs` of a tool that is not a shell command ({} when it is not a JSON object)."""
    try:
        return _tool_args(payload)
    except BadRequest:
        return {}


def _tool_args(payload: dict[str, Any]) -> dict[str, Any]:
    args = payload.get("toolArgs")
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError as error:
            raise BadRequest(f"toolArgs is not valid JSON: {error}") from error
    if not isinstance(args, dict):
        raise BadRequest("toolArgs is missing or not a JSON object")
    return args


def parse_request(payload: dict[str, Any]) -> HookRequest | None:
    """The request of either Copilot payload shape, or None for a non-shell tool."""
    session = common.first_text(payload, "sessionId", "session_id")
    if "toolName" not in payload and "toolArgs" not in payload:
        tool_name = common.text_field(payload, "tool_name")
        if tool_name not in CLAUDE_SHAPE_TOOLS:
            if not tool_name:
                return None
            tool_input = payload.get("tool_input")
            return common.tool_request(NAME, payload, tool_name, tool_input, session_id=session,
                                       variant="claude")  # fmt: skip
        return claude.parse_compatible(payload, NAME, variant="claude")
    tool_name = common.text_field(payload, "toolName")
    if tool_name not in CLI_TOOLS + IDE_TOOLS:
        if not tool_name:
            return None
        return common.tool_request(NAME, payload, tool_name, _loose_args(payload),
                                   session_id=session, variant="cli")  # fmt: skip
    return common.new_request(
        NAME,
        payload,
        tool_name,
        _tool_args(payload),
        session_id=common.first_text(payload, "sessionId", "session_id"),
        variant="ide" if tool_name in IDE_TOOLS else "cli",
    )


def flat(decision: str | None, reason: str | None, modified: dict[str, Any] | None) -> str | None:
    """The camelCase answer: `permissionDecisionReason`, `modifiedArgs`, `permissionDecision`."""
    result = common.permission_fields(decision, reason, modified, "modifiedArgs")
    return common.dump(result) if result else None


def render(decision: Any, request: HookRequest) -> str | None:
    """The Copilot answer for `decision`, in the dialect the request came in."""
    if request.variant == "claude":
        return claude.render(decision, request)
    if request.tool is not None:
        return render_tool(decision, request)
    verdict = common.verdict_of(decision)
    if verdict == "deny":
        return flat("deny", common.deny_reason(decision), None)
    rewritten = common.rewritten_of(decision, request)
    if request.variant == "ide":
        if verdict == "ask" or rewritten is None:
            return None
        message = f"RTK token optimization: re-run this command as `{rewritten}` instead."
        return flat("deny", message, None)
    modified = common.updated_input(request, rewritten)
    if verdict == "allow":
        return flat("allow", common.allow_reason(decision, rewritten), modified)
    if verdict == "ask":
        return flat("ask", common.ask_reason(decision), modified)
    return flat(None, common.REWRITE_REASON if modified is not None else None, modified)


def render_tool(decision: Any, request: HookRequest) -> str | None:
    """Deny, ask or allow in the flat shape (an ask is a deny where only denies count)."""
    verdict, reason = common.tool_verdict(decision)
    if verdict == "ask" and request.variant == "ide":
        return flat("deny", common.unaskable_reason(reason), None)
    return flat(verdict, reason, None) if verdict != "none" else None


def pass_through(payload: dict[str, Any]) -> str | None:
    """Copilot: a tool we do not judge gets no output."""
    return None


def fail_answer(mode: str, message: str, request: HookRequest | None = None) -> str | None:
    """`open`: nothing; `closed`: ask; `deny`: deny. The flat shape unless the request was Claude-shaped."""
    if request is not None and request.variant == "claude":
        return claude.fail_answer(mode, message, request)
    verdict = common.fail_verdict(mode)
    if verdict is None or (verdict == "ask" and request is not None and request.variant == "ide"):
        return None  # open, or an ask the IDE would ignore (it honours deny only)
    return flat(verdict, common.fail_reason(message, mode), None)
