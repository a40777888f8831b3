"""JSON read and written by CPython's own C codec (`_json`), without importing the `json` package.

`import json` compiles three regexes its C codec never uses, and so imports `re` and `enum`: of a
cold hook that is ~6.7 ms (`benchmarks/RESULTS.md`, session 18: `re2` alone 17.5 ms against `re2`,
`re` and `json` 24.2 ms, bare Python 13.4 ms, interleaved). The scanner and the encoder here are
the ones `json.loads` and `json.dumps` call, built the same way, so the results are the same;
`json` itself is imported only where its Python code is needed: an interpreter without `_json`,
bytes in an encoding other than UTF-8, and a document that is not JSON, whose error `json` words
(a `json.JSONDecodeError`, a `ValueError`).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

try:
    import _json
except ImportError:  # pragma: no cover - an interpreter without the C accelerator
    _json = None  # type: ignore[assignment]

#: JSON's whitespace (RFC 8259), the only characters allowed around a document
_WHITESPACE = " \t\n\r"
#: what `json.loads` turns the non-standard constants into
_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}


class _ScannerOptions:
    """The attributes the C scanner reads from its `json.JSONDecoder` (its defaults)."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = _CONSTANTS.__getitem__


_scan = _json.make_scanner(_ScannerOptions()) if _json is not None else None  # type: ignore[arg-type]


def loads(text: str | bytes | bytearray) -> Any:
    """`json.loads(text)`: the value of the JSON document `text` (a `ValueError` when it is not
    one: `json.JSONDecodeError`, or `UnicodeDecodeError` for bytes that are not UTF-8)."""
    if not isinstance(text, str):
        if _scan is None or text[:3] == b"\xef\xbb\xbf" or 0 in text[:4]:  # a BOM, UTF-16/32
            return _json_loads(text)
        text = bytes(text).decode("utf-8", "surrogatepass")  # what `json.loads` decodes with
    elif _scan is None:
        return _json_loads(text)
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = _scan(text, start)
    except Exception:  # noqa: BLE001 - not JSON: `json` parses it again and raises its error
        # (the C scanner reports a syntax error with `json.decoder.JSONDecodeError`, which it
        # takes from `sys.modules` only: without `json` imported that is a `SystemError`)
        return _json_loads(text)
    if end != len(text) and text[end:].strip(_WHITESPACE):
        return _json_loads(text)  # "Extra data"
    return value


def _json_loads(text: str | bytes | bytearray) -> Any:
    """`json.loads` itself, for what the fast path leaves to it."""
    import json

    return json.loads(text)


if _json is not None:
    #: `text` as a JSON string with every non-ASCII character escaped, quotes included
    #: (`json.encoder.encode_basestring_ascii`)
    quote_ascii: Callable[[str], str] = _json.encode_basestring_ascii
    #: `text` as a JSON string, quotes included, non-ASCII kept (`json.encoder.encode_basestring`)
    quote_unicode: Callable[[str], str] = _json.encode_basestring
else:  # pragma: no cover - an interpreter without the C accelerator
    from json.encoder import encode_basestring as quote_unicode
    from json.encoder import encode_basestring_ascii as quote_ascii


def encoder(
    default: Callable[[Any], Any] | None = None,
    sort_keys: bool = False,
    compact: bool = False,
    ensure_ascii: bool = True,
    allow_nan: bool = True,
) -> Callable[[Any], str]:
    """`lambda obj: json.dumps(obj, default=default, sort_keys=sort_keys, ensure_ascii=ensure_ascii,
    allow_nan=allow_nan, separators=(",", ":") if compact else None)`, built once for many calls.

    No check for circular containers (meant for fresh trees of plain values: a cycle recurses
    until `RecursionError`); `dumps` checks, as `json.dumps` does. Without `default`, a value
    JSON cannot hold raises `TypeError`.
    """
    return _encoder(default, sort_keys, compact, ensure_ascii, allow_nan, circular_check=False)


def dumps(
    obj: Any,
    *,
    compact: bool = False,
    ensure_ascii: bool = True,
    sort_keys: bool = False,
    allow_nan: bool = True,
    default: Callable[[Any], Any] | None = None,
) -> str:
    """`json.dumps(obj, …)` with the same options (`compact` for `separators=(",", ":")`)."""
    encode = _encoder(default, sort_keys, compact, ensure_ascii, allow_nan, circular_check=True)
    return encode(obj)


def _encoder(
    default: Callable[[Any], Any] | None,
    sort_keys: bool,
    compact: bool,
    ensure_ascii: bool,
    allow_nan: bool,
    circular_check: bool,
) -> Callable[[Any], str]:
    """The encoding function for these options (see `encoder` and `dumps`)."""
    item, key = (",", ":") if compact else (", ", ": ")
    make = getattr(_json, "make_encoder", None)  # private, untyped: None without C
    if make is None:  # pragma: no cover - an interpreter without the C accelerator
        import json

        return json.JSONEncoder(
            default=default or _not_json, sort_keys=sort_keys, ensure_ascii=ensure_ascii,
            allow_nan=allow_nan, check_circular=circular_check, separators=(item, key),
        ).encode  # fmt: skip
    strings = quote_ascii if ensure_ascii else quote_unicode

    def chunks(markers: dict[int, Any] | None) -> Callable[[Any, int], Any]:
        """The C encoder; `markers` is its table of the containers being encoded (None: none)."""
        return make(markers, default or _not_json, strings, None, key, item, sort_keys, False,
                    allow_nan)  # fmt: skip

    if circular_check:  # a fresh table per call
        return lambda obj: "".join(chunks({})(obj, 0))
    built = chunks(None)
    return lambda obj: "".join(built(obj, 0))


def _not_json(obj: Any) -> Any:
    """`json.JSONEncoder.default`: a value JSON cannot hold is a `TypeError`."""
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")
