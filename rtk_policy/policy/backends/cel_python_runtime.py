"""What the Python that celpy's transpiler generates for us calls at run time (`cel_python.py`):
the custom functions behind one namespace, our `result()`, `has()`, `exists`/`all`, and the
activation that reads variables from plain dicts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import celpy
import lark
from celpy import celtypes
from celpy.adapter import json_to_cel
from celpy.evaluation import Activation, CELEvalError, TranspilerTree

from rtk_policy.policy.functions import Function

#: the name of the custom-function namespace in the generated code
NAMESPACE = "rtk_cel_functions"
#: exceptions a custom function may raise for odd input; they become CEL errors as in `result()`
_CEL_ERRORS = (ValueError, KeyError, TypeError, ZeroDivisionError, OverflowError, IndexError)


def to_cel(value: Any) -> Any:
    """A custom function's plain result as a celpy value."""
    if isinstance(value, bool):
        return celtypes.BoolType(value)
    if isinstance(value, str):
        return celtypes.StringType(value)
    if isinstance(value, list):
        return celtypes.ListType([to_cel(v) for v in value])
    return json_to_cel(value)


def plain(value: Any) -> Any:
    """A celpy value as the plain Python value a custom function takes."""
    if isinstance(value, celtypes.BoolType):
        return bool(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {plain(k): plain(v) for k, v in value.items()}
    if isinstance(value, int):
        return int(value)
    return value


def dispatcher(name: str, overloads: list[Function]) -> Callable[..., Any]:
    """The celpy-callable of custom function `name`: picks the overload by arity, passes CEL errors
    through, converts the arguments and the result."""
    by_arity = {len(fn.params): fn.impl for fn in overloads}

    def call(*args: Any) -> Any:
        for arg in args:
            if isinstance(arg, CELEvalError):
                return arg
        impl = by_arity.get(len(args))
        if impl is None:
            raise TypeError(f"{name}: no overload taking {len(args)} arguments")
        try:
            value = impl(*[plain(a) for a in args])
        except _CEL_ERRORS:
            raise
        except Exception as error:  # noqa: BLE001 - any failure of a custom function is a CEL error
            raise ValueError(f"{name}: {error}") from error
        return to_cel(value)

    call.__module__ = NAMESPACE  # how the transpiler spells the call: rtk_cel_functions.<name>
    call.__name__ = call.__qualname__ = name
    return call


def result(activation: Any, expression: Callable[[Any], Any]) -> Any:
    """celpy's `result()`, also turning AttributeError (a field of a non-map `dyn` value) into a CEL
    error value, as celpy's interpreter and cel-expr do, so `||`/`&&` can absorb it."""
    try:
        return celpy.evaluation.result(activation, expression)
    except AttributeError as error:
        return CELEvalError("no such overload", AttributeError, error.args)


def has(activation: Any, expression: Callable[[Any], Any]) -> Any:
    """The `has()` macro: true when the field selection gives no error."""
    return celtypes.BoolType(not isinstance(result(activation, expression), CELEvalError))


def quantifier(stop: bool) -> Callable[..., Any]:
    """The `exists` (stop=True) or `all` (stop=False) macro with CEL's semantics (cel-expr's, celpy
    interpreter's): `stop` once an element gives it, else the first error, else `not stop`.

    celpy's transpiled macros fold with `||`/`&&`, which fails on two errors in a row even when a
    later element decides, and build a `typing` object per call (a quarter of the evaluation time).
    """

    def macro(
        activation: Any, bind: str, expression: Callable[[Any], Any], items: Callable[[Any], Any]
    ) -> Any:
        error = None
        for item in items(activation):
            value = result(activation.nested_activation(vars={bind: item}), expression)
            if not isinstance(value, celtypes.BoolType):
                error = value if error is None else error
            elif bool(value) is stop:
                return value
        return celtypes.BoolType(not stop) if error is None else error

    return macro


def transpiler_tree(node: Any) -> Any:
    """A copy of a lark tree built of the `TranspilerTree` nodes the transpiler decorates."""
    if isinstance(node, lark.Tree):
        meta = node._meta if hasattr(node, "_meta") else None  # noqa: SLF001 - keep positions as is
        return TranspilerTree(node.data, [transpiler_tree(c) for c in node.children], meta)
    return node


class FastActivation(Activation):
    """An `Activation` resolving variables through plain dicts first.

    celpy's own lookup builds a `typing.Union` per access and walks `NameContainer` chains
    (~0.1 ms a read). Variables are looked up innermost scope first, as celpy does; anything else
    (type names, functions) goes to celpy's lookup. Macro scopes are made the same way.
    """

    _scope: dict[str, Any]
    _outer: Any

    @classmethod
    def over(cls, base: Activation, scope: dict[str, Any], outer: Any = None) -> FastActivation:
        """An activation with `scope` in front of `outer` (None: none), falling back to `base`."""
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
        return FastActivation.over(self, dict(vars or {}), self)
