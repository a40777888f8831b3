"""Table tests of the combining rules (DESIGN §6) and of `rewrite`'s exit codes (DESIGN §2)."""

from __future__ import annotations

import pytest
from fakes import FakeLine, FakeSegment, make_rule

from rtk_policy.engine.answers import exit_code
from rtk_policy.decision import decide
from rtk_policy.policy.model import Evaluation, Rule, RuleResult, SegmentResult


def rule(decision: str, mode: str = "enforce", rule_id: str = "") -> Rule:
    return make_rule(rule_id or f"{decision}-{mode}", decision, mode=mode)


def evaluation(*segment_hits: tuple[Rule, ...]) -> Evaluation:
    results = tuple(
        SegmentResult(
            segment_index=i, tried=(),
            permission_hits=tuple(RuleResult(r, True, message=f"msg {r.id}") for r in hits),
            rewrite=None, safe_consumer=False,
        )
        for i, hits in enumerate(segment_hits)
    )
    return Evaluation(results=results, policy_digest="d", backend="b", eval_us=0)


def line(n: int, **flags: bool) -> FakeLine:
    dynamic = flags.pop("dynamic", False)
    return FakeLine("cmd", tuple(FakeSegment(dynamic) for _ in range(n)), **flags)


ALLOW, ASK, DENY = rule("allow"), rule("ask"), rule("deny")

COMBINE_TABLE = [
    # (segment hits, flags, expected verdict)
    (((ALLOW,),), {}, "allow"),
    (((ALLOW,), ()), {}, "none"),  # one segment without an allow: no opinion (#1213)
    (((ALLOW,), (ALLOW,)), {}, "allow"),
    (((ALLOW,), (DENY,)), {}, "deny"),
    (((ASK,), (DENY,)), {}, "deny"),
    (((ASK,), (ALLOW,)), {}, "ask"),
    (((ALLOW, DENY),), {}, "deny"),  # deny beats allow on the same segment
    (((ALLOW, ASK),), {}, "ask"),
    (((),), {}, "none"),
    (((ALLOW,),), {"parse_error": True}, "none"),  # allow needs an attested command
    (((ALLOW,),), {"unattestable": True}, "none"),
    (((ALLOW,),), {"dynamic": True}, "none"),
    (((DENY,),), {"parse_error": True}, "deny"),  # a deny is never lost
    (((rule("deny", "warn"),),), {}, "none"),  # warn never changes the verdict
    (((rule("deny", "audit"),),), {}, "none"),
]


@pytest.mark.parametrize(("hits", "flags", "expected"), COMBINE_TABLE)
def test_combining(hits, flags, expected):
    decision = decide(line(len(hits), **flags), evaluation(*hits), None)
    assert decision.verdict == expected


def test_warn_rules_become_warnings_and_audit_ids():
    warn = rule("deny", "warn", "w")
    decision = decide(line(1), evaluation((warn,)), None)
    assert decision.warnings == ("msg w",)
    assert decision.audit_rule_ids == ("w",)
    assert decision.rule_ids == ()


def test_reasons_come_from_the_deciding_rules():
    decision = decide(line(2), evaluation((ASK,), (DENY,)), None)
    assert decision.reasons == ("msg deny-enforce",)


def test_recheck_of_the_rewrite_can_deny():
    decision = decide(line(1), evaluation((ALLOW,)), "rtk x", recheck=evaluation((DENY,)))
    assert decision.verdict == "deny"
    assert decision.rewritten is None and decision.gate == "deny"


GATE_TABLE = [
    # (rewrite, verdict hits, flags, rewritten, gate)
    ("rtk git status", (ALLOW,), {}, "rtk git status", ""),
    ("rtk git status", (), {}, "rtk git status", ""),
    ("rtk git status", (DENY,), {}, None, "deny"),
    ("rtk git status", (), {"unattestable": True}, None, "unattestable"),
    ("cmd", (), {}, None, "identity"),
    (None, (), {}, None, ""),
    (None, (ASK,), {"unattestable": True}, None, "unattestable"),
    (None, (DENY,), {"unattestable": True}, None, ""),
]


@pytest.mark.parametrize(("rewrite", "hits", "flags", "rewritten", "gate"), GATE_TABLE)
def test_rewrite_gating(rewrite, hits, flags, rewritten, gate):
    decision = decide(line(1, **flags), evaluation(hits), rewrite)
    assert (decision.rewritten, decision.gate) == (rewritten, gate)
    assert decision.rewrite == rewrite


EXIT_TABLE = [
    # (rewrite, hits, flags, openclaw, exit, stdout)
    ("rtk git status", (ALLOW,), {}, False, 0, "rtk git status"),
    ("rtk git status", (ASK,), {}, False, 3, "rtk git status"),
    ("rtk git status", (), {}, False, 3, "rtk git status"),  # #1155: no rule never exits 0
    ("rtk git status", (), {}, True, 0, "rtk git status"),  # openclaw gates it itself
    ("rtk git status", (ASK,), {}, True, 3, "rtk git status"),
    ("rtk git status", (DENY,), {}, False, 2, ""),
    ("rtk git status", (), {"unattestable": True}, False, 1, ""),
    (None, (), {}, False, 1, ""),
    (None, (ALLOW,), {}, False, 1, ""),
    (None, (ASK,), {}, False, 3, "cmd"),
    (None, (DENY,), {"unattestable": True}, False, 2, ""),
    (None, (ASK,), {"unattestable": True}, False, 1, ""),  # unattestable defers, as in RTK
    ("cmd", (), {}, False, 3, "cmd"),  # identity is reported by `rewrite`
]


@pytest.mark.parametrize(("rewrite", "hits", "flags", "openclaw", "code", "out"), EXIT_TABLE)
def test_exit_codes(rewrite, hits, flags, openclaw, code, out):
    decision = decide(line(1, **flags), evaluation(hits), rewrite)
    assert exit_code(decision, openclaw) == (code, out)
