"""The five agent protocols: parsing payloads and rendering every verdict (fake Decisions, no engine)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rtk_policy.agents import AGENTS, agent_module, detect_agent
from rtk_policy.agents.common import BadRequest
from rtk_policy.decision import Decision
from rtk_policy.util import record

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "reference" / "rtk_cases_public.json"


def decision(
    verdict, rewritten=None, reasons=(), warnings=(), command="git status", rule_ids=("r1",)
):
    """A Decision as the engine would build it."""
    return Decision(
        verdict=verdict,
        command=command,
        rewrite=rewritten,
        rewritten=rewritten,
        reasons=tuple(reasons),
        rule_ids=tuple(rule_ids),
        warnings=tuple(warnings),
        audit_rule_ids=(),
        gate="",
    )


CLAUDE_PAYLOAD = {
    "session_id": "9f1c2a3e-0b7d-4c55-9a61-3c2e8f0d1b42",
    "transcript_path": "/home/u/.claude/projects/-home-u-app/9f1c2a3e.jsonl",
    "cwd": "/home/u/app",
    "permission_mode": "default",
    "hook_event_name": "PreToolUse",
    "tool_name": "Bash",
    "tool_input": {
        "command": "git status",
        "description": "Show working tree status",
        "timeout": 120000,
        "run_in_background": False,
    },
    "tool_use_id": "toolu_01ABCDEF",
}


def parse(agent, payload):
    return agent_module(agent).parse_request(payload)


def render(agent, payload, dec):
    line = agent_module(agent).render(dec, parse(agent, payload))
    return None if line is None else json.loads(line)


# -- Claude -------------------------------------------------------------------------------------


def test_claude_request_carries_every_field():
    request = parse("claude", CLAUDE_PAYLOAD)
    assert request.command == "git status"
    assert request.session_id == CLAUDE_PAYLOAD["session_id"]
    assert request.tool_use_id == "toolu_01ABCDEF"
    assert request.permission_mode == "default"
    assert request.transcript_path.endswith(".jsonl")
    assert request.tool_input == CLAUDE_PAYLOAD["tool_input"]


def test_claude_allow_with_rewrite_keeps_every_tool_input_field():
    out = render("claude", CLAUDE_PAYLOAD, decision("allow", "rtk git status"))
    specific = out["hookSpecificOutput"]
    assert specific["permissionDecision"] == "allow"
    assert specific["hookEventName"] == "PreToolUse"
    assert specific["updatedInput"] == {**CLAUDE_PAYLOAD["tool_input"], "command": "rtk git status"}
    assert list(specific["updatedInput"]) == list(CLAUDE_PAYLOAD["tool_input"])


def test_claude_allow_without_rewrite_has_no_updated_input():
    specific = render("claude", CLAUDE_PAYLOAD, decision("allow"))["hookSpecificOutput"]
    assert specific["permissionDecision"] == "allow"
    assert "updatedInput" not in specific


def test_claude_ask_gives_reason_and_optional_rewrite():
    dec = decision("ask", "rtk git status", reasons=("pushing needs review", "second"))
    specific = render("claude", CLAUDE_PAYLOAD, dec)["hookSpecificOutput"]
    assert specific["permissionDecision"] == "ask"
    assert specific["permissionDecisionReason"] == "pushing needs review; second"
    assert specific["updatedInput"]["command"] == "rtk git status"
    assert specific["updatedInput"]["run_in_background"] is False
    plain = render("claude", CLAUDE_PAYLOAD, decision("ask", reasons=("x",)))["hookSpecificOutput"]
    assert "updatedInput" not in plain


def test_claude_no_opinion_rewrite_has_no_permission_decision():
    out = render("claude", CLAUDE_PAYLOAD, decision("none", "rtk git status"))
    assert out == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecisionReason": "RTK auto-rewrite",
            "updatedInput": {**CLAUDE_PAYLOAD["tool_input"], "command": "rtk git status"},
        }
    }


def test_claude_no_opinion_without_rewrite_is_silent():
    assert render("claude", CLAUDE_PAYLOAD, decision("none")) is None
    assert render("claude", CLAUDE_PAYLOAD, decision("none", "git status")) is None  # identity


def test_claude_deny_is_explicit_with_reason_for_the_agent():
    out = render("claude", CLAUDE_PAYLOAD, decision("deny", reasons=("use --force-with-lease",)))
    assert out == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecisionReason": "use --force-with-lease",
            "permissionDecision": "deny",
        }
    }
    bare = render("claude", CLAUDE_PAYLOAD, decision("deny", rule_ids=("rm-root",)))
    assert "rm-root" in bare["hookSpecificOutput"]["permissionDecisionReason"]


def test_claude_deny_never_carries_a_rewrite():
    out = render("claude", CLAUDE_PAYLOAD, decision("deny", "rtk git status", reasons=("no",)))
    assert "updatedInput" not in out["hookSpecificOutput"]


def test_claude_warnings_become_system_message():
    out = render("claude", CLAUDE_PAYLOAD, decision("none", warnings=("curl to pastebin",)))
    assert out == {"systemMessage": "rtk-policy warning: curl to pastebin"}
    out = render("claude", CLAUDE_PAYLOAD, decision("allow", "rtk git status", warnings=("w",)))
    assert (
        out["systemMessage"].endswith("w")
        and out["hookSpecificOutput"]["permissionDecision"] == "allow"
    )


@pytest.mark.parametrize(
    ("tool", "kind"),
    [("Edit", "edit"), ("Read", "read"), ("PowerShell", "other"), ("mcp__x__y", "other")],
)
def test_claude_other_tools_are_tool_calls(tool, kind):
    request = parse("claude", {**CLAUDE_PAYLOAD, "tool_name": tool})
    assert request.command == "" and request.tool.name == tool and request.tool.kind == kind
    assert agent_module("claude").pass_through({}) is None


@pytest.mark.parametrize("tool_input", [None, {}, {"command": 42}, {"command": None}, "git status"])
def test_claude_bad_command_is_a_bad_request(tool_input):
    payload = {**CLAUDE_PAYLOAD, "tool_input": tool_input}
    if tool_input is None:
        del payload["tool_input"]
    with pytest.raises(BadRequest):
        parse("claude", payload)


def test_claude_fail_answers():
    claude = agent_module("claude")
    assert claude.fail_answer("open", "boom") is None
    ask = json.loads(claude.fail_answer("closed", "boom"))["hookSpecificOutput"]
    assert ask["permissionDecision"] == "ask" and "boom" in ask["permissionDecisionReason"]
    deny = json.loads(claude.fail_answer("deny", "boom"))["hookSpecificOutput"]
    assert deny["permissionDecision"] == "deny"


# -- Copilot ------------------------------------------------------------------------------------

CLI_PAYLOAD = {
    "sessionId": "s1",
    "timestamp": 1767225600000,
    "cwd": "/w",
    "toolName": "bash",
    "toolArgs": json.dumps({"command": "cargo test", "description": "run", "mode": "sync"}),
}


def test_copilot_cli_shapes():
    args = json.loads(CLI_PAYLOAD["toolArgs"])
    out = render("copilot", CLI_PAYLOAD, decision("allow", "rtk cargo test", command="cargo test"))
    assert out == {
        "permissionDecisionReason": "RTK auto-rewrite",
        "modifiedArgs": {**args, "command": "rtk cargo test"},
        "permissionDecision": "allow",
    }
    out = render("copilot", CLI_PAYLOAD, decision("none", "rtk cargo test", command="cargo test"))
    assert "permissionDecision" not in out and out["modifiedArgs"]["mode"] == "sync"
    out = render("copilot", CLI_PAYLOAD, decision("ask", reasons=("check",), command="cargo test"))
    assert out == {"permissionDecisionReason": "check", "permissionDecision": "ask"}
    out = render("copilot", CLI_PAYLOAD, decision("deny", reasons=("no",), command="cargo test"))
    assert out == {"permissionDecisionReason": "no", "permissionDecision": "deny"}
    assert render("copilot", CLI_PAYLOAD, decision("none", command="cargo test")) is None


def test_copilot_tool_args_may_be_an_object_and_must_be_json():
    request = parse("copilot", {**CLI_PAYLOAD, "toolArgs": {"command": "ls"}})
    assert request.command == "ls" and request.variant == "cli"
    with pytest.raises(BadRequest):
        parse("copilot", {**CLI_PAYLOAD, "toolArgs": "{not json"})
    view = parse("copilot", {**CLI_PAYLOAD, "toolName": "view", "toolArgs": '{"path": "/w/a"}'})
    assert view.tool.kind == "read" and view.tool.paths_read == ("/w/a",) and view.variant == "cli"


def test_copilot_claude_shape_is_answered_like_claude():
    payload = {
        "hook_event_name": "PreToolUse",
        "session_id": "s",
        "timestamp": "2026-01-01T00:00:00Z",
        "cwd": "/w",
        "tool_name": "bash",
        "tool_input": {"command": "git status", "x": 1},
    }
    request = parse("copilot", payload)
    assert request.variant == "claude" and request.agent == "copilot"
    out = render("copilot", payload, decision("none", "rtk git status"))
    assert out["hookSpecificOutput"]["updatedInput"] == {"command": "rtk git status", "x": 1}
    out = render("copilot", payload, decision("deny", reasons=("no",)))
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_copilot_jetbrains_only_denies():
    payload = {"toolName": "run_in_terminal", "toolArgs": json.dumps({"command": "git status"})}
    out = render("copilot", payload, decision("none", "rtk git status"))
    assert (
        out["permissionDecision"] == "deny"
        and "`rtk git status`" in out["permissionDecisionReason"]
    )
    assert render("copilot", payload, decision("ask", reasons=("x",))) is None
    assert (
        render("copilot", payload, decision("deny", reasons=("no",)))["permissionDecision"]
        == "deny"
    )


# -- Gemini, Cursor, Codex ----------------------------------------------------------------------

GEMINI_PAYLOAD = {
    "session_id": "g",
    "transcript_path": "/t",
    "cwd": "/w",
    "hook_event_name": "BeforeTool",
    "timestamp": "2026-01-01T00:00:00Z",
    "tool_name": "run_shell_command",
    "tool_input": {"command": "git status", "description": "d"},
}


def test_gemini_parses_the_shell_tool_and_other_tools_as_tool_calls():
    """The verdict table is in test_agents_verdicts.py; here the parsing and pass-through."""
    assert parse("gemini", GEMINI_PAYLOAD).tool_input == GEMINI_PAYLOAD["tool_input"]
    payload = {**GEMINI_PAYLOAD, "tool_name": "read_file", "tool_input": {"file_path": "a"}}
    read = parse("gemini", payload)
    assert read.tool.kind == "read" and read.tool.paths_read == ("a",)
    assert parse("gemini", {**GEMINI_PAYLOAD, "tool_name": ""}) is None
    assert json.loads(agent_module("gemini").pass_through({})) == {"decision": "allow"}


def test_cursor_shapes():
    pre = {
        "conversation_id": "c",
        "hook_event_name": "preToolUse",
        "tool_name": "Shell",
        "tool_input": {"command": "git status"},
    }
    shell = {
        "conversation_id": "c",
        "generation_id": "g",
        "hook_event_name": "beforeShellExecution",
        "command": "git status",
        "cwd": "/w",
        "cursor_version": "1.7",
    }
    assert render("cursor", pre, decision("allow", "rtk git status")) == {
        "continue": True,
        "permission": "allow",
        "updated_input": {"command": "rtk git status"},
    }
    assert render("cursor", pre, decision("none", "rtk git status"))["permission"] == "ask"
    assert render("cursor", shell, decision("none", "rtk git status")) == {}  # no rewrite channel
    assert render("cursor", shell, decision("none")) == {}
    deny = render("cursor", shell, decision("deny", reasons=("no",)))
    assert deny == {
        "continue": True,
        "permission": "deny",
        "user_message": "no",
        "agent_message": "no",
    }
    assert render("cursor", shell, decision("ask", reasons=("why",)))["permission"] == "ask"
    assert agent_module("cursor").fail_answer("open", "x") == "{}"


CODEX_PAYLOAD = {
    "session_id": "session-1",
    "turn_id": "turn-1",
    "hook_event_name": "PreToolUse",
    "tool_name": "Bash",
    "tool_use_id": "tool-1",
    "model": "gpt-5",
    "tool_input": {"command": "git status"},
    "permission_mode": "default",
}


def test_codex_unknown_mode_and_other_events():
    """A permission mode we do not know: no rewrite, but denies and asks (as denies) still."""
    odd = {**CODEX_PAYLOAD, "permission_mode": "futureMode"}
    assert render("codex", odd, decision("none", "rtk git status")) is None
    deny = render("codex", odd, decision("deny", reasons=("no",)))["hookSpecificOutput"]
    assert deny["permissionDecision"] == "deny"
    ask = render("codex", odd, decision("ask", reasons=("why",)))["hookSpecificOutput"]
    assert ask["permissionDecision"] == "deny" and "why" in ask["permissionDecisionReason"]
    assert parse("codex", {**CODEX_PAYLOAD, "hook_event_name": "PostToolUse"}) is None


# -- detection and the RTK corpus ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("payload", "agent"),
    [
        (CLAUDE_PAYLOAD, "claude"),
        (CLI_PAYLOAD, "copilot"),
        (GEMINI_PAYLOAD, "gemini"),
        (
            {"conversation_id": "c", "command": "ls", "hook_event_name": "beforeShellExecution"},
            "cursor",
        ),
        (CODEX_PAYLOAD, "codex"),
        ({"tool_name": "run_in_terminal", "tool_input": {}}, "copilot"),
        ({"tool_input": {"command": "ls"}}, "claude"),
    ],
)
def test_detect_agent(payload, agent):
    assert detect_agent(payload) == agent


def _corpus_cases():
    if not CORPUS.exists():
        return []
    mapping = {"AllowRewrite": "allow", "AskRewrite": "none", "Deny": "deny", "Defer": "none"}
    agents = {
        "claude": "claude",
        "codex": "codex",
        "copilot-cli": "copilot",
        "cursor": "cursor",
        "gemini": "gemini",
        "copilot-ide": "copilot",
        "copilot-vscode": "copilot",
    }
    cases = []
    for case in json.loads(CORPUS.read_text())["hook_output"]:
        if "input" not in case or case["agent"] not in agents:
            continue
        injected = case.get("injected_decision")
        expected = case["expected_stdout"]
        if injected is None:
            continue
        cases.append(
            pytest.param(
                agents[case["agent"]],
                case["input"],
                mapping[injected],
                injected,
                expected,
                id=case["source"].split(":")[-1][:60],
            )
        )
    return cases


@pytest.mark.parametrize(("agent", "payload", "verdict", "injected", "expected"), _corpus_cases())
def test_rtk_corpus_injected_decisions(agent, payload, verdict, injected, expected):
    """RTK's shapes, except deny, which we answer explicitly where the protocol has one."""
    request = parse(agent, payload)
    rewritten = None
    if injected.endswith("Rewrite"):
        rewritten = "rtk " + request.command
    out = render(agent, payload, decision(verdict, rewritten, command=request.command))
    if injected == "Deny":
        flat = out.get("hookSpecificOutput", out)
        assert flat["permissionDecision"] == "deny"
    else:
        assert out == expected


