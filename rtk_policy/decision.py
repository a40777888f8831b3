"""Combining per-segment rule results into one `Decision` (DESIGN §6). A pure function,
table-tested."""

from __future__ import annotations

from operator import attrgetter

from rtk_policy.util import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Literal

    from rtk_policy.policy.model import Evaluation, RuleResult
    from rtk_policy.shell.model import CommandLine, Segment

    #: The verdict of a whole command or segment. "none" means no opinion: the host's own rules
    #: decide.
    Verdict = Literal["allow", "ask", "deny", "none"]

VERDICT_ALLOW: Verdict = "allow"
VERDICT_ASK: Verdict = "ask"
VERDICT_DENY: Verdict = "deny"
VERDICT_NONE: Verdict = "none"
#: a segment result's permission hits (read by `map`: no generator per decision)
_PERMISSION_HITS = attrgetter("permission_hits")


@record.frozen(compile_after=record.PER_COMMAND)
class Decision:
    """What rtk-policy answers for one command."""

    verdict: Verdict  #: "allow" | "ask" | "deny" | "none"
    command: str  #: the command as given
    rewrite: (
        str | None
    )  #: the rewrite the policies selected, before any gating (None: none selected)
    rewritten: str | None  #: the command the host should run instead (None: run it unchanged)
    reasons: tuple[str, ...]  #: messages of the deciding rules (deny or ask), for the agent or user
    rule_ids: tuple[str, ...]  #: ids of the enforce-mode rules that fired (permission and rewrite)
    warnings: tuple[str, ...]  #: messages of warn-mode rules that matched
    audit_rule_ids: tuple[str, ...]  #: ids of audit- and warn-mode rules that matched
    #: why a selected rewrite was not applied: "", "unattestable", "refused", "identity", "deny"
    gate: str
    error: str = ""  #: an internal error that forced the fail mode, "" when none


def decide(
    command_line: CommandLine,
    evaluation: Evaluation,
    rewrite: str | None,
    recheck: Evaluation | None = None,
) -> Decision:
    """Combine the rule results of one command into a `Decision` (DESIGN §6).

    `evaluation` holds the rule results of `command_line`, `rewrite` is the command the rewrite
    rules selected (None when none did) and `recheck` the evaluation of that rewritten command.
    """
    if any(map(_PERMISSION_HITS, evaluation.results)):
        hits = _enforced_hits(evaluation)
        verdict = _combine(command_line, evaluation, hits)
        reasons = _reasons(hits, verdict)
        warnings = _dedupe(hit.message for hit in _all_hits(evaluation) if hit.rule.mode == "warn")
        audit_rule_ids = _dedupe(
            hit.rule.id for hit in _all_hits(evaluation) if hit.rule.mode != "enforce"
        )
    else:  # no permission rule matched (most commands): no opinion, nothing to report
        verdict, reasons, warnings, audit_rule_ids = VERDICT_NONE, (), (), ()
    if (
        recheck is not None
        and verdict != VERDICT_DENY
        and any(map(_PERMISSION_HITS, recheck.results))
    ):
        recheck_hits = _enforced_hits(recheck)
        if any(segment_verdict(segment_hits) == VERDICT_DENY for segment_hits in recheck_hits):
            verdict = VERDICT_DENY
            reasons = _reasons(recheck_hits, VERDICT_DENY)
    rewritten, gate = _gate(command_line, rewrite, verdict)
    return Decision(
        verdict=verdict,
        command=command_line.text,
        rewrite=rewrite,
        rewritten=rewritten,
        reasons=reasons,
        rule_ids=_fired_rule_ids(evaluation),
        warnings=warnings,
        audit_rule_ids=audit_rule_ids,
        gate=gate,
    )


def segment_verdict(hits: tuple[RuleResult, ...]) -> Verdict:
    """The verdict of one segment from its enforce-mode permission hits: deny > ask > allow >
    none."""
    decisions = {hit.rule.decision for hit in hits}
    for verdict in (VERDICT_DENY, VERDICT_ASK, VERDICT_ALLOW):
        if verdict in decisions:
            return verdict
    return VERDICT_NONE


def _all_hits(evaluation: Evaluation) -> list[RuleResult]:
    return [hit for result in evaluation.results for hit in result.permission_hits]


def _enforced_hits(evaluation: Evaluation) -> list[tuple[RuleResult, ...]]:
    """Per segment, the permission hits of enforce-mode rules."""
    return [
        tuple(hit for hit in result.permission_hits if hit.rule.mode == "enforce")
        for result in evaluation.results
    ]


def _combine(
    command_line: CommandLine, evaluation: Evaluation, hits: list[tuple[RuleResult, ...]]
) -> Verdict:
    """deny > ask > allow (every segment allowed, the whole attestable) > none. A guessed copy of a
    command (`Segment.guessed`, whose denies the policy stage made asks) counts only when it
    asks."""
    segments = command_line.segments
    verdicts = [
        segment_verdict(segment_hits)
        for result, segment_hits in zip(evaluation.results, hits, strict=True)
        if segment_hits or not _guessed(segments, result.segment_index)
    ]
    if VERDICT_DENY in verdicts:
        return VERDICT_DENY
    if VERDICT_ASK in verdicts:
        return VERDICT_ASK
    if verdicts and all(v == VERDICT_ALLOW for v in verdicts) and _attestable(command_line):
        return VERDICT_ALLOW
    return VERDICT_NONE


def _guessed(segments: tuple[Segment, ...], index: int) -> bool:
    return index < len(segments) and segments[index].guessed


def _attestable(command_line: CommandLine) -> bool:
    """The engine can vouch for what will run: parsed, no hidden program, no unattestable
    construct."""
    return not (
        command_line.parse_error
        or command_line.unattestable
        or any(segment.dynamic_program for segment in command_line.segments)
    )


def _reasons(hits: list[tuple[RuleResult, ...]], verdict: Verdict) -> tuple[str, ...]:
    return _dedupe(
        hit.message for segment_hits in hits for hit in segment_hits if hit.rule.decision == verdict
    )


def _fired_rule_ids(evaluation: Evaluation) -> tuple[str, ...]:
    ids: list[str] = []
    for result in evaluation.results:
        if result.permission_hits:
            ids.extend(hit.rule.id for hit in result.permission_hits if hit.rule.mode == "enforce")
        if result.rewrite is not None:
            ids.append(result.rewrite.rule.id)
    return _dedupe(ids) if ids else ()


def _gate(
    command_line: CommandLine, rewrite: str | None, verdict: Verdict
) -> tuple[str | None, str]:
    """The rewrite the host should run, and why a rewrite is (or would be) withheld.

    An unattestable command is marked so even when no rewrite was selected: `rewrite` then defers it
    (exit 1) whatever the rules asked, as RTK does (reference §2.1).
    """
    if verdict == VERDICT_DENY:
        return None, "deny" if rewrite is not None else ""
    if command_line.unattestable:
        return None, "unattestable"
    if rewrite is None:
        return None, ""
    if rewrite == command_line.text:
        return None, "identity"
    return rewrite, ""


def _dedupe(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(item for item in items if item))
