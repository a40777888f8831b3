"""Both encodings of one audit record, with the fields its decision fixes encoded once.

A record is encoded twice: as its log line (what structlog's `JSONRenderer` writes, that is
`json.dumps(event)`: insertion order, `", "` and `": "`, ASCII escapes) and as the canonical JSON
its hash covers (`audit_store.canonical_hash`: sorted keys, compact, UTF-8). In a long-lived
process the same decision is recorded again and again (the resident server's memo hits), and most
of a record (command, segments, verdict, rewrite, rules, reasons, policy digest, errors …) is fixed
by the decision: `Shared` holds those fields and their two encodings, made once; a record
(`Event`) then costs the encoding of its few own strings and numbers. The text is exactly what the
two `json.dumps` calls give (a test compares them on many records); anything unexpected in a record
(a field added, changed or of another type) makes `finish` decline, and the caller encodes it
whole.
"""

from __future__ import annotations

from rtk_policy.util.json_codec import quote_ascii, quote_unicode

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: The record's own fields before the shared ones (strings), in the line's order.
HEAD = ("time", "decision_id", "agent", "session_id", "tool_use_id", "cwd")
_CANON_KEYS = {key: f'"{key}":' for key in (*HEAD, "total_us", "prev")}


class Shared:
    """The fields one decision fixes (`fields`, in line order, and `errors`), with their encodings
    made on first use. Never changed once built: records share these very objects."""

    __slots__ = (
        "fields",
        "errors",
        "size",
        "_line",
        "_errors_line",
        "_template",
        "_slots",
        "_pairs",
    )

    def __init__(self, fields: dict[str, Any], errors: list[Any]) -> None:
        self.fields = fields
        self.errors = errors
        #: a record's fields: head, shared, total_us, errors
        self.size = len(HEAD) + len(fields) + 2
        self._line: str | None = None

    def _encode(self) -> None:
        from rtk_policy.util.json_codec import encoder

        line = encoder(repr)
        canon = encoder(str, sort_keys=True, compact=True, ensure_ascii=False)
        self._line = line(self.fields)[1:-1]
        self._errors_line = line(self.errors)
        shared = {key: f'"{key}":' + canon(value) for key, value in self.fields.items()}
        shared["errors"] = '"errors":' + canon(self.errors)
        order = sorted((*HEAD, *self.fields, "total_us", "errors", "prev"))
        #: the canonical items in order: the shared ones encoded, the others filled per record
        self._template = [shared.get(key) for key in order]
        self._slots = tuple(order.index(key) for key in (*HEAD, "total_us", "prev"))
        self._pairs = tuple(self.fields.items())

    def finish(self, event: dict[str, Any], prev: str, sha256: Any) -> str | None:
        """Set `event`'s `prev` and `hash` and return its line (no newline), or None (nothing set)
        when `event` is not exactly this decision's record with string head fields."""
        if not self.fields or len(event) != self.size or event.get("errors") is not self.errors:
            return None
        total = event.get("total_us")
        if type(total) is not int or type(prev) is not str:
            return None
        if self._line is None:
            self._encode()
        get = event.get
        for key, value in self._pairs:
            if get(key, event) is not value:
                return None
        values: list[Any] = [get(key) for key in HEAD]  # each a str, checked here:
        for value in values:
            if type(value) is not str:
                return None
        parts: list[Any] = self._template.copy()  # its None slots are filled here:
        slots = self._slots
        for index, key, value in zip(range(len(HEAD)), HEAD, values):  # noqa: B905 - same lengths
            parts[slots[index]] = _CANON_KEYS[key] + quote_unicode(value)
        parts[slots[-2]] = '"total_us":' + int.__repr__(total)
        parts[slots[-1]] = '"prev":' + quote_unicode(prev)
        digest = sha256(("{" + ",".join(parts) + "}").encode("utf-8")).hexdigest()
        event["prev"] = prev
        event["hash"] = digest
        a, b, c, d, e, f = map(quote_ascii, values)
        return (
            f'{{"time": {a}, "decision_id": {b}, "agent": {c}, "session_id": {d}, '
            f'"tool_use_id": {e}, "cwd": {f}, {self._line}, "total_us": {int.__repr__(total)}, '
            f'"errors": {self._errors_line}, "prev": {quote_ascii(prev)}, '
            f'"hash": "{digest}"}}'
        )


class Event(dict):
    """An audit record: a plain dict to every reader, which knows the `Shared` fields it holds."""

    __slots__ = ("shared",)

    def __init__(self, fields: dict[str, Any], shared: Shared | None) -> None:
        super().__init__(fields)
        self.shared = shared


def finish(event: dict[str, Any], prev: str, sha256: Any) -> str | None:
    """`Shared.finish` for an `Event` that has shared fields; None for any other record."""
    shared = getattr(event, "shared", None)
    return shared.finish(event, prev, sha256) if shared is not None else None
