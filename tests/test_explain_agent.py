"""`rtk-policy explain --agent NAME`: the agent's wire answer and what its CLI does with it
(issue 16 point 1: where an agent has no way to ask, explain says so)."""

from __future__ import annotations

import io
import json

import pytest

from rtk_policy.agents import AGENTS
from rtk_policy.main import main


def explain(*words: str, capsys: pytest.CaptureFixture[str]) -> str:
    """The stdout of `rtk-policy explain WORDS` (exit 0)."""
    assert main(["explain", *words]) == 0
    return capsys.readouterr().out


def test_codex_ask_is_shown_as_the_deny_it_sends_and_says_why(capsys) -> None:
    """`git reset --hard` asks; Codex cannot ask, so explain shows the deny and the note."""
    data = json.loads(explain("--json", "--agent", "codex", "git reset --hard", capsys=capsys))
    assert data["decision"]["verdict"] == "ask"
    specific = data["agent"]["answer"]["hookSpecificOutput"]
    assert specific["permissionDecision"] == "deny"
    assert "approval" in specific["permissionDecisionReason"]
    assert any("cannot ask" in note for note in data["agent"]["notes"])
    text = explain("--agent", "codex", "git reset --hard", capsys=capsys)
    assert "agent:   codex" in text and "Codex cannot ask from a hook" in text


def test_gemini_ask_uses_its_own_vocabulary(capsys) -> None:
    """Gemini's answer to an ask is `"decision": "ask"`."""
    data = json.loads(explain("--json", "--agent", "gemini", "git reset --hard", capsys=capsys))
    assert data["agent"]["answer"]["decision"] == "ask"


def test_no_output_is_said_plainly(capsys) -> None:
    """A command with no opinion and no rewrite: Claude Code gets nothing, and explain says so."""
    text = explain("--agent", "claude", "echo hello", capsys=capsys)
    assert "answer:  nothing (no output)" in text


@pytest.mark.parametrize("agent", AGENTS)
def test_every_agent_answer_is_its_hook_answer(agent: str, capsys) -> None:
    """The answer shown is what `rtk-policy hook AGENT` prints for the same command."""
    from rtk_policy.agents.samples import sample_payload
    from rtk_policy.hook.service import HookOptions, answer_stream

    data = json.loads(explain("--json", "--agent", agent, "git status", capsys=capsys))
    out = io.StringIO()
    payload = json.dumps(sample_payload(agent, "git status", "/tmp"))
    answer_stream(HookOptions(agent=agent), io.StringIO(payload), out, io.StringIO())
    hooked = json.loads(out.getvalue()) if out.getvalue().strip() else None
    assert data["agent"]["answer"] == hooked


def test_without_a_known_agent_there_is_no_agent_section(capsys) -> None:
    """`--agent` with another name only sets ctx.agent, as before."""
    data = json.loads(explain("--json", "--agent", "other", "git status", capsys=capsys))
    assert "agent" not in data
