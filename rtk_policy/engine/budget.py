"""The time budget of one decision (issue 18: every decision in bounded time).

An input up to the size limits is parsed and judged segment by segment; when judging would run past
`DECISION_BUDGET_S` from the start of the decision, the segments not yet judged are left out
(`PolicySet.evaluate`'s `deadline`) and the answer is at least an ask that says so, never a rewrite:
what was not judged cannot be allowed. A deny found in the segments judged in time stands. The
resident server answers other agents' calls meanwhile (`serve.resident`).
"""

from __future__ import annotations

import time

from rtk_policy.decision import Decision
from rtk_policy.util import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rtk_policy.policy.model import Evaluation

#: seconds one decision may take from its start (parse included) before what is left goes unjudged:
#: with the interpreter's start and the answer, a hook call stays within about 1 s
DECISION_BUDGET_S = 0.75


def deadline(budget_s: float | None) -> float | None:
    """The `time.monotonic()` value a decision starting now must end by (None: no budget)."""
    return None if budget_s is None else time.monotonic() + budget_s


def within_budget(
    decision: Decision, evaluations: tuple[Evaluation | None, ...], budget_s: float | None
) -> Decision:
    """`decision`, or, when an evaluation left segments unjudged, an ask saying how many (a deny
    stays a deny, with that note among its warnings); never rewritten."""
    left = 0
    for evaluation in evaluations:  # a loop, not max(): this runs on every decision
        if evaluation is not None and evaluation.unjudged > left:
            left = evaluation.unjudged
    if not left:
        return decision
    total = max(len(e.results) for e in evaluations if e is not None)
    note = (
        f"rtk-policy stopped judging this input after its {budget_s:g} s budget: {left} of its "
        f"{total} commands were not judged, so the user must confirm it. Split it into smaller "
        "commands or put it in a script file for review."
    )
    if decision.verdict == "deny":
        return record.evolve(decision, warnings=(*decision.warnings, note))
    reasons = decision.reasons if decision.verdict == "ask" else ()
    return record.evolve(
        decision, verdict="ask", reasons=(note, *reasons), rewritten=None, gate="unattestable"
    )
