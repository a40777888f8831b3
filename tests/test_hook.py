"""`rtk-policy hook` in-process with an injected fake engine: answers, context, fail modes, bad input."""

from __future__ import annotations

import io
import json
from types import SimpleNamespace

import pytest
from fakes import trust_workspace

from rtk_policy.commands import hook
from rtk_policy.config.load import Config
from rtk_policy.decision import Decision
from rtk_policy.hook.service import HookOptions
from rtk_policy.policy.model import Context

PAYLOAD = {
    "session_id": "9f1c2a3e-0b7d-4c55-9a61-3c2e8f0d1b42",
    "transcript_path": "/tmp/t.jsonl",
    "cwd": "/tmp",
    "permission_mode": "acceptEdits",
    "hook_event_name": "PreToolUse",
    "tool_name": "Bash",
    "tool_input": {
        "command": "git push --force",
        "description": "Push",
        "timeout": 60000,
        "run_in_background": False,
    },
    "tool_use_id": "toolu_01XYZ",
}


class FakeEngine:
    """Answers every command with a fixed Decision and remembers what it was asked (the hook's
    `HookEngine` interface, without a parser or policies)."""

    folder_facts = None

    def __init__(
        self,
        verdict="none",
        rewritten=None,
        reasons=(),
        warnings=(),
        error=None,
        fail_mode="open",
        **config,
    ):
        self.verdict, self.rewritten, self.reasons, self.warnings = (
            verdict,
            rewritten,
            reasons,
            warnings,
        )
        self.error = error
        self.config = Config(fail_mode=fail_mode, audit_enabled=False, **config)
        self.calls = []

    def evaluate_tool(self, call, context):
        """A tool call that is not a shell command: the same fixed verdict, never a rewrite."""
        self.calls.append((call, context))
        if self.error is not None:
            raise self.error
        decision = Decision(self.verdict, "", None, None, tuple(self.reasons), ("r",), (), (), "")
        return SimpleNamespace(decision=decision, evaluation=None, command_line=None)

    def context(self, **fields):
        """The request's `Context`, with no config of the engine's own."""
        return Context(**fields)

    def evaluate(self, text, context):
        """The fixed decision for `text` as an outcome (no parse, no rule results)."""
        decision = self.decide(text, context)
        return SimpleNamespace(decision=decision, evaluation=None, command_line=None)

    def rendered(self, module, decision, request):
        return module.render(decision, request)

    def decide(self, text, context):
        self.calls.append((text, context))
        if self.error is not None:
            raise self.error
        return Decision(
            verdict=self.verdict,
            command=text,
            rewrite=self.rewritten,
            rewritten=self.rewritten,
            reasons=tuple(self.reasons),
            rule_ids=("r",),
            warnings=tuple(self.warnings),
            audit_rule_ids=(),
            gate="",
        )


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    """A private HOME and state folder, so no real settings or audit log is touched."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    monkeypatch.delenv("RTK_POLICY_FAIL", raising=False)


def call(stdin, engine=None, agent="claude", config=None):
    """Run the hook; returns (stdout text, stderr text, exit code)."""
    data = stdin if isinstance(stdin, bytes) else json.dumps(stdin).encode()
    out, err = io.StringIO(), io.StringIO()
    options = HookOptions(agent=agent, config=config)
    code = hook.run(options, io.BytesIO(data), out, err, engine=engine)
    return out.getvalue(), err.getvalue(), code


def answer(stdout):
    assert stdout.count("\n") == 1 and stdout.endswith("\n")
    return json.loads(stdout)


def test_a_rewrite_no_rule_approved_is_dropped_for_claude_by_default():
    """Claude Code would match its rules against `rtk git push --force`, where a command-line deny
    rule on `git push` no longer matches: the command is left as typed, with no opinion."""
    out, err, code = call(PAYLOAD, FakeEngine("none", "rtk git push --force"))
    assert (out, err, code) == ("", "", 0)


def test_rewrite_with_no_opinion_keeps_fields_and_omits_decision():
    engine = FakeEngine("none", "rtk git push --force", rewrite_unapproved=True)
    out, err, code = call(PAYLOAD, engine)
    specific = answer(out)["hookSpecificOutput"]
    assert code == 0 and err == ""
    assert "permissionDecision" not in specific
    assert specific["updatedInput"] == {**PAYLOAD["tool_input"], "command": "rtk git push --force"}


@pytest.mark.parametrize("verdict", ["allow", "ask", "deny"])
def test_verdicts_are_answered_explicitly(verdict):
    out, _, code = call(PAYLOAD, FakeEngine(verdict, reasons=("policy says so",)))
    specific = answer(out)["hookSpecificOutput"]
    assert code == 0 and specific["permissionDecision"] == verdict
    if verdict != "allow":
        assert specific["permissionDecisionReason"] == "policy says so"


def test_no_opinion_prints_nothing():
    out, err, code = call(PAYLOAD, FakeEngine("none"))
    assert (out, err, code) == ("", "", 0)


def test_context_carries_request_fields_and_claude_rules(tmp_path, monkeypatch):
    project = tmp_path / "proj"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.json").write_text(
        json.dumps(
            {
                "permissions": {
                    "deny": ["Bash(git push --force)", "Read(.env)"],
                    "allow": ["Bash(ls:*)"],
                }
            }
        )
    )
    trust_workspace(project)  # else Claude Code (and so the hook) drops the project's allow rules
    engine = FakeEngine("none")
    call({**PAYLOAD, "cwd": str(project)}, engine)
    text, context = engine.calls[0]
    assert text == "git push --force"
    assert context.agent == "claude" and context.permission_mode == "acceptEdits"
    assert context.session_id == PAYLOAD["session_id"] and context.cwd == str(project)
    assert dict(context.tool_input)["timeout"] == 60000
    assert context.claude_deny == ("git push --force",) and context.claude_allow == ("ls:*",)
    assert context.project_dir == str(project.resolve())


def test_a_file_tool_reaches_the_engine_as_a_tool_call_and_is_never_rewritten():
    payload = {**PAYLOAD, "tool_name": "Edit", "tool_input": {"file_path": "/x", "old_string": "a"}}
    engine = FakeEngine("deny", rewritten="rtk x", reasons=("no edits of /x",))
    out, err, code = call(payload, engine)
    specific = answer(out)["hookSpecificOutput"]
    assert (err, code) == ("", 0)
    assert specific == {
        "hookEventName": "PreToolUse",
        "permissionDecisionReason": "no edits of /x",
        "permissionDecision": "deny",
    }
    tool_call, context = engine.calls[0]
    assert (tool_call.name, tool_call.kind, tool_call.paths_written) == ("Edit", "edit", ("/x",))
    assert context.tool_name == "Edit"
    assert call(payload, FakeEngine("none"))[:2] == ("", "")


def test_agent_is_detected_without_a_name(monkeypatch):
    """A Copilot payload is answered as Copilot; its rewrite only once Copilot's command line (its
    `--deny-tool` rules) was read (`settings.copilot_cli`), never from an unseen one."""
    from rtk_policy.settings import copilot_cli

    payload = {"toolName": "bash", "toolArgs": json.dumps({"command": "cargo test"})}
    out, _, _ = call(payload, FakeEngine("allow", "rtk cargo test"), agent=None)
    assert "modifiedArgs" not in answer(out)  # no Copilot process above this test
    assert answer(out)["permissionDecision"] == "allow"
    seen = copilot_cli.CliRules(seen=True, why="test: Copilot with no rule options")
    monkeypatch.setattr(copilot_cli, "host_rules", lambda start_pid=None: seen)
    out, _, _ = call(payload, FakeEngine("allow", "rtk cargo test"), agent=None)
    assert answer(out)["modifiedArgs"] == {"command": "rtk cargo test"}


@pytest.mark.parametrize(
    ("mode", "expected"), [("open", None), ("closed", "ask"), ("deny", "deny")]
)
def test_engine_errors_apply_the_fail_mode(mode, expected):
    engine = FakeEngine(error=RuntimeError("policy exploded"), fail_mode=mode)
    out, err, code = call(PAYLOAD, engine)
    assert code == 0 and err.count("\n") == 1 and "policy exploded" in err
    assert "Traceback" not in err
    if expected is None:
        assert out == ""
    else:
        assert answer(out)["hookSpecificOutput"]["permissionDecision"] == expected


def test_policy_load_error_applies_the_fail_mode(monkeypatch, tmp_path):
    import rtk_policy.engine.pipeline as engine_module

    def broken(**kwargs):
        raise ValueError("policies/x.yaml:3:1: bad CEL")

    monkeypatch.setattr(engine_module, "load_engine", broken)
    config = tmp_path / "config.toml"
    config.write_text('fail_mode = "closed"\n')
    out, err, code = call(PAYLOAD, None, config=str(config))
    assert code == 0 and "bad CEL" in err
    assert answer(out)["hookSpecificOutput"]["permissionDecision"] == "ask"


def test_warnings_reach_the_user_as_system_message():
    out, _, _ = call(PAYLOAD, FakeEngine("none", warnings=("network access logged",)))
    assert answer(out) == {"systemMessage": "rtk-policy warning: network access logged"}


BAD_INPUTS = {
    "empty": b"",
    "whitespace": b"  \n\t ",
    "bom only": b"\xef\xbb\xbf",
    "malformed": b"not valid json {{{",
    "array": b"[1, 2]",
    "invalid utf-8": b'{"tool_input": {"command": "\xff\xfe"}}',
    "missing command": json.dumps({"tool_name": "Bash", "tool_input": {}}).encode(),
    "non-string command": json.dumps(
        {"tool_name": "Bash", "tool_input": {"command": ["rm"]}}
    ).encode(),
    "no tool_input": json.dumps({"tool_name": "Bash"}).encode(),
    "too big": b'{"tool_input": {"command": "' + b"a" * (1024 * 1024) + b'"}}',
    "deep": b"[" * 100000 + b"]" * 100000,
}


@pytest.mark.parametrize("data", BAD_INPUTS.values(), ids=BAD_INPUTS.keys())
def test_bad_input_open(data):
    engine = FakeEngine("deny")
    out, err, code = call(data, engine)
    assert code == 0 and out == "" and err.count("\n") == 1 and err.startswith("rtk-policy hook: ")
    assert engine.calls == []


@pytest.mark.parametrize("data", BAD_INPUTS.values(), ids=BAD_INPUTS.keys())
def test_bad_input_closed_asks(data):
    out, err, code = call(data, FakeEngine("allow", fail_mode="closed"))
    assert code == 0 and err.count("\n") == 1
    assert answer(out)["hookSpecificOutput"]["permissionDecision"] == "ask"


def test_bad_input_cursor_gets_its_no_opinion_answer():
    out, _, code = call(b"garbage", FakeEngine(), agent="cursor")
    assert code == 0 and answer(out) == {}


def test_bom_is_stripped():
    data = b"\xef\xbb\xbf\xef\xbb\xbf" + json.dumps(PAYLOAD).encode()
    out, err, _ = call(data, FakeEngine("deny", reasons=("no",)))
    assert err == "" and answer(out)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_stray_prints_from_the_engine_do_not_reach_stdout():
    class Noisy(FakeEngine):
        def decide(self, text, context):
            print("debug noise")
            return super().decide(text, context)

    out, err, _ = call(PAYLOAD, Noisy("none"))
    assert out == "" and "debug noise" in err


def test_audit_record_is_called(monkeypatch):
    import rtk_policy.audit.log as audit

    seen = []
    monkeypatch.setattr(audit, "record", lambda config, **kw: seen.append(kw))
    call(PAYLOAD, FakeEngine("deny", reasons=("no",)))
    call(b"{broken", FakeEngine())
    assert seen[0]["agent"] == "claude" and seen[0]["decision"].verdict == "deny"
    assert seen[0]["request"]["tool_use_id"] == "toolu_01XYZ"
    assert "bad input" in seen[1]["error"]


def test_a_failing_audit_never_breaks_the_answer(monkeypatch):
    import rtk_policy.audit.log as audit

    def explode(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(audit, "record", explode)
    out, _, code = call(PAYLOAD, FakeEngine("deny", reasons=("no",)))
    assert code == 0 and answer(out)["hookSpecificOutput"]["permissionDecision"] == "deny"
