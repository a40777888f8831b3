"""What every agent protocol shares: the normalised `HookRequest`, input errors and JSON output
helpers.

An agent module (`claude`, `copilot`, `gemini`, `cursor`, `codex`) offers (`protocol.AgentProtocol`
declares it):

- `parse_request(payload) -> HookRequest | None` — a shell call, or another tool's call (`tool`
  set: a file tool, `agents/tools.py`); None: nothing to judge, pass it through; raises `BadRequest`
  when the payload is a shell call without a usable command;
- `render(decision, request) -> str | None` — the exact JSON line, or None for no output; for a
  tool that is not a shell command only deny, ask or nothing (never a rewrite), as that agent
  takes them;
- `pass_through(payload) -> str | None` — the answer for a tool we do not judge;
- `fail_answer(mode, message, request) -> str | None` — the answer when something went wrong,
  for a fail mode of `open` (no opinion), `closed` (ask) or `deny`.
"""

from __future__ import annotations

from rtk_policy.util import json_codec, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from rtk_policy.agents.protocol import AgentProtocol
    from rtk_policy.decision import Decision
    from rtk_policy.policy.model import ToolCall

#: The reason RTK gives for a plain rewrite; kept so that RTK-shaped consumers see the same text.
REWRITE_REASON = "RTK auto-rewrite"
ASK_REASON = "rtk-policy: this command needs your approval"
DENY_REASON = "Blocked by an rtk-policy rule"
ALLOW_REASON = "Allowed by an rtk-policy rule"


class BadRequest(Exception):
    """A shell-tool payload we cannot judge (missing or non-string command, wrong types)."""


@record.frozen(eq=False)
class HookRequest:
    """One agent's PreToolUse call, normalised across protocols."""

    agent: str  #: "claude" | "copilot" | "gemini" | "cursor" | "codex"
    command: str  #: the shell command the agent wants to run ("" for another tool's call)
    tool_name: str = ""
    tool_input: dict[str, Any] = record.Factory(dict)  #: the original tool input, every field
    cwd: str = ""
    session_id: str = ""
    tool_use_id: str = ""
    permission_mode: str = ""
    transcript_path: str = ""
    variant: str = (
        ""  #: a protocol dialect, e.g. Copilot "claude" | "cli" | "ide", Cursor event name
    )
    raw: dict[str, Any] = record.Factory(dict)  #: the whole payload as received
    tool: ToolCall | None = None  #: a call of a tool that is not a shell command (file tools)


