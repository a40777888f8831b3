"""The operations of a guard (`guard.py`) on plain values, with CEL's answers or `UNKNOWN`.

A guard's nodes are closures `env -> value`; the operations here combine the values of already
built child closures: relations, `size()` and `string()`, the string methods, literal regex
searches and calls of the custom functions (`guard_functions`). Each gives CEL's answer when its
operands have the types CEL would accept, and `UNKNOWN` otherwise (the expression is then left to
the CEL backend).
"""

from __future__ import annotations

import operator
from collections.abc import Callable

from rtk_policy.policy.regex import pretest_literals, re_matches, searcher

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeAlias

UNKNOWN: Any = type("Unknown", (), {"__repr__": lambda self: "UNKNOWN"})()
Guard: TypeAlias = "Callable[[dict[str, Any]], Any]"
_PY_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "int": (int,), "bool": (bool,), "list<string>": (list,), "list<dyn>": (list,),
    "map<string,dyn>": (dict,),
}  # fmt: skip


def unknown(env: dict[str, Any]) -> Any:
    """The guard of a node outside the subset understood here."""
    return UNKNOWN


def _scalar(value: Any) -> bool:
    return type(value) in (str, int, bool)


def relation(op: str, right_ir: tuple[Any, ...], left: Guard, right: Guard) -> Guard:
    """`left op right` (`op`: eq ne lt le gt ge in); `right_ir` is the right operand's IR, so a
    literal there (a list of literals for `in`) is tested without building its value per call."""
    if op == "in" and right_ir[0] == "list" and all(i[0] == "lit" for i in right_ir[1]):
        values = [i[1] for i in right_ir[1]]
        kinds = {type(v) for v in values}
        if len(kinds) == 1:  # a literal list of one type: a set lookup
            kind, members = kinds.pop(), frozenset(values)
            return lambda env: (v in members) if type(v := left(env)) is kind else UNKNOWN
    literal: Any = right_ir[1] if right_ir[0] == "lit" else None
    if op in ("eq", "ne") and _scalar(literal):  # `x == "lit"`
        value, kind, equal = literal, type(literal), op == "eq"
        return lambda env: ((v == value) is equal) if type(v := left(env)) is kind else UNKNOWN
    if op in ORDER and type(literal) in (int, str):  # `size(x) > 0`
        value, kind, test = literal, type(literal), ORDER[op]
        return lambda env: test(v, value) if type(v := left(env)) is kind else UNKNOWN
    compare = COMPARE[op]

    def related(env: dict[str, Any]) -> Any:
        a = left(env)
        if a is UNKNOWN:
            return UNKNOWN
        b = right(env)
        if b is UNKNOWN:
            return UNKNOWN
        return compare(a, b)

    return related


def _eq(a: Any, b: Any) -> Any:
    return a == b if _scalar(a) and type(a) is type(b) else UNKNOWN


def _ne(a: Any, b: Any) -> Any:
    return a != b if _scalar(a) and type(a) is type(b) else UNKNOWN


def _ordered(test: Callable[[Any, Any], bool]) -> Callable[[Any, Any], Any]:
    def compare(a: Any, b: Any) -> Any:
        return test(a, b) if type(a) is type(b) and type(a) in (int, str) else UNKNOWN

    return compare


def _in(a: Any, b: Any) -> Any:
    if type(b) is dict:
        return a in b if type(a) is str else UNKNOWN
    if type(b) is list and _scalar(a) and all(type(x) is type(a) for x in b):
        return a in b
    return UNKNOWN


#: the ordered relations, for operands of one type (int or str)
ORDER = {"lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge}
#: the relations on two values (`eq ne lt le gt ge in`): CEL's answer or UNKNOWN
COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "eq": _eq,
    "ne": _ne,
    **{op: _ordered(test) for op, test in ORDER.items()},
    "in": _in,
}
SIZED = (str, list, dict)  #: what CEL's size() measures here


def _size(value: Any) -> Any:
    return len(value) if type(value) in SIZED else UNKNOWN


def cel_string(value: Any) -> Any:
    """CEL's `string()` of a string or an int (decimal); other types are left to CEL."""
    return str(value) if type(value) in (str, int) else UNKNOWN


def _strings(method: Callable[[str, str], bool]) -> Callable[[Any, Any], Any]:
    def call(text: Any, arg: Any) -> Any:
        return method(text, arg) if type(text) is str and type(arg) is str else UNKNOWN

    return call


