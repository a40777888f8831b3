"""The second CEL backend: cel-python (`celpy`, pure Python). The only module importing it.

Expressions run on celpy's *transpiler* (`celpy.evaluation.Transpiler`): the lark tree becomes Python
lambdas over celpy's own types and operators, compiled once per expression; its interpreter re-walks the
lark tree on every evaluation and costs ~100x more. The transpiler names a function by its module and
qualified name, so the custom functions are registered as members of one namespace object
(`rtk_cel_functions.<name>`) that is placed in the globals of the generated code. An expression the
transpiler cannot handle falls back to celpy's interpreter. The cache stores the generated Python source
(or, for a fallback, the pickled lark tree).
"""

from __future__ import annotations

import pickle
import types
from collections.abc import Callable
from typing import Any

import celpy
import lark
from celpy import celtypes
from celpy.adapter import json_to_cel
from celpy.evaluation import Activation, CELEvalError, Transpiler, TranspilerTree

from rtk_policy.policy.backend import CompileError, EvalError, file_version
from rtk_policy.policy.checker import check_tree, parse_tree
from rtk_policy.policy.functions import Function, all_functions

#: the name of the custom-function namespace in the generated code
NAMESPACE = "rtk_cel_functions"
#: the last statement of the transpiler's output, rewritten into a function taking the activation
_FINAL = "CEL = celpy.evaluation.result(base_activation, "
_ENTRY = "_rtk_cel_main"
#: format of `dump` (part of the backend version, hence of the cache key)
DUMP_FORMAT = "transpiled-1"
#: Python exceptions a custom function may raise for odd input; they become CEL errors as in `result()`
_CEL_ERRORS = (ValueError, KeyError, TypeError, ZeroDivisionError, OverflowError, IndexError)


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


def _dispatcher(name: str, overloads: list[Function]) -> Callable[..., Any]:
    by_arity = {len(fn.params): fn.impl for fn in overloads}

    def call(*args: Any) -> Any:
        for arg in args:
            if isinstance(arg, CELEvalError):
                return arg
        impl = by_arity.get(len(args))
        if impl is None:
            raise TypeError(f"{name}: no overload taking {len(args)} arguments")
        try:
            value = impl(*[_plain(a) for a in args])
        except _CEL_ERRORS:
            raise
        except Exception as error:  # noqa: BLE001 - any failure of a custom function is a CEL error
            raise ValueError(f"{name}: {error}") from error
        return _to_cel(value)

    call.__module__ = NAMESPACE  # how the transpiler spells the call: rtk_cel_functions.<name>
    call.__name__ = call.__qualname__ = name
    return call


def _transpiler_tree(node: Any) -> Any:
    """A copy of a lark tree built of the `TranspilerTree` nodes the transpiler decorates."""
    if isinstance(node, lark.Tree):
        meta = node._meta if hasattr(node, "_meta") else None  # noqa: SLF001 - keep positions as is
        return TranspilerTree(node.data, [_transpiler_tree(c) for c in node.children], meta)
    return node


class _FastActivation(Activation):
    """An `Activation` resolving variables through plain dicts first.

    celpy's own lookup builds a `typing.Union` per access and walks `NameContainer` chains (~0.1 ms per
    variable read). Variables are looked up innermost scope first, as celpy does; anything not found
    (type names, functions) goes to celpy's lookup. Macro scopes are created the same way.
    """

    _scope: dict[str, Any]
    _outer: Any

    @classmethod
    def over(cls, base: Activation, scope: dict[str, Any], outer: Any = None) -> _FastActivation:
        """An activation with `scope` in front of `outer` (None: of nothing), falling back to `base`."""
        made = cls.__new__(cls)
        made.identifiers = base.identifiers
        made.functions = base.functions
        made.package = base.package
        made._scope = scope
        made._outer = outer
        return made

    def __getattr__(self, name: str) -> Any:
        """Innermost-first variable lookup, then celpy's own (annotations, functions)."""
        if name in ("_scope", "_outer"):  # not set up: no lookup (copy, pickle)
            raise AttributeError(name)
        current: Any = self
        while current is not None:
            scope = current._scope
            if name in scope:
                return scope[name]
            current = current._outer
        return Activation.__getattr__(self, name)

    get = __getattr__

    def nested_activation(self, annotations: Any = None, vars: Any = None) -> Activation:
        """A macro scope binding `vars` in front of this one."""
        if annotations:
            return Activation.nested_activation(self, annotations, vars)
        return _FastActivation.over(self, dict(vars or {}), self)


