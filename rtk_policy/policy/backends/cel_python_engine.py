"""The second CEL backend at work: cel-python (`celpy`, pure Python). The only module importing it,
on a backend's first compile, restore or run (`cel_python.py`).

Expressions run on celpy's transpiler: the lark tree becomes Python lambdas over celpy's types and
operators, compiled once (celpy's interpreter re-walks the tree per evaluation, ~30x slower). The
transpiler spells a call `<module>.<qualname>(...)`, so the custom functions are members of one
namespace (`rtk_cel_functions.<name>`) put in the globals of the generated code; its `result()`,
`exists` and `all` are swapped for ours (below), and variables are read through `FastActivation`.
An expression the transpiler cannot handle runs on the interpreter. The cache stores the CEL source
only (data): a restore parses and transpiles it again, so no Python read from the cache is ever run.
"""

from __future__ import annotations

import re
import types
from collections.abc import Callable
from typing import Any

import celpy
from celpy import celtypes
from celpy.adapter import json_to_cel
from celpy.evaluation import Activation, CELEvalError, Transpiler

from rtk_policy.policy.backends.select import CompileError, EvalError
from rtk_policy.policy.backends.cel_python_runtime import (
    NAMESPACE,
    FastActivation,
    dispatcher,
    has,
    quantifier,
    result,
    transpiler_tree,
)
from rtk_policy.policy.checker import check_tree, parse_tree
from rtk_policy.policy.functions import Function, all_functions

#: the last statement of the transpiler's output, rewritten into a function taking the activation
_FINAL = "CEL = celpy.evaluation.result(base_activation, "
_ENTRY = "_rtk_cel_main"
#: calls of celpy's generated code made to ours (below), and their names in its globals
_REPLACED = {
    "celpy.evaluation.result(": "_rtk_cel_result(",
    "celpy.evaluation.macro_exists(": "_rtk_cel_exists(",
    "celpy.evaluation.macro_all(": "_rtk_cel_all(",
}
#: celpy's `has()` gives a Python bool, not a CEL one: made a call of ours (below)
_HAS = re.compile(
    r"not isinstance\(celpy\.evaluation\.result\(activation, (ex_\d+_h)\), CELEvalError\)"
)
_HAS_CALL = r"_rtk_cel_has(activation, \1)"


class _Program:
    """One expression: `run(activation[arg])` gives a celpy value or raises (`arg`: 1 for the
    `FastActivation` of the transpiled code, 0 for the variables dict of celpy's interpreter);
    `source` is the CEL it was compiled from."""

    __slots__ = ("arg", "source", "run")

    def __init__(self, source: str, run: Callable[[Any], Any], arg: int) -> None:
        self.source = source
        self.run = run
        self.arg = arg


class CelPythonBackend:
    """cel-python: celpy's transpiler (interpreter as the fallback) over its lark trees."""

    name = "cel-python"

    def __init__(self, version: str) -> None:
        self.version = version
        self.env = celpy.Environment()
        grouped: dict[str, list[Function]] = {}
        for fn in all_functions():
            grouped.setdefault(fn.name, []).append(fn)
        self.functions = {name: dispatcher(name, fns) for name, fns in grouped.items()}
        self._base = Activation(
            annotations=self.env.annotations, functions=self.functions, package=self.env.package
        )
        self._globals = dict(vars(celpy.evaluation))
        self._globals[NAMESPACE] = types.SimpleNamespace(**self.functions)
        ours = (result, quantifier(True), quantifier(False))
        self._globals.update(zip((name[:-1] for name in _REPLACED.values()), ours, strict=True))
        self._globals["_rtk_cel_has"] = has
        #: the values of the previous `activation` call and their conversions, by variable name
        self._last: dict[str, tuple[Any, Any]] = {}

    def compile(self, source: str, expected: str) -> Any:
        """Parse with lark, run the static checks, transpile to Python (else: the interpreter)."""
        tree, syntax = parse_tree(source)
        if syntax is not None:
            raise CompileError([syntax])
        problems, uses = check_tree(tree, expected)
        if problems:
            raise CompileError(problems)
        return self._program(source, tree), uses

    def dump(self, program: Any) -> bytes:
        """The program's CEL source (the cache keeps data, never the generated Python)."""
        return program.source.encode("utf-8")  # type: ignore[no-any-return]

    def restore(self, blob: bytes, expected: str) -> Any:
        """The program of `dump` bytes: its CEL parsed and transpiled again (the checks ran when
        the policies were compiled); raise `EvalError` when it does not parse."""
        source = blob.decode("utf-8")
        tree, syntax = parse_tree(source)
        if syntax is not None:
            raise EvalError(f"cached expression does not parse: {syntax.message}")
        return self._program(source, tree)

    def _transpile(self, tree: Any) -> str | None:
        """The transpiler's Python for `tree`, last statement made a function; None if it fails."""
        try:
            transpiler = Transpiler(ast=transpiler_tree(tree), activation=self._base)
            transpiler.transpile()
            text = transpiler.source_text
            if text.startswith(_FINAL):
                head, tail = "", text[len(_FINAL) :]
            else:
                head, found, tail = text.rpartition("\n" + _FINAL)
                if not found:
                    return None
            entry = f"def {_ENTRY}(base_activation):\n    return {_FINAL[6:]}{tail.strip()}\n"
            python = f"{head}\n{entry}"
            python = _HAS.sub(_HAS_CALL, python)
            for theirs, ours in _REPLACED.items():
                python = python.replace(theirs, ours)
            compile(python, "<cel-python>", "exec")
        except Exception:  # noqa: BLE001 - the interpreter runs what the transpiler cannot handle
            return None
        return python

    def _program(self, source: str, tree: Any) -> _Program:
        """The program of a parsed expression: transpiled, else run by celpy's interpreter."""
        python = self._transpile(tree)
        if python is not None:
            namespace = dict(self._globals)
            exec(compile(python, "<cel-python>", "exec"), namespace)  # noqa: S102 - celpy's output, from our parse
            return _Program(source, namespace[_ENTRY], 1)
        return _Program(source, self.env.program(tree, functions=self.functions).evaluate, 0)

    def activation(self, values: dict[str, Any]) -> Any:
        """The variables converted to cel-python values, and their Activation.

        The segments of one command share every variable but `segment` (the same objects, see
        `PolicySet.evaluate`): a value that is the very object of the previous call is not converted
        again.
        """
        last = self._last
        converted = {}
        for name, value in values.items():
            seen = last.get(name)
            same = seen is not None and seen[0] is value
            converted[name] = seen[1] if same else json_to_cel(value)
        self._last = {name: (value, converted[name]) for name, value in values.items()}
        scoped = self._base.nested_activation(vars=converted)
        return converted, FastActivation.over(scoped, converted)

    def _run(self, program: Any, activation: Any) -> Any:
        try:
            value = program.run(activation[program.arg])
        except Exception as error:  # celpy raises CELEvalError and, for bugs, anything
            raise EvalError(_describe(error)) from None
        if isinstance(value, CELEvalError):
            raise EvalError(_describe(value))
        return value

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


def create(version: str) -> CelPythonBackend:
    """The backend instance; `version` is `cel_python.version()`."""
    return CelPythonBackend(version)
