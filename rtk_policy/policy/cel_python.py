"""The second CEL backend: cel-python (`celpy`, pure Python). The only module importing it.

Compiled programs are the lark trees of cel-python's parser; the cache stores them pickled, which restores
faster than parsing again (no lark parse on a cache hit).
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from typing import Any

import celpy
from celpy import celtypes
from celpy.adapter import json_to_cel

from rtk_policy.policy.backend import CompileError, EvalError, file_version
from rtk_policy.policy.checker import check_tree, parse_tree
from rtk_policy.policy.functions import Function, all_functions


def _to_cel(value: Any) -> Any:
    if isinstance(value, bool):
        return celtypes.BoolType(value)
    if isinstance(value, str):
        return celtypes.StringType(value)
    if isinstance(value, list):
        return celtypes.ListType([_to_cel(v) for v in value])
    return json_to_cel(value)


def _plain(value: Any) -> Any:
    if isinstance(value, celtypes.BoolType):
        return bool(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {_plain(k): _plain(v) for k, v in value.items()}
    if isinstance(value, int):
        return int(value)
    return value


def _dispatcher(overloads: list[Function]) -> Callable[..., Any]:
    by_arity = {len(fn.params): fn.impl for fn in overloads}

    def call(*args: Any) -> Any:
        impl = by_arity.get(len(args))
        if impl is None:
            raise TypeError(f"{overloads[0].name}: no overload taking {len(args)} arguments")
        return _to_cel(impl(*[_plain(a) for a in args]))

    return call


class CelPythonBackend:
    """cel-python's interpreted runner over lark trees."""

    name = "cel-python"

    def __init__(self) -> None:
        self.version = (
            file_version(celpy.__file__ or "") + "/" + file_version(celpy.evaluation.__file__ or "")
        )
        self.env = celpy.Environment()
        grouped: dict[str, list[Function]] = {}
        for fn in all_functions():
            grouped.setdefault(fn.name, []).append(fn)
        self.functions = {name: _dispatcher(fns) for name, fns in grouped.items()}

    def compile(self, source: str, expected: str) -> Any:
        """Parse with lark, run the static checks, build the runner."""
        tree, syntax = parse_tree(source)
        if syntax is not None:
            raise CompileError([syntax])
        problems, uses = check_tree(tree, expected)
        if problems:
            raise CompileError(problems)
        return self.env.program(tree, functions=self.functions), uses

    def dump(self, program: Any) -> bytes:
        """The pickled lark tree."""
        return pickle.dumps(program.ast, protocol=pickle.HIGHEST_PROTOCOL)

    def restore(self, blob: bytes, expected: str) -> Any:
        """A runner over the unpickled tree."""
        return self.env.program(pickle.loads(blob), functions=self.functions)

    def activation(self, values: dict[str, Any]) -> Any:
        """The variables converted to cel-python values once per segment."""
        return {name: json_to_cel(value) for name, value in values.items()}

    def _run(self, program: Any, activation: Any) -> Any:
        try:
            return program.evaluate(activation)
        except Exception as error:  # celpy raises CELEvalError and, for bugs, anything
            raise EvalError(_describe(error)) from None

    def run_bool(self, program: Any, activation: Any) -> bool:
        """Evaluate a bool program."""
        value = self._run(program, activation)
        if isinstance(value, celtypes.BoolType):
            return bool(value)
        raise EvalError(f"expected a bool, got {type(value).__name__}")

    def run_string(self, program: Any, activation: Any) -> str:
        """Evaluate a string program."""
        value = self._run(program, activation)
        if isinstance(value, str):
            return str(value)
        raise EvalError(f"expected a string, got {type(value).__name__}")


def _describe(error: Exception) -> str:
    args = [a for a in getattr(error, "args", ()) if isinstance(a, str)]
    return args[0] if args else type(error).__name__


def create() -> CelPythonBackend:
    """The backend instance."""
    return CelPythonBackend()