def test_every_agent_has_the_interface():
    for name in AGENTS:
        module = agent_module(name)
        for function in ("parse_request", "render", "pass_through", "fail_answer"):
            assert callable(getattr(module, function)), (name, function)


def test_answers_never_contain_raw_unicode_line_breaks():
    import json

    from rtk_policy.agents.common import dump

    value = {"command": "echo `\x85 a\u2028b\u2029c é"}
    text = dump(value)
    assert len(text.splitlines()) == 1 and json.loads(text) == value and "é" in text


# -- tool calls that are not shell commands ------------------------------------------------------

WRITE_PAYLOADS = {
    "claude": {
        "session_id": "s",
        "cwd": "/w",
        "hook_event_name": "PreToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": "/w/a", "content": "x"},
    },
    "codex": {
        "session_id": "s",
        "turn_id": "t",
        "cwd": "/w",
        "hook_event_name": "PreToolUse",
        "tool_name": "apply_patch",
        "permission_mode": "default",
        "tool_input": {"command": "*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n"},
    },
    "gemini": {
        "session_id": "s",
        "cwd": "/w",
        "hook_event_name": "BeforeTool",
        "tool_name": "write_file",
        "tool_input": {"file_path": "/w/a", "content": "x"},
    },
    "copilot": {
        "sessionId": "s",
        "timestamp": 1,
        "cwd": "/w",
        "toolName": "create",
        "toolArgs": {"path": "/w/a", "file_text": "x"},
    },
    "cursor": {
        "conversation_id": "c",
        "hook_event_name": "preToolUse",
        "cwd": "/w",
        "tool_name": "Write",
        "tool_input": {"file_path": "/w/a"},
    },
}
#: per agent and verdict: the answer a tool call gets (None: no output)
TOOL_ANSWERS = {
    "claude": {
        "deny": {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecisionReason": "why",
                "permissionDecision": "deny",
            }
        },
        "ask": {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecisionReason": "why",
                "permissionDecision": "ask",
            }
        },
        "none": None,
    },
    "gemini": {
        "deny": {"decision": "deny", "reason": "why"},
        "ask": {"decision": "ask", "reason": "why"},
        "none": {"decision": "allow"},
    },
    "copilot": {
        "deny": {"permissionDecisionReason": "why", "permissionDecision": "deny"},
        "ask": {"permissionDecisionReason": "why", "permissionDecision": "ask"},
        "none": None,
    },
    "cursor": {
        "deny": {
            "continue": True,
            "permission": "deny",
            "user_message": "why",
            "agent_message": "why",
        },
        "ask": {"continue": True, "permission": "ask", "user_message": "why"},
        "none": {},
    },
}


