"""`re_matches(text, pattern)`: CEL's `matches` with a process-wide cache of compiled patterns.

cel-expr compiles the RE2 pattern of `x.matches(p)` on every call, and cel-python hands it to `re2.search`
each time; a long pattern then costs milliseconds per segment. The compiler rewrites `x.matches(p)` into
`re_matches(x, p)` (see `fast_source.py`), which compiles each pattern once per process. Semantics are
CEL's: RE2 syntax, partial match (search). RE2 comes from `google-re2` (a cel-python dependency); without
it, Python's `re` is used (same answers for the patterns of the shipped packs).
"""

from __future__ import annotations

from collections.abc import Callable

try:  # pragma: no branch
    import re2 as _engine

    ENGINE = "re2"
    _OPTIONS: tuple[object, ...] = (_engine.Options(),)
    _OPTIONS[0].log_errors = False  # type: ignore[attr-defined]  # errors are raised, not logged
    _OPTIONS[0].never_capture = True  # type: ignore[attr-defined]  # a yes/no answer needs no groups
except ImportError:  # pragma: no cover - cel-expr-only installs
    import re as _engine  # type: ignore[no-redef]

    ENGINE = "re"
    _OPTIONS = ()

_SEARCH: dict[str, Callable[[str], bool]] = {}
_LIMIT = 4096


def _searcher(pattern: str) -> Callable[[str], bool]:
    found = _SEARCH.get(pattern)
    if found is None:
        if len(_SEARCH) >= _LIMIT:
            _SEARCH.clear()
        found = _compile(pattern)
        _SEARCH[pattern] = found
    return found


def _compile(pattern: str) -> Callable[[str], bool]:
    """A `text -> bool` search for `pattern`.

    With google-re2, the compiled RE2 object is called directly on the UTF-8 bytes (what the package's
    `search` does, without building a match object: ~1 µs instead of ~3 µs per call).
    """
    compiled = _engine.compile(pattern, *_OPTIONS)
    low = getattr(compiled, "_regexp", None)
    anchor = getattr(getattr(_engine, "_Anchor", None), "UNANCHORED", None)
    if ENGINE != "re2" or low is None or anchor is None:  # pragma: no cover - other re2 builds
        search = compiled.search
        return lambda text: search(text) is not None
    match, missing = low.Match, _engine._NULL_SPAN

    def search_bytes(text: str) -> bool:
        data = text.encode("utf-8")
        return match(anchor, data, 0, len(data))[0] != missing  # type: ignore[no-any-return]

    return search_bytes


def searcher(pattern: str) -> Callable[[str], bool]:
    """The cached `text -> bool` search of an RE2 `pattern` (raises for an invalid pattern)."""
    return _searcher(pattern)


def re_matches(text: str, pattern: str) -> bool:
    """True when the RE2 `pattern` matches somewhere in `text` (CEL `text.matches(pattern)`).

    An invalid pattern raises, which makes the rule an evaluation error, as with `matches`.
    """
    return _searcher(pattern)(text)
