"""Every agent × every verdict: the exact wire answer (issue 16 point 1).

Each row is what that agent's CLI really enforces (reference agents-real.md and the CLIs' own hook
code): Codex cannot ask (its ask is a deny telling the model to get the user's approval) and rejects
an allow without a rewrite; Gemini knows `"ask"` (not `"ask_user"`) and replaces the tool input with
`tool_input`, so a rewrite carries every field. The payloads carry tool-input fields besides the
command so that a rewrite which dropped one fails here.
"""

from __future__ import annotations

import json

import pytest

from rtk_policy.agents import AGENTS, agent_module
from rtk_policy.agents.codex import CANNOT_ASK
from rtk_policy.agents.common import REWRITE_REASON
from rtk_policy.decision import Decision

COMMAND = "git status"
REWRITTEN = "rtk git status"

PAYLOADS = {
    "claude": {
        "session_id": "s",
        "cwd": "/w",
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": COMMAND, "description": "d", "timeout": 5000},
        "tool_use_id": "t",
    },
    "codex": {
        "session_id": "s",
        "turn_id": "u",
        "cwd": "/w",
        "hook_event_name": "PreToolUse",
        "model": "m",
        "permission_mode": "default",
        "tool_name": "Bash",
        "tool_input": {"command": COMMAND, "workdir": "/w/sub"},
        "tool_use_id": "t",
    },
    "gemini": {
        "session_id": "s",
        "cwd": "/w",
        "hook_event_name": "BeforeTool",
        "tool_name": "run_shell_command",
        "tool_input": {
            "command": COMMAND,
            "description": "d",
            "dir_path": "sub",
            "is_background": False,
        },
    },
    "copilot": {
        "sessionId": "s",
        "cwd": "/w",
        "toolName": "bash",
        "toolArgs": json.dumps({"command": COMMAND, "description": "d"}),
    },
    "cursor": {
        "conversation_id": "c",
        "hook_event_name": "preToolUse",
        "tool_name": "Shell",
        "tool_input": {"command": COMMAND, "cwd": "/w/sub"},
    },
}


def decision(verdict: str, rewritten: str | None = None, reasons: tuple[str, ...] = ()) -> Decision:
    """A Decision as the engine builds it."""
    return Decision(
        verdict=verdict,
        command=COMMAND,
        rewrite=rewritten,
        rewritten=rewritten,
        reasons=reasons,
        rule_ids=("r1",),
        warnings=(),
        audit_rule_ids=(),
        gate="",
    )


def kept(agent: str) -> dict:
    """The agent's tool input with only the command rewritten."""
    payload = PAYLOADS[agent]
    args = payload["toolArgs"] if agent == "copilot" else payload["tool_input"]
    args = json.loads(args) if isinstance(args, str) else args
    return {**args, "command": REWRITTEN}


def claude_shape(decision_: str | None, reason: str | None = None, updated: dict | None = None):
    """A Claude-compatible PreToolUse answer."""
    specific: dict = {"hookEventName": "PreToolUse"}
    if reason:
        specific["permissionDecisionReason"] = reason
    if updated is not None:
        specific["updatedInput"] = updated
    if decision_:
        specific["permissionDecision"] = decision_
    return {"hookSpecificOutput": specific}


NEEDS_APPROVAL = f"this command needs the user's approval (why); {CANNOT_ASK}"

