"""`re_matches(text, pattern)`: CEL's `matches` with a process-wide cache of compiled patterns.

cel-expr compiles the RE2 pattern of `x.matches(p)` on every call, and cel-python hands it to
`re2.search` each time; a long pattern then costs milliseconds per segment. The compiler rewrites
`x.matches(p)` into `re_matches(x, p)` (see `fast_source.py`), which compiles each pattern once per
process. Semantics are CEL's: RE2 syntax, partial match (search). RE2 comes from `google-re2` (a
cel-python dependency), imported with the first pattern compiled; without it, Python's `re` is used
(same answers for the patterns of the shipped packs). The patterns known to compile (`known_valid`:
compiled in this process, or checked when the policies were compiled and remembered from the cache)
may be pre-tested by their required literals (`pretest_literals`, `regex_literal.py`).
"""

from __future__ import annotations

from collections.abc import Callable

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~4 ms on a cold hook)
if TYPE_CHECKING:
    from typing import Any

_SEARCH: dict[str, Callable[[str], bool]] = {}
_LIMIT = 4096
#: patterns the engine compiles (never cleared: a pattern's validity does not change)
_VALID: set[str] = set()
#: pre-test literals of valid patterns (`pretest_literals`): from the compiled cache, else worked
#: out on first need (bounded by the patterns of the loaded policies)
_LITERALS: dict[str, tuple[str, ...]] = {}
#: (module, "re2" or "re", compile options), set on the first compile
_LOADED: tuple[Any, str, tuple[object, ...]] | None = None


def _engine() -> tuple[Any, str, tuple[object, ...]]:
    """The regex engine: google-re2 when installed (imported on first use: ~2 ms), else `re`."""
    global _LOADED
    if _LOADED is None:
        try:
            import re2

            options = re2.Options()
            options.log_errors = False  # errors are raised, not logged
            options.never_capture = True  # a yes/no answer needs no groups
            _LOADED = (re2, "re2", (options,))
        except ImportError:  # pragma: no cover - cel-expr-only installs
            import re

            _LOADED = (re, "re", ())
    return _LOADED


def known_valid(pattern: str) -> bool:
    """Whether `pattern` is known to compile (so a failed pre-test cannot hide a CEL error)."""
    return pattern in _VALID


def remember_valid(patterns: Any) -> None:
    """Record `patterns` as compiling (`valid_patterns` checked them when the policies were
    compiled). A mapping (`pattern_literals`, kept in the compiled cache) also gives each pattern's
    pre-test literals, so a cold process does not work them out again."""
    _VALID.update(patterns)
    if isinstance(patterns, dict):
        _LITERALS.update(patterns)


def pattern_literals(patterns: Any) -> dict[str, tuple[str, ...]]:
    """Each of `patterns` (valid ones) with its pre-test literals (`regex_literal.py`)."""
    from rtk_policy.policy.guards.regex_literal import required_literals

    return {pattern: required_literals(pattern) for pattern in patterns}


def pretest_literals(pattern: str) -> tuple[str, ...]:
    """Texts one of which every match of `pattern` contains (`regex_literal.required_literals`),
    for a pattern known to compile; () otherwise, so that a failed pre-test cannot hide the CEL
    error of an invalid pattern."""
    found = _LITERALS.get(pattern)
    if found is None:
        if pattern not in _VALID:
            return ()
        from rtk_policy.policy.guards.regex_literal import required_literals  # not on a cached cold path

        found = _LITERALS[pattern] = required_literals(pattern)
    return found


def valid_patterns(patterns: Any) -> tuple[str, ...]:
    """The `patterns` that compile, sorted."""
    found = []
    for pattern in sorted(set(patterns)):
        try:
            _searcher(pattern)
        except Exception:  # noqa: BLE001, S112 - an invalid pattern stays a CEL error at run time
            continue
        found.append(pattern)
    return tuple(found)


def _searcher(pattern: str) -> Callable[[str], bool]:
    found = _SEARCH.get(pattern)
    if found is None:
        if len(_SEARCH) >= _LIMIT:
            _SEARCH.clear()
        found = _compile(pattern)
        _SEARCH[pattern] = found
        _VALID.add(pattern)
    return found


def _compile(pattern: str) -> Callable[[str], bool]:
    """A `text -> bool` search for `pattern`.

    With google-re2, the compiled RE2 object is called directly on the UTF-8 bytes (what the package's
    `search` does, without building a match object: ~1 µs instead of ~3 µs per call).
    """
    engine, name, options = _engine()
    compiled = engine.compile(pattern, *options)
    low = getattr(compiled, "_regexp", None)
    anchor = getattr(getattr(engine, "_Anchor", None), "UNANCHORED", None)
    if name != "re2" or low is None or anchor is None:  # pragma: no cover - other re2 builds
        search = compiled.search
        return lambda text: search(text) is not None
    match, missing = low.Match, engine._NULL_SPAN

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


_FINDERS: dict[str, Any] = {}


def re_find(pattern: str, text: str) -> str:
    """The first match of the RE2 `pattern` in `text` (group 1 when the pattern has groups), ""
    when none. RE2 matches in linear time, so a careless pattern cannot hang the hook; an invalid
    pattern raises (an evaluation error, as with `matches`)."""
    compiled = _FINDERS.get(pattern)
    if compiled is None:
        if len(_FINDERS) >= _LIMIT:
            _FINDERS.clear()
        engine, name, _ = _engine()
        compiled = engine.compile(pattern, *_capturing_options(engine, name))
        _FINDERS[pattern] = compiled
    found = compiled.search(text)
    if found is None:
        return ""
    return (found.group(1) or "") if compiled.groups else found.group(0)


def _capturing_options(engine: Any, name: str) -> tuple[object, ...]:
    """RE2 options that keep capture groups and raise instead of logging errors."""
    if name != "re2":  # pragma: no cover - cel-expr-only installs
        return ()
    options = engine.Options()
    options.log_errors = False
    return (options,)


def pattern_problem(pattern: str) -> str:
    """Why RE2 rejects `pattern` ("" when it compiles): what `check` reports at load time."""
    engine, name, options = _engine()
    try:
        engine.compile(pattern, *options)
    except Exception as error:  # noqa: BLE001 - the message is the answer
        text = error.args[0] if error.args else error
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        return f"invalid RE2 pattern {pattern!r}: {text}"
    return ""

