"""The suite's in-process decisions run without the wall-clock budget (tests/conftest.py): a test
judges the policies, not the machine's load. The budget itself is tested in test_decision_budget."""

from __future__ import annotations

from rtk_policy.engine.budget import DECISION_BUDGET_S


def test_an_unmarked_test_judges_every_segment_whatever_the_budget(engine):
    """Even a budget of zero seconds leaves no segment unjudged outside `budget` tests."""
    engine.budget_s = 0.0
    try:
        decision = engine.decide("ls; rm -rf /; git status", engine.context(cwd="/tmp"))
    finally:
        engine.budget_s = DECISION_BUDGET_S
    assert decision.verdict == "deny"
    assert not any("stopped judging" in text for text in (*decision.reasons, *decision.warnings))
