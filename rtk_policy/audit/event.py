"""The fields of one audit record (DESIGN §8), redacted; `audit/log.py` chains and writes them.

`build_event` is called on the hot path of every hook process: the fields a decision determines
(command to eval_us, and the errors) are built once per outcome (`_decision_fields`, remembered for
the outcomes a long-lived process returns again) and encoded once (`audit_encode.Shared`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from rtk_policy.audit.encode import Event, Shared
from rtk_policy.audit.redact import compile_extra, redact

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rtk_policy.config.load import Config
    from rtk_policy.decision import Decision
    from rtk_policy.engine.pipeline import Outcome

#: (text, extra patterns) -> redacted text, for a long-lived process that sees the same commands
_redacted: dict[tuple[str, tuple[Any, ...]], str] = {}
_REDACTED_KEEP = 4096
_REDACTED_LONGEST = 2048  #: longer texts are redacted every time (the memo stays under ~10 MB)
#: (outcome id, decision id, command, ...) -> the record fields they decide (see `_decision_fields`)
_fields: dict[tuple[Any, ...], tuple[Any, Any, Shared]] = {}
_FIELDS_KEEP = 1024


def _now() -> str:
    """UTC time with microseconds, ISO-8601 (tests replace this to freeze time)."""
    global _second
    now = time.time_ns() // 1000
    seconds, micros = divmod(now, 1_000_000)
    second = _second  # one read: another thread may replace it meanwhile
    if second[0] != seconds:  # the formatted second is kept: a busy process formats it once
        second = _second = (seconds, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)))
    return f"{second[1]}.{micros:06d}Z"


_second: tuple[Any, str] = (None, "")  #: [whole seconds, their ISO-8601 text] of the last `_now`


def _new_id() -> str:
    """A uuid4 as 32 hex digits (tests replace this for stable snapshots)."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40  # version 4
    raw[8] = (raw[8] & 0x3F) | 0x80  # RFC 4122 variant
    return raw.hex()


def build_event(
    config: Config,
    agent: str,
    request: dict[str, Any],
    outcome: Outcome | None,
    decision: Decision | None,
    total_us: int,
    error: str,
) -> dict[str, Any]:
    """The record of one decision, redacted, without `prev` and `hash`."""
    extra, errors = compile_extra(getattr(config, "audit_redact", ()) or ())
    if outcome is not None and decision is None:
        decision = outcome.decision
    command = request.get("command")
    if not isinstance(command, str):
        command = getattr(decision, "command", "") if decision is not None else ""
    shared = _decision_fields(outcome, decision, command, extra, errors, error)
    fields = {
        "time": _now(),
        "decision_id": _new_id(),
        "agent": agent,
        "session_id": str(request.get("session_id") or ""),
        "tool_use_id": str(request.get("tool_use_id") or ""),
        "cwd": str(request.get("cwd") or ""),
        **shared.fields,
        "total_us": int(total_us or 0),
        "errors": shared.errors,
    }
    return Event(fields, shared)


def _decision_fields(
    outcome: Outcome | None,
    decision: Decision | None,
    command: str,
    extra: Any,
    errors: Any,
    error: str,
) -> Shared:
    """The record's fields from `command` to `eval_us`, and its `errors`, all redacted.

    A pure function of its arguments: remembered for the outcome objects a long-lived process
    returns again (the resident server's memo hits). The remembered lists and dicts are shared by
    the records that use them and never changed.
    """
    key = (id(outcome), id(decision), command, extra, errors, error)
    found = _fields.get(key)
    if found is not None and found[0] is outcome and found[1] is decision:
        return found[2]

    def clean(text: Any) -> Any:
        if not isinstance(text, str) or len(text) > _REDACTED_LONGEST:
            return redact(text, extra) if isinstance(text, str) else text
        key = (text, extra)
        found = _redacted.get(key)
        if found is None:
            found = redact(text, extra)
            if len(_redacted) >= _REDACTED_KEEP:
                _redacted.clear()
            _redacted[key] = found
        return found

    evaluation = getattr(outcome, "evaluation", None)
    all_errors = [*errors, *getattr(evaluation, "errors", ())]
    for problem in (getattr(decision, "error", ""), error):
        if problem:
            all_errors.append(problem)
    middle = {
        "command": clean(command),
        "segments": _segments(outcome, clean),
        "verdict": getattr(decision, "verdict", None),
        "rewrite": {
            "before": clean(command),
            "after": clean(getattr(decision, "rewritten", None)),
        },
        "rule_ids": list(getattr(decision, "rule_ids", ())),
        "audit_rule_ids": list(getattr(decision, "audit_rule_ids", ())),
        "reasons": [clean(text) for text in getattr(decision, "reasons", ())],
        "warnings": [clean(text) for text in getattr(decision, "warnings", ())],
        "gate": getattr(decision, "gate", ""),
        "policy_digest": getattr(evaluation, "policy_digest", ""),
        "backend": getattr(evaluation, "backend", ""),
        "eval_us": int(getattr(evaluation, "eval_us", 0) or 0),
    }
    shared = Shared(middle, [clean(text) for text in all_errors])
    if outcome is not None and len(command) <= _REDACTED_LONGEST:
        if len(_fields) >= _FIELDS_KEEP:
            _fields.clear()
        _fields[key] = (outcome, decision, shared)  # holding them keeps the ids unique
    return shared


def _segments(outcome: Any, clean: Callable[[Any], Any]) -> list[dict[str, Any]]:
    """One entry per segment: its text, program, depth, matched rules and rewrite rule."""
    if outcome is None:
        return []
    results = {result.segment_index: result for result in outcome.evaluation.results}
    segments = []
    for segment in outcome.command_line.segments:
        result = results.get(segment.index)
        rewrite = getattr(result, "rewrite", None)
        segments.append(
            {
                "text": clean(segment.text),
                "program": segment.program,
                "depth": segment.depth,
                "rules": [hit.rule.id for hit in getattr(result, "permission_hits", ())],
                "rewrite_rule": rewrite.rule.id if rewrite is not None else None,
            }
        )
    return segments