@pytest.mark.parametrize("agent", list(WRITE_PAYLOADS))
def test_file_tool_calls_are_parsed_with_their_kind_and_paths(agent):
    request = parse(agent, WRITE_PAYLOADS[agent])
    assert request.command == "" and request.tool.kind in ("write", "edit")
    assert request.tool.paths_written == ("a",) if agent == "codex" else ("/w/a",)


@pytest.mark.parametrize("verdict", ["deny", "ask", "none"])
@pytest.mark.parametrize("agent", list(TOOL_ANSWERS))
def test_file_tool_answers_are_each_agents_own_and_never_rewrite(agent, verdict):
    answer = render(agent, WRITE_PAYLOADS[agent], decision(verdict, "rtk x", reasons=("why",)))
    assert answer == TOOL_ANSWERS[agent][verdict]


def test_codex_answers_a_tool_ask_as_a_deny_that_says_so():
    out = render("codex", WRITE_PAYLOADS["codex"], decision("ask", reasons=("why",)))[
        "hookSpecificOutput"
    ]
    assert out["permissionDecision"] == "deny" and out["permissionDecisionReason"].startswith(
        "why ("
    )
    assert render("codex", WRITE_PAYLOADS["codex"], decision("none", "rtk x")) is None
    assert render("codex", WRITE_PAYLOADS["codex"], decision("allow")) is None


def test_ask_less_events_deny_instead_of_asking():
    ide = {"sessionId": "s", "cwd": "/w", "toolName": "edit_file", "toolArgs": {"path": "/w/a"}}
    ide_request = record.evolve(agent_module("copilot").parse_request(ide), variant="ide")
    line = agent_module("copilot").render(decision("ask", reasons=("why",)), ide_request)
    assert json.loads(line)["permissionDecision"] == "deny"
    read = {"conversation_id": "c", "hook_event_name": "beforeReadFile", "file_path": "/w/.env"}
    assert parse("cursor", read).tool.paths_read == ("/w/.env",)
    assert render("cursor", read, decision("ask", reasons=("why",)))["permission"] == "deny"
    assert render("cursor", read, decision("none")) == {}
    assert parse("cursor", {"conversation_id": "c", "hook_event_name": "afterFileEdit"}) is None
