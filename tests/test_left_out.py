"""The rules a context leaves out (`policy/left_out.py`): what a shared context cannot match is
not tried, and no decision changes for it."""

from __future__ import annotations

from pathlib import Path

from rtk_policy.engine.pipeline import load_engine
from rtk_policy.policy.left_out import AFTER
from rtk_policy.policytest.plugin import read_corpus
from rtk_policy.util import record

CORPUS = Path(__file__).resolve().parent / "corpus"


def _commands() -> list[str]:
    return read_corpus(CORPUS / "commands.txt") + read_corpus(CORPUS / "bypass.jsonl")


def test_a_shared_context_leaves_out_the_rules_it_cannot_match_and_decides_the_same() -> None:
    """After `AFTER` evaluations with one context the Claude Code pattern rules, false without a
    pattern, are left out; every corpus decision equals the one made under a fresh copy of the
    context (never shared long enough to leave anything out)."""
    engine = load_engine(use_cache=False)
    context = engine.context(agent="claude", cwd=str(CORPUS))
    commands = _commands()
    assert len(commands) > 10 * AFTER
    shared = [engine.evaluate(command, context) for command in commands]
    left_out = engine.policies._left_out(context, {})
    for command, outcome in zip(commands, shared, strict=True):
        fresh = engine.evaluate(command, record.evolve(context))
        assert outcome.decision == fresh.decision, command
        assert outcome.evaluation.results == fresh.evaluation.results, command
    assert {"claude-deny", "claude-ask", "claude-allow"} <= left_out
    assert "rm-recursive-root" not in left_out


def test_a_pattern_of_the_context_keeps_its_rule() -> None:
    """With a Claude Code deny pattern, `claude-deny` is tried, long after the context is shared."""
    engine = load_engine(use_cache=False)
    context = engine.context(agent="claude", claude_deny=("git push:*",))
    for _ in range(2 * AFTER):
        assert engine.decide("git push origin main", context).verdict == "deny"
    assert "claude-deny" not in engine.policies._left_out(context, {})
    assert "claude-ask" in engine.policies._left_out(context, {})


def test_a_disabled_rule_stays_out_before_and_after() -> None:
    """The config's disabled rules are left out from the first evaluation on."""
    engine = load_engine(use_cache=False)
    context = engine.context(disabled_rules=("rm-recursive-root",))
    for _ in range(2 * AFTER):
        decision = engine.decide("rm -rf /", context)
        assert "rm-recursive-root" not in decision.rule_ids