#: (agent, verdict, rewritten?) -> the exact answer (None: no output at all)
TABLE = {
    ("claude", "deny", False): claude_shape("deny", "no"),
    ("claude", "ask", False): claude_shape("ask", "why"),
    ("claude", "ask", True): claude_shape("ask", "why", kept("claude")),
    ("claude", "allow", False): claude_shape("allow", "ok"),
    ("claude", "allow", True): claude_shape("allow", REWRITE_REASON, kept("claude")),
    ("claude", "none", False): None,
    ("claude", "none", True): claude_shape(None, REWRITE_REASON, kept("claude")),
    # Codex: ask is unsupported (the command would run), so it is a deny; a bare allow is invalid
    ("codex", "deny", False): claude_shape("deny", "no"),
    ("codex", "ask", False): claude_shape("deny", NEEDS_APPROVAL),
    ("codex", "ask", True): claude_shape("deny", NEEDS_APPROVAL),
    ("codex", "allow", False): None,
    ("codex", "allow", True): claude_shape("allow", REWRITE_REASON, kept("codex")),
    ("codex", "none", False): None,
    ("codex", "none", True): claude_shape("allow", REWRITE_REASON, kept("codex")),
    # Gemini: "ask" is its vocabulary; tool_input replaces the arguments, so every field is sent
    ("gemini", "deny", False): {"decision": "deny", "reason": "no"},
    ("gemini", "ask", False): {"decision": "ask", "reason": "why", "systemMessage": "why"},
    ("gemini", "ask", True): {
        "decision": "ask",
        "reason": "why",
        "hookSpecificOutput": {"tool_input": kept("gemini")},
        "systemMessage": "why",
    },
    ("gemini", "allow", False): {"decision": "allow"},
    ("gemini", "allow", True): {
        "decision": "allow",
        "hookSpecificOutput": {"tool_input": kept("gemini")},
    },
    ("gemini", "none", False): None,
    ("gemini", "none", True): {"hookSpecificOutput": {"tool_input": kept("gemini")}},
    # Copilot CLI: the flat camelCase shape, modifiedArgs with every field
    ("copilot", "deny", False): {"permissionDecisionReason": "no", "permissionDecision": "deny"},
    ("copilot", "ask", False): {"permissionDecisionReason": "why", "permissionDecision": "ask"},
    ("copilot", "ask", True): {
        "permissionDecisionReason": "why",
        "modifiedArgs": kept("copilot"),
        "permissionDecision": "ask",
    },
    ("copilot", "allow", False): {"permissionDecisionReason": "ok", "permissionDecision": "allow"},
    ("copilot", "allow", True): {
        "permissionDecisionReason": REWRITE_REASON,
        "modifiedArgs": kept("copilot"),
        "permissionDecision": "allow",
    },
    ("copilot", "none", False): None,
    ("copilot", "none", True): {
        "permissionDecisionReason": REWRITE_REASON,
        "modifiedArgs": kept("copilot"),
    },
    # Cursor (documented schema only): always an object; a rewrite needs a permission, so ask
    ("cursor", "deny", False): {
        "continue": True,
        "permission": "deny",
        "user_message": "no",
        "agent_message": "no",
    },
    ("cursor", "ask", False): {"continue": True, "permission": "ask", "user_message": "why"},
    ("cursor", "ask", True): {
        "continue": True,
        "permission": "ask",
        "user_message": "why",
        "updated_input": kept("cursor"),
    },
    ("cursor", "allow", False): {"continue": True, "permission": "allow"},
    ("cursor", "allow", True): {
        "continue": True,
        "permission": "allow",
        "updated_input": kept("cursor"),
    },
    ("cursor", "none", False): {},
    ("cursor", "none", True): {
        "continue": True,
        "permission": "ask",
        "updated_input": kept("cursor"),
    },
}

REASONS = {"deny": ("no",), "ask": ("why",), "allow": ("ok",), "none": ()}


def test_the_table_covers_every_agent_and_verdict() -> None:
    """No agent or verdict is left out (deny never carries a rewrite)."""
    wanted = {
        (agent, verdict, rewritten)
        for agent in AGENTS
        for verdict in REASONS
        for rewritten in ((False,) if verdict == "deny" else (False, True))
    }
    assert set(TABLE) == wanted


@pytest.mark.parametrize(("agent", "verdict", "rewritten"), sorted(TABLE))
def test_wire_answer(agent: str, verdict: str, rewritten: bool) -> None:
    """The agent's exact answer for the verdict, with and without a rewrite."""
    module = agent_module(agent)
    request = module.parse_request(PAYLOADS[agent])
    line = module.render(
        decision(verdict, REWRITTEN if rewritten else None, REASONS[verdict]), request
    )
    assert (None if line is None else json.loads(line)) == TABLE[(agent, verdict, rewritten)]


@pytest.mark.parametrize("agent", AGENTS)
def test_a_deny_with_a_selected_rewrite_is_never_rewritten(agent: str) -> None:
    """A deny never carries the rewrite the policies selected, in any protocol."""
    module = agent_module(agent)
    line = module.render(
        decision("deny", REWRITTEN, ("no",)), module.parse_request(PAYLOADS[agent])
    )
    assert REWRITTEN not in line


#: (agent, fail mode) -> the verdict word of the fail answer in that agent's own vocabulary
FAIL_VERDICTS = {
    ("claude", "closed"): "ask",
    ("codex", "closed"): "deny",  # Codex cannot ask
    ("gemini", "closed"): "ask",
    ("copilot", "closed"): "ask",
    ("cursor", "closed"): "ask",
}


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("mode", ["open", "closed", "deny"])
def test_fail_answers_use_what_the_agent_enforces(agent: str, mode: str) -> None:
    """open: the agent's no-opinion answer; closed: its ask (a deny for Codex); deny: a deny."""
    line = agent_module(agent).fail_answer(mode, "boom")
    if mode == "open":
        assert line in (None, "{}") and (line == "{}") == (agent == "cursor")
        return
    answer = json.loads(line)
    flat = answer.get("hookSpecificOutput", answer)
    word = flat.get("permissionDecision") or flat.get("decision") or flat.get("permission")
    assert word == ("deny" if mode == "deny" else FAIL_VERDICTS[(agent, mode)])
    assert "boom" in line
