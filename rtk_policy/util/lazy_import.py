"""Module-level functions imported on first call.

A cold hook deciding one plain command (`git status`) runs a small part of the shell stage; the
rest (the tree walker's parts, the scanner, the expression and function passes) is imported only
by the inputs that need it. `lazy_function(globals(), NAME, MODULE)` stands in for `from MODULE
import NAME`: its first call imports MODULE, rebinds the module global NAME to the function found
there and calls it, so every later call in that module goes straight to the function, with no
indirection left (the bulk path pays nothing after the first input). Only module-internal calls by
global name are supported.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from types import ModuleType
    from typing import Any


def import_module(name: str) -> ModuleType:
    """`importlib.import_module(name)` for an absolute `name`, without importing `importlib`
    (the package and its `warnings`: ~0.4 ms of a cold hook, which imports nothing else of it)."""
    __import__(name)
    return sys.modules[name]


def lazy_function(namespace: dict[str, Any], name: str, module: str) -> Callable[..., Any]:
    """A stand-in for `from module import name` in the module whose globals are `namespace` (a
    function, or a class called to make an instance)."""

    def first_call(*args: Any, **kwargs: Any) -> Any:
        found = getattr(import_module(module), name)
        namespace[name] = found
        return found(*args, **kwargs)

    first_call.__name__ = first_call.__qualname__ = name
    return first_call
