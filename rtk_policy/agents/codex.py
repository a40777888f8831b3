"""OpenAI Codex CLI `PreToolUse` (reference agent-hooks §1.8, rtk-behaviour §5.6).

Claude-compatible JSON. Codex applies `updatedInput` only together with `permissionDecision: "allow"` and
runs its own approval afterwards, so every rewrite that is not denied or asked is sent as an allow (as RTK
does). `PreToolUse` on `Bash` is judged as a command; with an unknown `permission_mode` only a
deny is answered. Any other tool (`apply_patch`, whose patch names the files it changes, `mcp__…`)
is judged as a tool call: Codex enforces only a deny from a hook (an `ask` or a bare `allow` marks
the hook failed and the call runs), so an ask on a tool call is answered as a deny that says so.
"""

from __future__ import annotations

from typing import Any

from rtk_policy.agents import claude, common
from rtk_policy.agents.common import HookRequest

NAME = "codex"
SHELL_TOOLS = ("Bash", "bash")
PERMISSION_MODES = ("default", "acceptEdits", "plan", "dontAsk", "bypassPermissions")


def parse_request(payload: dict[str, Any]) -> HookRequest | None:
    """The request of a Codex PreToolUse payload on Bash, or None otherwise."""
    event = payload.get("hook_event_name", "PreToolUse")
    if event != "PreToolUse":
        return None
    tool_name = common.text_field(payload, "tool_name")
    if tool_name not in SHELL_TOOLS:
        fields = common.text_fields(payload, "session_id", "tool_use_id", "permission_mode")
        return common.tool_request(NAME, payload, tool_name, payload.get("tool_input"), **fields)
    return claude.parse_compatible(payload, NAME)


def render(decision: Any, request: HookRequest) -> str | None:
    """The Codex answer for `decision`."""
    if request.tool is not None:
        return render_tool(decision, request)
    verdict, warning = common.verdict_and_warning(decision)
    if verdict == "deny":
        return claude.output("deny", common.deny_reason(decision), None, warning)
    if request.permission_mode not in PERMISSION_MODES:
        return None  # a mode we do not know: stay out of the way (RTK: skip)
    rewritten = common.rewritten_of(decision, request)
    updated = common.updated_input(request, rewritten)
    if verdict == "ask":
        return claude.output("ask", common.ask_reason(decision), updated, warning)
    if verdict == "allow" or updated is not None:
        return claude.output("allow", common.allow_reason(decision, rewritten), updated, warning)
    return claude.output(None, None, None, warning)


def render_tool(decision: Any, request: HookRequest) -> str | None:
    """A deny (an ask too, said to be one); nothing otherwise (Codex takes no other answer)."""
    verdict, reason = common.tool_verdict(decision)
    if verdict == "deny":
        return claude.output("deny", reason, None)
    if verdict == "ask":
        return claude.output("deny", common.unaskable_reason(reason), None)
    return None


def pass_through(payload: dict[str, Any]) -> str | None:
    """Codex: a tool we do not judge gets no output."""
    return None


def fail_answer(mode: str, message: str, request: HookRequest | None = None) -> str | None:
    """Same answers as Claude Code."""
    return claude.fail_answer(mode, message, request)