#: Characters that some readers take as line breaks although JSON allows them raw in strings.
_LINE_BREAKS = {"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def dump(obj: dict[str, Any]) -> str:
    """One compact JSON line (no trailing newline), UTF-8 text kept as is where possible.

    U+0085, U+2028 and U+2029 are escaped so that no reader splits the answer into two lines.
    """
    try:
        text = json_codec.dumps(obj, ensure_ascii=False, compact=True)
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates from the input: escape them instead
        return json_codec.dumps(obj, compact=True)
    for char, escaped in _LINE_BREAKS.items():
        if char in text:
            text = text.replace(char, escaped)
    return text


def text_field(payload: dict[str, Any], key: str) -> str:
    """`payload[key]` when it is a string, else ""."""
    value = payload.get(key)
    return value if isinstance(value, str) else ""


def text_fields(payload: dict[str, Any], *keys: str) -> dict[str, str]:
    """`{key: text_field(payload, key)}` for each of `keys` (HookRequest fields, same names)."""
    return {key: text_field(payload, key) for key in keys}


def first_text(payload: dict[str, Any], *keys: str) -> str:
    """The first non-empty string among `payload[key]` for `keys` ("" when there is none)."""
    for key in keys:
        value = text_field(payload, key)
        if value:
            return value
    return ""


def command_of(tool_input: Any, key: str = "command") -> str:
    """The command string of a tool input; raise `BadRequest` when it is missing or not a string."""
    if not isinstance(tool_input, dict):
        raise BadRequest("tool_input is missing or not a JSON object")
    if key not in tool_input:
        raise BadRequest(f"tool_input.{key} is missing")
    value = tool_input[key]
    if not isinstance(value, str):
        raise BadRequest(f"tool_input.{key} is not a string ({type(value).__name__})")
    return value


def new_request(
    agent: str, payload: dict[str, Any], tool_name: str, tool_input: Any, **fields: str
) -> HookRequest | None:
    """The request of a shell call whose input is `tool_input`, or None when its command is blank.

    Raises `BadRequest` when `tool_input` holds no string `command`. `cwd` and `raw` come from
    `payload`; `fields` sets the other `HookRequest` fields (session_id, variant, ...).
    """
    command = command_of(tool_input)
    if not command.strip():
        return None
    return HookRequest(
        agent=agent,
        command=command,
        tool_name=tool_name,
        tool_input=tool_input,
        cwd=text_field(payload, "cwd"),
        raw=payload,
        tool=None,
        **fields,
    )


def tool_request(
    agent: str, payload: dict[str, Any], tool_name: str, tool_input: Any, **fields: str
) -> HookRequest:
    """The request of a call of `tool_name`, not a shell command: its kind and paths read from
    `tool_input` (`agents/tools.py`); `fields` as for `new_request`."""
    from rtk_policy.agents.tools import tool_call

    return HookRequest(
        agent=agent,
        command="",
        tool_name=tool_name,
        tool_input=tool_input if isinstance(tool_input, dict) else {},
        cwd=text_field(payload, "cwd"),
        raw=payload,
        tool=tool_call(tool_name, tool_input),
        **fields,
    )


def tool_verdict(decision: Decision) -> tuple[str, str]:
    """The verdict of a decision on a tool call and the reason to give with it ("" for none)."""
    verdict = verdict_of(decision)
    if verdict == "deny":
        return verdict, deny_reason(decision)
    if verdict == "ask":
        return verdict, ask_reason(decision)
    if verdict == "allow":
        return verdict, joined(decision.reasons) or ALLOW_REASON
    return "none", ""


def unaskable_reason(reason: str) -> str:
    """The deny reason given where an agent cannot ask (an ask turned into a deny)."""
    return f"{reason} (it needs the user's approval, which this agent's hook cannot ask for)"


def verdict_of(decision: Decision) -> str:
    """The decision's verdict ("none" when it carries none)."""
    return decision.verdict


def rewritten_of(decision: Decision, request: HookRequest) -> str | None:
    """The command to run instead, or None when there is none (or it is the same text)."""
    rewritten = decision.rewritten
    if not rewritten or rewritten == request.command:
        return None
    return rewritten


def with_command(tool_input: dict[str, Any], command: str, key: str = "command") -> dict[str, Any]:
    """A copy of `tool_input` with every field kept, in order, and only `key` changed."""
    updated = dict(tool_input)
    updated[key] = command
    return updated


def verdict_and_warning(decision: Decision) -> tuple[str, str]:
    """The decision's verdict and its warn-mode line (see `verdict_of` and `warning_text`)."""
    return verdict_of(decision), warning_text(decision)


def updated_input(request: HookRequest, rewritten: str | None) -> dict[str, Any] | None:
    """`request.tool_input` with its command replaced by `rewritten` (None: no rewrite)."""
    return with_command(request.tool_input, rewritten) if rewritten is not None else None


def permission_fields(
    decision: str | None, reason: str | None, updated: dict[str, Any] | None, updated_key: str
) -> dict[str, Any]:
    """The Claude-style members, each only when set and in this order: `permissionDecisionReason`,
    `updated_key` (e.g. `updatedInput`) and `permissionDecision`."""
    result: dict[str, Any] = {}
    if reason:
        result["permissionDecisionReason"] = reason
    if updated is not None:
        result[updated_key] = updated
    if decision:
        result["permissionDecision"] = decision
    return result


def joined(messages: Iterable[str]) -> str:
    """Messages joined for one reason line ("" when there are none)."""
    return "; ".join(m for m in messages if m.strip())


def deny_reason(decision: Decision) -> str:
    """The text telling the agent why its command is blocked."""
    text = joined(decision.reasons)
    if text:
        return text
    rule_ids = ", ".join(decision.rule_ids)
    return f"{DENY_REASON} ({rule_ids})" if rule_ids else DENY_REASON


def ask_reason(decision: Decision) -> str:
    """The text shown to the user when a policy asks for approval."""
    return joined(decision.reasons) or ASK_REASON


def allow_reason(decision: Decision, rewritten: str | None) -> str:
    """The text shown to the user for an allow: the rewrite marker or the policies' messages."""
    if rewritten is not None:
        return REWRITE_REASON
    return joined(decision.reasons) or ALLOW_REASON


def warning_text(decision: Decision) -> str:
    """The warn-mode messages as one user-facing line ("" when none)."""
    text = joined(decision.warnings)
    return f"rtk-policy warning: {text}" if text else ""


def fail_reason(message: str, mode: str) -> str:
    """The reason given when the fail mode (`closed` or `deny`) answers instead of the policies."""
    action = "blocking the command" if mode == "deny" else "asking for approval"
    return f"rtk-policy could not decide ({message}); {action}"


def notes(module: AgentProtocol, verdict: str, rewritten: bool) -> list[str]:
    """What `module`'s agent does with the answer to `verdict` (`explain --agent`): the agent's
    `NOTES` for the verdict (keys `deny`, `ask`, `allow`, `none`, each `+rewrite` when rewritten),
    then its general note (`*`)."""
    table = module.NOTES
    found = [table.get(f"{verdict}+rewrite" if rewritten else verdict), table.get("*")]
    return [text for text in found if text]


def fail_verdict(mode: str) -> str | None:
    """The verdict of a fail mode: `closed` asks, `deny` denies, anything else (open) is None."""
    return {"closed": "ask", "deny": "deny"}.get(mode)
