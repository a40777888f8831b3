"""OpenAI Codex CLI `PreToolUse` (reference agent-hooks §1.8, agents-real §Codex).

Claude-compatible JSON, but Codex 0.169 (`codex-rs/hooks/src/engine/output_parser.rs`) enforces only
part of it: `permissionDecision: "deny"` with a reason blocks; `"allow"` is accepted only together
with `updatedInput` (the rewrite runs, Codex's own approval still applies); `"ask"`, and `"allow"`
without a rewrite, are "unsupported": the hook is marked failed and **the command runs**. So:

| verdict | stdout |
|---|---|
| deny | `permissionDecision: "deny"` + the reason |
| ask | `permissionDecision: "deny"`, the reason telling the model the user must approve or run it |
| allow or none, rewritten | `permissionDecision: "allow"` + `updatedInput` (every field kept) |
| allow or none, not rewritten | nothing (or only a `systemMessage` for warnings) |

Only `PreToolUse` is judged: `Bash` as a command (with a `permission_mode` we do not know nothing
is rewritten); any other tool (`apply_patch`, whose patch names the files it changes, `mcp__…`) as a
tool call, where Codex likewise enforces only a deny, so an ask is a deny that says so.
"""

from __future__ import annotations

from typing import Any

from rtk_policy.agents import claude, common
from rtk_policy.agents.common import HookRequest

NAME = "codex"
SHELL_TOOLS = ("Bash", "bash")
PERMISSION_MODES = ("default", "acceptEdits", "plan", "dontAsk", "bypassPermissions")
#: Said to the model when a policy asks: a Codex hook has no way to ask the user.
CANNOT_ASK = (
    "a Codex hook cannot ask for approval, so rtk-policy blocked it: do not retry it or a variant;"
    " ask the user to approve it or to run it themselves"
)


#: What Codex 0.169 does with each answer (`common.notes`).
NOTES = {
    "ask": "Codex cannot ask from a hook (an ask would be ignored and the command run): sent as"
    " a deny telling the model the user must approve or run it",
    "allow": "Codex rejects an allow without a rewrite: no output, its own approval policy"
    " decides",
    "none": "no output: Codex's own approval policy decides",
    "*": "Codex runs a user hook only once it is trusted in /hooks (`rtk-policy doctor` says"
    " whether it is)",
}
NOTES["ask+rewrite"] = NOTES["ask"]
NOTES["allow+rewrite"] = NOTES["none+rewrite"] = (
    "Codex runs the rewritten command (allow + updatedInput); its own approval policy still"
    " applies"
)


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


def needs_approval(reason: str) -> str:
    """The deny reason standing for an ask: why it needs approval, and what the model should do."""
    return f"this command needs the user's approval ({reason}); {CANNOT_ASK}"


def render(decision: Any, request: HookRequest) -> str | None:
    """The Codex answer for `decision`."""
    if request.tool is not None:
        return render_tool(decision, request)
    verdict, warning = common.verdict_and_warning(decision)
    if verdict == "deny":
        return claude.output("deny", common.deny_reason(decision), None, warning)
    if verdict == "ask":
        return claude.output("deny", needs_approval(common.ask_reason(decision)), None, warning)
    if request.permission_mode not in PERMISSION_MODES:
        return claude.output(None, None, None, warning)  # a mode we do not know: no rewrite
    rewritten = common.rewritten_of(decision, request)
    updated = common.updated_input(request, rewritten)
    if updated is not None:
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
    """`open`: nothing; `closed` and `deny`: a deny (Codex cannot ask), the error in its reason."""
    verdict = common.fail_verdict(mode)
    if verdict is None:
        return None
    reason = common.fail_reason(message, mode)
    return claude.output("deny", needs_approval(reason) if verdict == "ask" else reason, None)
