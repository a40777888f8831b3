"""GitHub Copilot (reference agent-hooks §1.8, rtk-behaviour §5.3). Three dialects:

- `claude`: the Claude-compatible payload (`tool_name` Bash/bash/runTerminalCommand/run_in_terminal,
  `tool_input.command`) — answered exactly as Claude Code is;
- `cli`: Copilot CLI camelCase (`toolName` bash/powershell, `toolArgs` a JSON string or object) — a flat
  `{permissionDecision, permissionDecisionReason, modifiedArgs}` object;
- `ide`: JetBrains Copilot (`toolName` run_in_terminal, camelCase) honours only deny, so a rewrite is
  answered with a deny that tells the agent to re-run the rewritten command, an ask with nothing.
"""

from __future__ import annotations

import json
from typing import Any

import attrs

from rtk_policy.agents import claude
from rtk_policy.agents.common import (
    REWRITE_REASON,
    BadRequest,
    HookRequest,
    allow_reason,
    ask_reason,
    command_of,
    deny_reason,
    dump,
    fail_reason,
    rewritten_of,
    text_field,
    with_command,
)

NAME = "copilot"
CLAUDE_SHAPE_TOOLS = ("Bash", "bash", "runTerminalCommand", "run_in_terminal")
CLI_TOOLS = ("bash", "powershell")
IDE_TOOLS = ("run_in_terminal",)


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
    if "toolName" not in payload and "toolArgs" not in payload:
        if text_field(payload, "tool_name") not in CLAUDE_SHAPE_TOOLS:
            return None
        request = claude.parse_request({**payload, "tool_name": "Bash"}, agent=NAME)
        if request is None:
            return None
        return attrs.evolve(request, tool_name=text_field(payload, "tool_name"), variant="claude")
    tool_name = text_field(payload, "toolName")
    if tool_name not in CLI_TOOLS + IDE_TOOLS:
        return None
    args = _tool_args(payload)
    command = command_of(args)
    if not command.strip():
        return None
    return HookRequest(
        agent=NAME,
        command=command,
        tool_name=tool_name,
        tool_input=args,
        cwd=text_field(payload, "cwd"),
        session_id=text_field(payload, "sessionId") or text_field(payload, "session_id"),
        variant="ide" if tool_name in IDE_TOOLS else "cli",
        raw=payload,
    )


def flat(decision: str | None, reason: str | None, modified: dict[str, Any] | None) -> str | None:
    """The camelCase answer: `permissionDecisionReason`, `modifiedArgs`, `permissionDecision`."""
    result: dict[str, Any] = {}
    if reason:
        result["permissionDecisionReason"] = reason
    if modified is not None:
        result["modifiedArgs"] = modified
    if decision:
        result["permissionDecision"] = decision
    return dump(result) if result else None


def render(decision: Any, request: HookRequest) -> str | None:
    """The Copilot answer for `decision`, in the dialect the request came in."""
    if request.variant == "claude":
        return claude.render(decision, request)
    verdict = getattr(decision, "verdict", "none")
    if verdict == "deny":
        return flat("deny", deny_reason(decision), None)
    rewritten = rewritten_of(decision, request)
    if request.variant == "ide":
        if verdict == "ask" or rewritten is None:
            return None
        message = f"RTK token optimization: re-run this command as `{rewritten}` instead."
        return flat("deny", message, None)
    modified = with_command(request.tool_input, rewritten) if rewritten is not None else None
    if verdict == "allow":
        return flat("allow", allow_reason(decision, rewritten), modified)
    if verdict == "ask":
        return flat("ask", ask_reason(decision), modified)
    return flat(None, REWRITE_REASON if modified is not None else None, modified)


def pass_through(payload: dict[str, Any]) -> str | None:
    """Copilot: a tool we do not judge gets no output."""
    return None


def fail_answer(mode: str, message: str, request: HookRequest | None = None) -> str | None:
    """`open`: nothing; `closed`: ask; `deny`: deny. The flat shape unless the request was Claude-shaped."""
    if request is not None and request.variant == "claude":
        return claude.fail_answer(mode, message, request)
    if mode not in ("closed", "deny"):
        return None
    if mode == "closed" and request is not None and request.variant == "ide":
        return None  # the IDE honours only deny
    return flat("ask" if mode == "closed" else "deny", fail_reason(message, mode), None)
