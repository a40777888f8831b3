"""Module-level regexes compiled on first use.

Compiling a regex costs 0.05–2 ms; a cold hook deciding `git status` reaches only a few of the
module-level patterns its imports define. `lazy(globals(), NAME, pattern)` stands in for
`re.compile(pattern)`: the first attribute read (`.match`, `.sub`, …) compiles the pattern and
rebinds the module global NAME to the compiled pattern, so every later use in that module runs the
compiled pattern with no indirection left. Only module-internal uses by global name are supported
(a reference kept elsewhere still works, through the stand-in).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from typing import Any


class LazyPattern:
    """A stand-in for `re.compile(pattern, flags)` bound to the global `name` of a module."""

    __slots__ = ("_namespace", "_name", "_pattern", "_flags", "_compiled")

    def __init__(self, namespace: dict[str, Any], name: str, pattern: Any, flags: int) -> None:
        self._namespace = namespace
        self._name = name
        self._pattern = pattern
        self._flags = flags
        self._compiled: re.Pattern[Any] | None = None

    def compiled(self) -> re.Pattern[Any]:
        """The compiled pattern (compiled now if needed; the module global then names it)."""
        found = self._compiled
        if found is None:
            import re  # on first use: a cold hook may need no `re` at all

            found = self._compiled = re.compile(self._pattern, self._flags)
            self._namespace[self._name] = found
        return found

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self.compiled(), attribute)


def lazy(namespace: dict[str, Any], name: str, pattern: Any, flags: int = 0) -> Any:
    """`re.compile(pattern, flags)` compiled when first used, for the module global `name` of
    `namespace` (the module's `globals()`)."""
    return LazyPattern(namespace, name, pattern, flags)
