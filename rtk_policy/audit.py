"""The audit log: one hash-chained JSON record per `hook`/`rewrite` decision (DESIGN §8).

`record()` is called on the hot path of every hook process, so this module imports only the standard
library. Lines are rendered by structlog's `JSONRenderer` when structlog is already loaded (a
long-lived process calls `use_structlog()`); otherwise by `_json_line`, which produces the same
bytes (`json.dumps(event_dict)`, as `JSONRenderer` does) without structlog's 40-90 ms import. A
test keeps the two byte-identical.

Record fields, in order: time, decision_id, agent, session_id, tool_use_id, cwd, command, segments
(text, program, depth, rules, rewrite_rule), verdict, rewrite {before, after}, rule_ids,
audit_rule_ids, reasons, warnings, gate, policy_digest, backend, eval_us, total_us, errors, prev,
hash.
"""

from __future__ import annotations

import json
import os
import sys
import time
from _thread import get_ident
from collections.abc import Callable, Iterator
from typing import Any

from rtk_policy import audit_store
from rtk_policy.audit_encode import Event, Shared, finish
from rtk_policy.audit_redact import compile_extra, redact

_renderer: Callable[[dict[str, Any]], str] | None = None
#: thread id -> the list collecting that thread's records instead of writing them (see `defer`)
_deferred: dict[int, list[tuple[str, dict[str, Any], int]]] = {}
#: (text, extra patterns) -> redacted text, for a long-lived process that sees the same commands
_redacted: dict[tuple[str, tuple[Any, ...]], str] = {}
_REDACTED_KEEP = 4096
_REDACTED_LONGEST = 2048  #: longer texts are redacted every time (the memo stays under ~10 MB)
#: (outcome id, decision id, command, ...) -> the record fields they decide (see `_decision_fields`)
_fields: dict[tuple[Any, ...], tuple[Any, Any, Shared]] = {}
_FIELDS_KEEP = 1024


def default_audit_path() -> str:
    """`$XDG_STATE_HOME/rtk-policy/audit.jsonl`, with `~/.local/state` when it is unset."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state"
    )
    return os.path.join(base, "rtk-policy", "audit.jsonl")


def audit_path(config: Any) -> str:
    """The log path a `Config` selects: its `audit_path` (with `~` expanded) or the default."""
    configured = getattr(config, "audit_path", "") or ""
    environ = os.environ
    key = (configured, environ.get("XDG_STATE_HOME"), environ.get("HOME"))
    found = _paths.get(key)
    if found is None:
        found = os.path.expanduser(configured) if configured else default_audit_path()
        if len(_paths) >= 64:
            _paths.clear()
        _paths[key] = found
    return found


#: (configured path, $XDG_STATE_HOME, $HOME) -> the log path (what `audit_path` depends on)
_paths: dict[tuple[Any, ...], str] = {}


def use_structlog() -> None:
    """Render lines with structlog's `JSONRenderer` from now on (for long-lived processes).

    Its serializer is `json.dumps` with the encoder built once (`audit_store.json_encoder`).
    """
    global _renderer
    import structlog

    renderer = structlog.processors.JSONRenderer(serializer=_dumps)
    _renderer = lambda event: renderer(None, "", event)  # noqa: E731


_encoders: dict[Callable[[Any], Any], Callable[[Any], str]] = {}


def _dumps(obj: Any, default: Callable[[Any], Any] = repr) -> str:
    """`json.dumps(obj, default=default)`, one prebuilt encoder per `default`."""
    encode = _encoders.get(default)
    if encode is None:
        encode = _encoders[default] = audit_store.json_encoder(default)
    return encode(obj)


def _json_line(event: dict[str, Any]) -> str:
    """What structlog's `JSONRenderer()` renders for `event`, without importing structlog."""
    return _dumps(event)


def _render(event: dict[str, Any]) -> str:
    if _renderer is None and "structlog" in sys.modules:
        use_structlog()
    return (_renderer or _json_line)(event)


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


