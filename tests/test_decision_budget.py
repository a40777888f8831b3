"""Every decision in bounded time (issue 18, `engine/budget.py`): past its budget the segments not
yet judged are left out, and the answer is at least an ask that says so — never an allow or a
rewrite of what was not judged, and a deny found in time stands."""

from __future__ import annotations

import time

import pytest

from rtk_policy.engine import budget
from rtk_policy.engine.pipeline import load_engine
from rtk_policy.policy import load as policy_load
from rtk_policy.policy import policyset

pytestmark = pytest.mark.budget  # the wall-clock budget is kept (tests/conftest.py)

PROJECT = "/home/example/project"


@pytest.fixture
def fresh_engine():
    """An engine of its own (its budget is changed by the tests)."""
    return load_engine(policy_paths=[policy_load.packs_dir()])


def _context(engine):
    return engine.context(agent="claude", cwd=PROJECT, project_dir=PROJECT, claude_allow=("*",))


class _StopsAfter:
    """A `time` module whose clock runs out after `calls` readings: the deadline passes then."""

    def __init__(self, calls: int) -> None:
        self.calls = calls

    def monotonic(self) -> float:
        self.calls -= 1
        return time.monotonic() + (0.0 if self.calls >= 0 else 3600.0)

    def perf_counter_ns(self) -> int:
        return time.perf_counter_ns()


def test_within_the_budget_nothing_changes(fresh_engine):
    """An ordinary command is judged whole: the same decision as with no budget."""
    context = _context(fresh_engine)
    timed = fresh_engine.evaluate("git status && ls -la", context)
    fresh_engine.budget_s = None
    untimed = fresh_engine.evaluate("git status && ls -la", context)
    assert timed.evaluation.unjudged == 0
    assert timed.decision == untimed.decision
    assert timed.decision.verdict == "allow"


def test_over_the_budget_what_is_left_is_asked(fresh_engine):
    """With no time left nothing is judged: an allow becomes an ask saying why, not rewritten."""
    fresh_engine.budget_s = 0.0
    outcome = fresh_engine.evaluate("git status && ls -la", _context(fresh_engine))
    assert outcome.evaluation.unjudged == 2
    assert [r.tried for r in outcome.evaluation.results] == [(), ()]
    decision = outcome.decision
    assert decision.verdict == "ask"
    assert decision.rewritten is None
    assert "2 of its 2 commands were not judged" in decision.reasons[0]


def test_a_deny_found_in_time_stands(fresh_engine, monkeypatch):
    """The first segment is judged before the clock runs out: its deny is the answer, and the
    unjudged rest is named among the warnings."""
    monkeypatch.setattr(policyset, "time", _StopsAfter(1))
    outcome = fresh_engine.evaluate("rm -rf /; git status; ls", _context(fresh_engine))
    assert outcome.evaluation.unjudged == 2
    assert outcome.decision.verdict == "deny"
    assert any("2 of its 3 commands were not judged" in w for w in outcome.decision.warnings)


def test_an_ask_found_in_time_keeps_its_reason(fresh_engine, monkeypatch):
    """An ask of a judged segment is still given, after the budget's note."""
    monkeypatch.setattr(policyset, "time", _StopsAfter(1))
    outcome = fresh_engine.evaluate("git reset --hard; git status", _context(fresh_engine))
    reasons = outcome.decision.reasons
    assert outcome.decision.verdict == "ask"
    assert "not judged" in reasons[0] and any("git reset --hard" in r for r in reasons[1:])


def test_a_rewrite_recheck_past_the_budget_is_not_rewritten(fresh_engine, monkeypatch):
    """The re-check of a rewritten command is judged within the same budget: when it runs out
    there, the command is asked about and not rewritten."""
    fresh_engine.budget_s = 3600.0
    checks = _StopsAfter(1)  # the command's own segment; the re-check finds no time
    monkeypatch.setattr(policyset, "time", checks)
    context = fresh_engine.context(agent="claude", cwd=PROJECT, project_dir=PROJECT)
    # trace (as explain does) re-checks every rewrite, whatever `recheck_needed` would skip
    outcome = fresh_engine.evaluate("git status", context, trace=True)
    assert outcome.decision.rewrite == "rtk git status"
    assert outcome.evaluation.unjudged == 0
    assert outcome.decision.verdict == "ask"
    assert outcome.decision.rewritten is None


def test_the_budget_is_about_one_second():
    """The figure the README promises: a hook call within about 1 s (the rest is start-up)."""
    assert 0.5 <= budget.DECISION_BUDGET_S <= 0.9


def test_check_runs_the_examples_without_the_budget(monkeypatch, capsys):
    """`check` runs each example with no time budget: on a loaded machine (here: a clock that has
    always run out) an example still gives its rule's answer, never an unjudged one."""
    from rtk_policy.main import main

    monkeypatch.setattr(policyset, "time", _StopsAfter(0))
    assert main(["check", policy_load.packs_dir()]) == 0
    out = capsys.readouterr().out
    assert ", 0 failed, 0 errors" in out and " 0 passed" not in out


def test_the_budget_is_what_check_turns_off(fresh_engine, monkeypatch):
    """The clock above does stop an engine that keeps its budget (the test above could fail)."""
    monkeypatch.setattr(policyset, "time", _StopsAfter(0))
    outcome = fresh_engine.evaluate("rm -rf /usr/share/doc", _context(fresh_engine))
    assert outcome.evaluation.unjudged == 1 and outcome.decision.verdict == "ask"
