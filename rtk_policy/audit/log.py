"""The audit log: one hash-chained JSON record per `hook`/`rewrite` decision (DESIGN §8).

`record()` is called on the hot path of every hook process, so this module imports only the standard
library. Lines are rendered by structlog's `JSONRenderer` when structlog is already loaded (a
long-lived process calls `use_structlog()`); otherwise by `_json_line`, which produces the same
bytes (`json.dumps(event_dict)`, as `JSONRenderer` does) without structlog's 40-90 ms import. A
test keeps the two byte-identical.

Record fields (built by `audit_event.build_event`), in order: time, decision_id, agent,
session_id, tool_use_id, cwd, command, segments (text, program, depth, rules, rewrite_rule),
verdict, rewrite {before, after}, rule_ids, audit_rule_ids, reasons, warnings, gate,
policy_digest, backend, eval_us, total_us, errors, prev, hash.
"""

from __future__ import annotations

import os
import sys
from _thread import get_ident
from collections.abc import Callable, Iterator

from rtk_policy.audit import store as audit_store
from rtk_policy.audit.encode import finish
from rtk_policy.audit.event import build_event
from rtk_policy.config.paths import audit_log_file, audit_spool_file
from rtk_policy.util import environ, json_codec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rtk_policy.config.load import Config
    from rtk_policy.decision import Decision
    from rtk_policy.engine.pipeline import Outcome

_renderer: Callable[[dict[str, Any]], str] | None = None
#: thread id -> the list collecting that thread's records instead of writing them (see `defer`)
_deferred: dict[int, list[tuple[str, dict[str, Any], Any]]] = {}


def default_audit_path() -> str:
    """`$XDG_STATE_HOME/rtk-policy/audit.jsonl`, with `~/.local/state` when it is unset."""
    return audit_log_file()


def audit_path(config: Any) -> str:
    """The log path a `Config` selects: its `audit_path` (with `~` expanded) or the default."""
    configured = getattr(config, "audit_path", "") or ""
    key = (configured, environ.get("XDG_STATE_HOME"), environ.get("HOME"))
    found = _paths.get(key)
    if found is None:
        found = environ.expand_user(configured) if configured else default_audit_path()
        if len(_paths) >= 64:
            _paths.clear()
        _paths[key] = found
    return found


#: (configured path, $XDG_STATE_HOME, $HOME) -> the log path (what `audit_path` depends on)
_paths: dict[tuple[Any, ...], str] = {}


def use_structlog() -> None:
    """Render lines with structlog's `JSONRenderer` from now on (for long-lived processes).

    Its serializer is `json.dumps` with the encoder built once (`json_codec.encoder`).
    """
    global _renderer
    import structlog

    renderer = structlog.processors.JSONRenderer(serializer=_dumps)

    def render(event: dict[str, Any]) -> str:
        line = renderer(None, "", event)  # a str: `_dumps` serializes
        return line if isinstance(line, str) else line.decode("utf-8")

    _renderer = render


_encoders: dict[Callable[[Any], Any], Callable[[Any], str]] = {}


def _dumps(obj: Any, default: Callable[[Any], Any] = repr) -> str:
    """`json.dumps(obj, default=default)`, one prebuilt encoder per `default`."""
    encode = _encoders.get(default)
    if encode is None:
        encode = _encoders[default] = json_codec.encoder(default)
    return encode(obj)


def _json_line(event: dict[str, Any]) -> str:
    """What structlog's `JSONRenderer()` renders for `event`, without importing structlog."""
    return _dumps(event)


def _render(event: dict[str, Any]) -> str:
    if _renderer is None and "structlog" in sys.modules:
        use_structlog()
    return (_renderer or _json_line)(event)


def record(
    config: Config,
    *,
    agent: str,
    request: dict[str, Any],
    outcome: Outcome | None = None,
    decision: Decision | None = None,
    total_us: int = 0,
    error: str = "",
) -> None:
    """Append the audit record of one decision. Never raises, never writes to stdout.

    `outcome` is given when the engine ran, `decision` alone when only that is known; `request`
    holds session_id, tool_use_id, cwd and command. On failure, one line goes to stderr and the
    decision is not recorded.
    """
    try:
        if not getattr(config, "audit_enabled", True):
            return
        event = build_event(config, agent, request, outcome, decision, total_us, error)
        collecting = _deferred.get(get_ident())
        if collecting is not None:
            collecting.append((audit_path(config), event, config))
            return
        _write(config, audit_path(config), [event])
    except Exception as failure:  # noqa: BLE001 - the audit log must never break a hook
        try:
            sys.stderr.write(f"rtk-policy: audit log not written: {failure}\n")
        except Exception:  # noqa: BLE001
            pass


def defer(records: list[tuple[str, dict[str, Any], Any]] | None) -> None:
    """From now on, this thread's `record` calls add their record to `records` instead of writing it
    (None: write again). The caller must pass the list to `write_records` (the resident http server
    writes a batch of decisions with one locked append)."""
    if records is None:
        _deferred.pop(get_ident(), None)
    else:
        _deferred[get_ident()] = records