class _Program:
    """One compiled expression: `run(activation)` gives a celpy value or raises."""

    __slots__ = ("blob", "run")

    def __init__(self, blob: tuple[str, Any], run: Callable[[Any], Any]) -> None:
        self.blob = blob
        self.run = run


class CelPythonBackend:
    """cel-python: celpy's transpiler (interpreter as the fallback) over its lark trees."""

    name = "cel-python"

    def __init__(self) -> None:
        self.version = "/".join(
            (
                file_version(celpy.__file__ or ""),
                file_version(celpy.evaluation.__file__ or ""),
                DUMP_FORMAT,
            )
        )
        self.env = celpy.Environment()
        grouped: dict[str, list[Function]] = {}
        for fn in all_functions():
            grouped.setdefault(fn.name, []).append(fn)
        self.functions = {name: _dispatcher(name, fns) for name, fns in grouped.items()}
        self._base = Activation(
            annotations=self.env.annotations, functions=self.functions, package=self.env.package
        )
        self._globals = dict(vars(celpy.evaluation))
        self._globals[NAMESPACE] = types.SimpleNamespace(**self.functions)

    def compile(self, source: str, expected: str) -> Any:
        """Parse with lark, run the static checks, transpile to Python (interpreter as the fallback)."""
        tree, syntax = parse_tree(source)
        if syntax is not None:
            raise CompileError([syntax])
        problems, uses = check_tree(tree, expected)
        if problems:
            raise CompileError(problems)
        python = self._transpile(tree)
        blob = ("python", python) if python is not None else ("tree", tree)
        return self._program(blob), uses

    def dump(self, program: Any) -> bytes:
        """The generated Python source, or the lark tree of an expression run by the interpreter."""
        return pickle.dumps(program.blob, protocol=pickle.HIGHEST_PROTOCOL)

    def restore(self, blob: bytes, expected: str) -> Any:
        """The program back from `dump` bytes (no lark parse, no transpile)."""
        return self._program(pickle.loads(blob))

    def _transpile(self, tree: Any) -> str | None:
        """The transpiler's Python for `tree`, its final statement made a function; None if it fails."""
        try:
            transpiler = Transpiler(ast=_transpiler_tree(tree), activation=self._base)
            transpiler.transpile()
        except Exception:  # noqa: BLE001 - the interpreter runs what the transpiler cannot handle
            return None
        text = transpiler.source_text
        head, found, tail = text.rpartition("\n" + _FINAL)
        if not found:
            head, found, tail = "", _FINAL, text.removeprefix(_FINAL)
            if not text.startswith(_FINAL):
                return None
        return f"{head}\ndef {_ENTRY}(base_activation):\n    return {_FINAL[6:]}{tail.strip()}\n"

    def _program(self, blob: tuple[str, Any]) -> _Program:
        kind, payload = blob
        if kind == "python":
            namespace = dict(self._globals)
            exec(compile(payload, "<cel-python>", "exec"), namespace)  # noqa: S102 - celpy's own output
            return _Program(blob, namespace[_ENTRY])
        runner = self.env.program(payload, functions=self.functions)
        return _Program(blob, lambda activation: runner.evaluate(activation[0]))

    def activation(self, values: dict[str, Any]) -> Any:
        """The variables converted to cel-python values once per segment, and their Activation."""
        converted = {name: json_to_cel(value) for name, value in values.items()}
        scoped = self._base.nested_activation(vars=converted)
        return converted, _FastActivation.over(scoped, converted)

    def _run(self, program: Any, activation: Any) -> Any:
        try:
            value = program.run(activation[1]) if program.blob[0] == "python" else program.run(activation)
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


def create() -> CelPythonBackend:
    """The backend instance."""
    return CelPythonBackend()
