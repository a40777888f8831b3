"""`re_matches(text, pattern)`: CEL's `matches` with a process-wide cache of compiled patterns.

cel-expr compiles the RE2 pattern of `x.matches(p)` on every call, and cel-python hands it to `re2.search`
each time; a long pattern then costs milliseconds per segment. The compiler rewrites `x.matches(p)` into
`re_matches(x, p)` (see `fast_source.py`), which compiles each pattern once per process. Semantics are
CEL's: RE2 syntax, partial match (search). RE2 comes from `google-re2` (a cel-python dependency); without
it, Python's `re` is used (same answers for the patterns of the shipped packs).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

try:  # pragma: no branch
    import re2 as _engine

    ENGINE = "re2"
    _OPTIONS: tuple[object, ...] = (_engine.Options(),)
    _OPTIONS[0].log_errors = False  # type: ignore[attr-defined]  # errors are raised, not logged
except ImportError:  # pragma: no cover - cel-expr-only installs
    import re as _engine  # type: ignore[no-redef]

    ENGINE = "re"
    _OPTIONS = ()

_SEARCH: dict[str, Callable[[str], Any]] = {}
_LIMIT = 4096


def _searcher(pattern: str) -> Callable[[str], Any]:
    found = _SEARCH.get(pattern)
    if found is None:
        if len(_SEARCH) >= _LIMIT:
            _SEARCH.clear()
        found = _engine.compile(pattern, *_OPTIONS).search
        _SEARCH[pattern] = found
    return found


def re_matches(text: str, pattern: str) -> bool:
    """True when the RE2 `pattern` matches somewhere in `text` (CEL `text.matches(pattern)`).

    An invalid pattern raises, which makes the rule an evaluation error, as with `matches`.
    """
    return _searcher(pattern)(text) is not None
