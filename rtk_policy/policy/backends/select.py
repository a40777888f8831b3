"""The backend interface shared by `cel_expr.py` and `cel_python.py`, and backend selection.

A CEL library is imported only by the modules of `policy/backends/` (each on its backend's first
compile, restore or run) and, at load time only, by `checker.py` and `guards/fast_source.py`, which
read expressions with cel-python's parser. A backend compiles one expression (after the static
checks of `checker.py`), dumps/restores compiled programs for the cache, builds one activation per
segment and runs a program on it.
"""

from __future__ import annotations

import os

from rtk_policy.util import record
from rtk_policy.util.lazy_import import import_module

try:  # what `importlib.machinery` names it, always loaded: no `importlib` import (~0.4 ms)
    from _frozen_importlib_external import PathFinder
except ImportError:  # pragma: no cover - an interpreter without the frozen importlib
    from importlib.machinery import PathFinder

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Protocol
else:
    Protocol = object  # `Backend` is an interface for type checkers; at run time a plain class

#: Backend names, primary first, and the module of each.
BACKENDS = ("cel-expr", "cel-python")
_MODULES = {
    "cel-expr": "rtk_policy.policy.backends.cel_expr",
    "cel-python": "rtk_policy.policy.backends.cel_python",
}
_INSTANCES: dict[str, Backend] = {}


@record.frozen
class CheckError:
    """One compile error, positioned in the expression (1-based line and column)."""

    line: int
    col: int
    message: str


class CompileError(Exception):
    """A CEL expression that does not compile; `errors` are `CheckError`s (expression positions)."""

    def __init__(self, errors: list[Any]) -> None:
        self.errors = list(errors)
        super().__init__("; ".join(e.message for e in self.errors))


class EvalError(Exception):
    """A CEL evaluation error (e.g. a missing map key); the rule does not match."""


class EngineError(EvalError):
    """The CEL engine could not finish (a resource limit or an internal failure): unlike an error of
    the expression itself, this says nothing about the rule, so a deny or ask rule fails closed."""


class BackendUnavailable(Exception):
    """The backend's CEL library cannot be imported."""


class Backend(Protocol):
    """What the policy stage needs from a CEL library."""

    name: str
    version: str  #: identifies the library build (part of the cache key)

    def compile(self, source: str, expected: str) -> tuple[Any, frozenset[str]]:
        """Compile `source` whose result must be `expected` ("bool" or "string"); raise
        `CompileError`.

        Returns the program and the variable uses found by the checker ("command.segments", "ctx",
        ...).
        """

    def dump(self, program: Any) -> bytes:
        """The compiled program as bytes for the cache."""

    def restore(self, blob: bytes, expected: str) -> Any:
        """A program back from `dump` bytes."""

    def activation(self, values: dict[str, Any]) -> Any:
        """The evaluation input for one segment: values of every CEL variable (plain Python
        data)."""

    def run_bool(self, program: Any, activation: Any) -> bool:
        """Evaluate a bool program; raise `EvalError`."""

    def run_string(self, program: Any, activation: Any) -> str:
        """Evaluate a string program; raise `EvalError`."""


def module_file(dotted: str) -> str:
    """The file of module `dotted` (e.g. "celpy.evaluation"), found without importing it or its
    packages (`importlib.util.find_spec` imports the packages, and `importlib.util` itself costs a
    cold hook ~2 ms); raise ImportError when it is not installed."""
    parts = dotted.split(".")
    locations = None
    for depth in range(1, len(parts) + 1):
        spec = PathFinder.find_spec(".".join(parts[:depth]), locations)
        if spec is None or (depth < len(parts) and not spec.submodule_search_locations):
            raise ImportError(f"No module named {dotted!r}")
        locations = spec.submodule_search_locations
    if spec is None or not spec.origin:
        raise ImportError(f"No module named {dotted!r}")
    return spec.origin


class Deferred:
    """A backend whose CEL library is imported on first use: `name` and `version` (part of the cache
    key) are known from its files, and anything else (compile, restore, run…) is asked of the real
    backend, made by `create()` of `module` the first time. A hook process whose every rule the
    guards decide never imports the library; a broken install shows at first use, where a rule
    fails closed."""

    def __init__(self, name: str, version: str, module: str) -> None:
        self.name = name
        self.version = version
        self._module = module
        self._real: Any = None

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("__"):  # copy, pickle and the like: not the backend's
            raise AttributeError(attribute)
        if self._real is None:
            self._real = import_module(self._module).create(self.version)
        value = getattr(self._real, attribute)
        if callable(value):  # a method: found directly from now on, without this lookup
            setattr(self, attribute, value)
        return value


def file_version(path: str) -> str:
    """A cheap build identity of a library file: size and mtime (no importlib.metadata on the hot
    path)."""
    try:
        info = os.stat(path)
    except OSError:
        return "unknown"
    return f"{info.st_size}:{info.st_mtime_ns}"


def get_backend(name: str | None = None) -> Backend:
    """The named backend, or the primary one falling back to the second; raise
    `BackendUnavailable`."""
    if name:
        if name not in _MODULES:
            raise BackendUnavailable(f"unknown CEL backend {name!r} (choose {', '.join(BACKENDS)})")
        return _load(name)
    for candidate in BACKENDS:
        try:
            return _load(candidate)
        except BackendUnavailable:
            continue
    raise BackendUnavailable(
        "no CEL backend can be imported (install cel-expr-python or cel-python)"
    )


def _load(name: str) -> Backend:
    if name not in _INSTANCES:
        try:
            module = import_module(_MODULES[name])
        except ImportError as error:
            raise BackendUnavailable(f"CEL backend {name!r} is not available: {error}") from error
        _INSTANCES[name] = module.create()
    return _INSTANCES[name]


def available_backends() -> list[str]:
    """The names of the backends whose library imports, primary first."""
    found = []
    for name in BACKENDS:
        try:
            _load(name)
        except BackendUnavailable:
            continue
        found.append(name)
    return found


def all_backends() -> list[Backend]:
    """Every available backend (for differential tests)."""
    return [_load(name) for name in available_backends()]