def record(
    config: Any,
    *,
    agent: str,
    request: dict[str, Any],
    outcome: Any = None,
    decision: Any = None,
    total_us: int = 0,
    error: str = "",
) -> None:
    """Append the audit record of one decision. Never raises, never writes to stdout.

    `config` is a `rtk_policy.config.Config`; `outcome` an `engine.Outcome` when the engine ran,
    `decision` a `Decision` when only that is known; `request` holds session_id, tool_use_id, cwd
    and command. On failure, one line goes to stderr and the decision is not recorded.
    """
    try:
        if not getattr(config, "audit_enabled", True):
            return
        event = build_event(config, agent, request, outcome, decision, total_us, error)
        max_bytes = int(getattr(config, "audit_max_bytes", 0) or 0)
        collecting = _deferred.get(get_ident())
        if collecting is not None:
            collecting.append((audit_path(config), event, max_bytes))
            return
        audit_store.append(
            audit_path(config), lambda prev: (_finish(event, prev), event["hash"]), max_bytes
        )
    except Exception as failure:  # noqa: BLE001 - the audit log must never break a hook
        try:
            sys.stderr.write(f"rtk-policy: audit log not written: {failure}\n")
        except Exception:  # noqa: BLE001
            pass


def defer(records: list[tuple[str, dict[str, Any], int]] | None) -> None:
    """From now on, this thread's `record` calls add their record to `records` instead of writing it
    (None: write again). The caller must pass the list to `write_records` (the resident http server
    writes a batch of decisions with one locked append)."""
    if records is None:
        _deferred.pop(get_ident(), None)
    else:
        _deferred[get_ident()] = records


def write_records(records: list[tuple[str, dict[str, Any], int]]) -> None:
    """Append records collected by `defer`, in order, chained; one locked append per log file run.

    Never raises: on failure, one line goes to stderr (as `record` does).
    """
    start = 0
    while start < len(records):
        path, _, max_bytes = records[start]
        end = start + 1
        while end < len(records) and records[end][0] == path and records[end][2] == max_bytes:
            end += 1
        events = [event for _, event, _ in records[start:end]]
        start = end
        try:
            audit_store.append(path, lambda prev, events=events: _chain(events, prev), max_bytes)
        except Exception as failure:  # noqa: BLE001 - the audit log must never break a hook
            try:
                sys.stderr.write(f"rtk-policy: audit log not written: {failure}\n")
            except Exception:  # noqa: BLE001
                pass


def _chain(events: list[dict[str, Any]], prev: str) -> tuple[str, str]:
    """The lines of `events`, each chained to the one before, the first to `prev`; and the last
    one's hash."""
    lines = []
    for event in events:
        lines.append(_finish(event, prev))
        prev = event["hash"]
    return "".join(lines), prev


def _finish(event: dict[str, Any], prev: str) -> str:
    """The line for `event` chained to `prev`: adds `prev` and `hash`, renders, adds the newline.

    A record built by `build_event` is encoded by `audit_encode` (the same bytes, its decision's
    fields encoded once); any other goes through the renderer and `canonical_hash`.
    """
    line = finish(event, prev, audit_store.sha256)
    if line is not None:
        return line + "\n"
    event["prev"] = prev
    event["hash"] = audit_store.canonical_hash(event)
    return _render(event) + "\n"


def build_event(
    config: Any,
    agent: str,
    request: dict[str, Any],
    outcome: Any,
    decision: Any,
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
    outcome: Any, decision: Any, command: str, extra: Any, errors: Any, error: str
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


def iter_records(path: str) -> Iterator[dict[str, Any]]:
    """Every record of the one log file at `path` (not the rotated ones); bad lines are skipped."""
    if not os.path.exists(path):
        return
    for _number, line in audit_store.read_lines(path):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            yield value


def iter_all_records(path: str) -> Iterator[dict[str, Any]]:
    """Every record of the log at `path` and its rotated files, oldest first."""
    for name in audit_store.log_files(path):
        yield from iter_records(name)
