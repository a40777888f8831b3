"""Combining per-segment rule results into one `Decision` (DESIGN §6). A pure function, table-tested."""

from __future__ import annotations

from rtk_policy.util import record

#: Verdicts of a whole command. "none" means no opinion: the host's own rules decide.
VERDICT_ALLOW, VERDICT_ASK, VERDICT_DENY, VERDICT_NONE = "allow", "ask", "deny", "none"


@record.frozen
class Decision:
    """What rtk-policy answers for one command."""

    verdict: str  #: "allow" | "ask" | "deny" | "none"
    command: str  #: the command as given
    rewrite: (
        str | None
    )  #: the rewrite the policies selected, before any gating (None: none selected)
    rewritten: str | None  #: the command the host should run instead (None: run it unchanged)
    reasons: tuple[str, ...]  #: messages of the deciding rules (deny or ask), for the agent or user
    rule_ids: tuple[str, ...]  #: ids of the enforce-mode rules that fired (permission and rewrite)
    warnings: tuple[str, ...]  #: messages of warn-mode rules that matched
    audit_rule_ids: tuple[str, ...]  #: ids of audit- and warn-mode rules that matched
    gate: str  #: why a selected rewrite was not applied: "", "unattestable", "refused", "identity", "deny"
    error: str = ""  #: an internal error that forced the fail mode, "" when none


def decide(
    command_line: object,
    evaluation: object,
    rewrite: str | None,
    recheck: object | None = None,
) -> Decision:
    """Combine the rule results of one command into a `Decision` (DESIGN §6).

    `command_line` is a shell.CommandLine, `evaluation` its policy Evaluation, `rewrite` the command the
    rewrite rules selected (None when none did) and `recheck` the Evaluation of that rewritten command.
    """
    if any(result.permission_hits for result in evaluation.results):  # type: ignore[attr-defined]
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
        and any(result.permission_hits for result in recheck.results)  # type: ignore[attr-defined]
    ):
        recheck_hits = _enforced_hits(recheck)
        if any(segment_verdict(segment_hits) == VERDICT_DENY for segment_hits in recheck_hits):
            verdict = VERDICT_DENY
            reasons = _reasons(recheck_hits, VERDICT_DENY)
    rewritten, gate = _gate(command_line, rewrite, verdict)
    return Decision(
        verdict=verdict,
        command=command_line.text,  # type: ignore[attr-defined]
        rewrite=rewrite,
        rewritten=rewritten,
        reasons=reasons,
        rule_ids=_fired_rule_ids(evaluation),
        warnings=warnings,
        audit_rule_ids=audit_rule_ids,
        gate=gate,
    )


def segment_verdict(hits: tuple) -> str:
    """The verdict of one segment from its enforce-mode permission hits: deny > ask > allow > none."""
    decisions = {hit.rule.decision for hit in hits}
    for verdict in (VERDICT_DENY, VERDICT_ASK, VERDICT_ALLOW):
        if verdict in decisions:
            return verdict
    return VERDICT_NONE


def _all_hits(evaluation: object) -> list:
    return [hit for result in evaluation.results for hit in result.permission_hits]  # type: ignore[attr-defined]


def _enforced_hits(evaluation: object) -> list[tuple]:
    """Per segment, the permission hits of enforce-mode rules."""
    return [
        tuple(hit for hit in result.permission_hits if hit.rule.mode == "enforce")
        for result in evaluation.results  # type: ignore[attr-defined]
    ]


def _combine(command_line: object, evaluation: object, hits: list[tuple]) -> str:
    """deny > ask > allow (every segment allowed, the whole attestable) > none. A guessed copy of a
    command (`Segment.guessed`, whose denies the policy stage made asks) counts only when it asks."""
    segments = command_line.segments  # type: ignore[attr-defined]
    verdicts = [
        segment_verdict(segment_hits)
        for result, segment_hits in zip(evaluation.results, hits, strict=True)  # type: ignore[attr-defined]
        if segment_hits or not _guessed(segments, result.segment_index)
    ]
    if VERDICT_DENY in verdicts:
        return VERDICT_DENY
    if VERDICT_ASK in verdicts:
        return VERDICT_ASK
    if verdicts and all(v == VERDICT_ALLOW for v in verdicts) and _attestable(command_line):
        return VERDICT_ALLOW
    return VERDICT_NONE


def _guessed(segments: tuple, index: int) -> bool:
    return index < len(segments) and segments[index].guessed


def _attestable(command_line: object) -> bool:
    """The engine can vouch for what will run: parsed, no hidden program, no unattestable construct."""
    return not (
        command_line.parse_error  # type: ignore[attr-defined]
        or command_line.unattestable  # type: ignore[attr-defined]
        or any(segment.dynamic_program for segment in command_line.segments)  # type: ignore[attr-defined]
    )


def _reasons(hits: list[tuple], verdict: str) -> tuple[str, ...]:
    return _dedupe(
        hit.message for segment_hits in hits for hit in segment_hits if hit.rule.decision == verdict
    )


def _fired_rule_ids(evaluation: object) -> tuple[str, ...]:
    ids: list[str] = []
    for result in evaluation.results:  # type: ignore[attr-defined]
        ids.extend(hit.rule.id for hit in result.permission_hits if hit.rule.mode == "enforce")
        if result.rewrite is not None:
            ids.append(result.rewrite.rule.id)
    return _dedupe(ids)


def _gate(command_line: object, rewrite: str | None, verdict: str) -> tuple[str | None, str]:
    """The rewrite the host should run, and why a rewrite is (or would be) withheld.

    An unattestable command is marked so even when no rewrite was selected: `rewrite` then defers it
    (exit 1) whatever the rules asked, as RTK does (reference §2.1).
    """
    if verdict == VERDICT_DENY:
        return None, "deny" if rewrite is not None else ""
    if command_line.unattestable:  # type: ignore[attr-defined]
        return None, "unattestable"
    if rewrite is None:
        return None, ""
    if rewrite == command_line.text:  # type: ignore[attr-defined]
        return None, "identity"
    return rewrite, ""


def _dedupe(items: object) -> tuple[str, ...]:
    return tuple(dict.fromkeys(item for item in items if item))  # type: ignore[attr-defined]