#: the methods a guard evaluates, on their target and arguments: CEL's answer or UNKNOWN
METHODS: dict[str, Callable[..., Any]] = {
    "startsWith": _strings(str.startswith),
    "endsWith": _strings(str.endswith),
    "contains": _strings(str.__contains__),
    "matches": _strings(re_matches),
    "size": _size,
}


def function_call(name: str, args: list[Guard], fns: dict[Any, Any]) -> Guard:
    """A call of the global function `name` (`size`, `string` or a custom one from `fns`)."""
    if name == "size" and len(args) == 1:
        (arg,) = args
        return lambda env: len(v) if type(v := arg(env)) in SIZED else UNKNOWN
    if name == "string" and len(args) == 1:
        return _caller(cel_string, None, args)
    if (name, len(args)) in fns:
        impl, params = fns[(name, len(args))]
        return _caller(impl, params, args)
    return unknown


def method_call(name: str, args: list[Guard]) -> Guard:
    """A call of the method `name` on `args[0]` with the other `args` (string methods, `size`)."""
    return _caller(METHODS[name], None, args) if name in METHODS else unknown


def literal_search(target: Guard, pattern: Any) -> Guard:
    """`target.matches("literal")`, the pattern compiled once (`regex.py`) when first needed: most
    guards of a plan are decided before their regex is reached, and a cold hook plans ~30 guards.

    A pattern known to compile is pre-tested by the literals one of which every match contains
    (`regex_literal.py`): a text without any gives `false` without running (or compiling) the
    regex.
    """
    search = lazy_search(pattern)
    needles: tuple[str, ...] | None = None

    def matches(env: dict[str, Any]) -> Any:
        nonlocal needles
        text = target(env)
        if type(text) is not str:
            return UNKNOWN
        if needles is None:
            needles = pretest_literals(pattern)
        if needles:
            for needle in needles:
                if needle in text:
                    break
            else:
                return False
        return search(text)

    return matches


def lazy_search(pattern: str) -> Callable[[str], Any]:
    """`text -> bool`: the RE2 search of `pattern` on a string, compiled on the first call (what
    `literal_search` runs once its pre-test passed); `UNKNOWN` for an invalid pattern."""
    search: Callable[[str], Any] | None = None

    def run(text: str) -> Any:
        nonlocal search
        if search is None:
            search = _search_or_unknown(pattern)
        return search(text)

    return run


def _search_or_unknown(pattern: str) -> Callable[[str], Any]:
    try:
        return searcher(pattern)
    except Exception:  # noqa: BLE001 - an invalid pattern is a CEL error: unknown
        return _invalid_pattern


def _invalid_pattern(text: str) -> Any:
    return UNKNOWN


def _caller(impl: Callable[..., Any], params: Any, args: list[Guard]) -> Guard:
    if len(args) == 1:
        (arg,) = args
        ok = params[0] if params is not None else None

        def call_one(env: dict[str, Any]) -> Any:
            value = arg(env)
            if value is UNKNOWN or (ok is not None and type(value) not in ok):
                return UNKNOWN
            try:
                return impl(value)
            except Exception:  # noqa: BLE001 - a CEL error: unknown
                return UNKNOWN

        return call_one

    def call(env: dict[str, Any]) -> Any:
        values = [arg(env) for arg in args]
        if any(v is UNKNOWN for v in values):
            return UNKNOWN
        if params is not None and not all(
            type(v) in ok for v, ok in zip(values, params, strict=True)
        ):
            return UNKNOWN
        try:
            return impl(*values)
        except Exception:  # noqa: BLE001 - a CEL error: unknown
            return UNKNOWN

    return call


def guard_functions() -> dict[tuple[str, int], Any]:
    """The custom functions a guard may call: (name, arity) → (impl, parameter Python types).

    Only global functions with one overload of that arity and plain parameter types are listed.
    """
    from rtk_policy.policy.functions import all_functions

    found: dict[tuple[str, int], Any] = {}
    clashes: set[tuple[str, int]] = set()
    for fn in all_functions():
        key = (fn.name, len(fn.params))
        if fn.member or key in found or any(p not in _PY_TYPES for p in fn.params):
            clashes.add(key)
            continue
        found[key] = (fn.impl, tuple(_PY_TYPES[p] for p in fn.params))
    return {k: v for k, v in found.items() if k not in clashes}