def write_records(records: list[tuple[str, dict[str, Any], Any]]) -> None:
    """Append records collected by `defer`, in order, chained; one locked append per run of records
    for the same log and config.

    Never raises: on failure, one line goes to stderr (as `record` does).
    """
    start = 0
    while start < len(records):
        path, _, config = records[start]
        end = start + 1
        while end < len(records) and records[end][0] == path and records[end][2] is config:
            end += 1
        events = [event for _, event, _ in records[start:end]]
        start = end
        try:
            _write(config, path, events)
        except Exception as failure:  # noqa: BLE001 - the audit log must never break a hook
            try:
                sys.stderr.write(f"rtk-policy: audit log not written: {failure}\n")
            except Exception:  # noqa: BLE001
                pass


def _write(config: Any, path: str, events: list[dict[str, Any]]) -> None:
    """Hand `events` to the audit writer service when the config names one, else append them to
    the log at `path` (`append_events`).

    A writer that cannot be reached, or is not who it must be (`writer_client`), costs a line on
    stderr: the records then go to the local spool (`audit_spool_file`, chained and anchored like
    any log, forwarded to syslog when configured, not keyed: the hook cannot read the key), never
    nowhere. The decision they record is answered as it was either way.
    """
    writer = getattr(config, "audit_writer", "") or ""
    if not writer:
        append_events(config, path, events)
        return
    from rtk_policy.audit import writer_client

    problem = writer_client.hand_over(writer, [_dumps(event) for event in events])
    if not problem:
        return
    spool = audit_spool_file()
    sys.stderr.write(
        f"rtk-policy: audit writer {writer} not used ({problem}); record kept in {spool}\n"
    )
    from rtk_policy.util import record as value

    append_events(value.evolve(config, audit_key_file=""), spool, events)


def append_events(config: Any, path: str, events: list[dict[str, Any]]) -> None:
    """Append `events` to the log at `path`, chained (keyed when `config` names a key), forwarded
    to syslog when it names a target."""
    digest, keyed = _digest(getattr(config, "audit_key_file", "") or "")
    target = getattr(config, "audit_syslog", "") or ""
    sink = None
    if target:
        from rtk_policy.audit import forward

        sink = forward.sink(target, getattr(config, "audit_syslog_facility", ""), events)
    audit_store.append(
        path,
        lambda prev: _chain(events, prev, digest),
        int(getattr(config, "audit_max_bytes", 0) or 0),
        sink,
        keyed,
    )


def _chain(
    events: list[dict[str, Any]], prev: str, digest: Callable[[bytes], Any] = audit_store.sha256
) -> tuple[str, list[str]]:
    """The lines of `events`, each chained to the one before, the first to `prev`; and their
    hashes."""
    lines = []
    hashes = []
    for event in events:
        lines.append(_finish(event, prev, digest))
        prev = event["hash"]
        hashes.append(prev)
    return "".join(lines), hashes


def _finish(
    event: dict[str, Any], prev: str, digest: Callable[[bytes], Any] = audit_store.sha256
) -> str:
    """The line for `event` chained to `prev`: adds `prev` and `hash`, renders, adds the newline.

    A record built by `build_event` is encoded by `audit_encode` (the same bytes, its decision's
    fields encoded once); any other goes through the renderer and `canonical_hash`.
    """
    line = finish(event, prev, digest)
    if line is not None:
        return line + "\n"
    event["prev"] = prev
    event["hash"] = audit_store.canonical_hash(event, digest)
    return _render(event) + "\n"


#: key file -> its HMAC-SHA256 function (the file is read once per process)
_keys: dict[str, Callable[[bytes], Any]] = {}


def _digest(key_file: str) -> tuple[Callable[[bytes], Any], bool]:
    """(the chain's hash function, keyed?): HMAC-SHA256 with the key in `key_file` when one is
    configured and readable, else plain sha256 (an unreadable key costs a line on stderr: the
    record is still written, and `audit verify --key` reports it as not keyed)."""
    if not key_file:
        return audit_store.sha256, False
    try:
        return load_key(key_file), True
    except (OSError, ValueError) as failure:
        sys.stderr.write(f"rtk-policy: audit key not used, record not keyed: {failure}\n")
        return audit_store.sha256, False


def load_key(key_file: str) -> Callable[[bytes], Any]:
    """The HMAC-SHA256 function of `key_file`, read once per process (`keyed_digest`'s errors)."""
    digest = _keys.get(key_file)
    if digest is None:
        digest = _keys[key_file] = keyed_digest(key_file)
    return digest


def keyed_digest(key_file: str) -> Callable[[bytes], Any]:
    """HMAC-SHA256 with the key held in `key_file` (its bytes as they are, at least 16).

    Raises OSError when it cannot be read, ValueError when it is too short.
    """
    from rtk_policy.util.hashing import hmac_sha256

    fd = os.open(environ.expand_user(key_file), os.O_RDONLY)
    try:
        key = os.read(fd, 4096)
    finally:
        os.close(fd)
    if len(key) < MIN_KEY_BYTES:
        raise ValueError(f"{key_file}: a key needs at least {MIN_KEY_BYTES} bytes")
    return hmac_sha256(key)


#: the shortest audit key accepted (`head -c 32 /dev/urandom` makes a good one)
MIN_KEY_BYTES = 16


def iter_records(path: str) -> Iterator[dict[str, Any]]:
    """Every record of the one log file at `path` (not the rotated ones); bad lines are skipped."""
    if not os.path.exists(path):
        return
    for _number, line in audit_store.read_lines(path):
        try:
            value = json_codec.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            yield value


def iter_all_records(path: str) -> Iterator[dict[str, Any]]:
    """Every record of the log at `path` and its rotated files, oldest first."""
    for name in audit_store.log_files(path):
        yield from iter_records(name)
