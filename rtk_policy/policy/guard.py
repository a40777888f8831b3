"""Guards: a cheap Python form of a rule's expressions that gives CEL's answer where it can.

At load time (`guard_ir.py`: lark tree → nested tuples, kept in the compiled cache) an expression is
translated into a three-valued form: each node gives a plain value, or `UNKNOWN` when the node is
outside the small subset understood here (or its CEL evaluation would be an error). At evaluation time
(`build_guard`, tuples → Python closures, no lark) the guard runs on the same plain values the CEL
activation is built from. A rule whose guard gives `False` is skipped: its CEL result would be `false`
too, because the guard follows CEL's rules (`&&` is false when one side is false even if the other
errors, `||` is false only when both sides are false, comprehensions likewise). For the same reason a
plain `True` (a match, a file's `when`, a pipeline consumer) or a plain string (a rewrite, a message)
is CEL's answer and is used without calling the backend (`policyset.py`). Anything uncertain gives
`UNKNOWN`, and the expression is evaluated by the CEL backend. Custom functions are called through the
same Python implementations the backends call, so a guard saves the backend round trip (and the
cel-expr-python leak of every Python call from CEL).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from rtk_policy.policy.regex import re_matches, searcher

UNKNOWN: Any = type("Unknown", (), {"__repr__": lambda self: "UNKNOWN"})()
Guard = Callable[[dict[str, Any]], Any]
_PY_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "int": (int,), "bool": (bool,), "list<string>": (list,), "list<dyn>": (list,),
    "map<string,dyn>": (dict,),
}  # fmt: skip


# ------------------------------------------------------------------------------ run time: IR → closure


def build_guard(ir: tuple[Any, ...], functions: dict[str, Any] | None = None) -> Guard | None:
    """A closure `env -> True | False | UNKNOWN` for `ir`; None when it could never say `False`."""
    if not ir or ir[0] == "unknown":
        return None
    try:
        return _build(ir, functions or {})
    finally:
        _COSTS.clear()  # keyed by id(): valid only while this IR is alive


def _build(ir: tuple[Any, ...], fns: dict[str, Any]) -> Guard:
    kind = ir[0]
    builder = _BUILDERS.get(kind)
    if builder is None:
        return _unknown
    return builder(ir, fns)  # type: ignore[no-any-return]


def _unknown(env: dict[str, Any]) -> Any:
    return UNKNOWN


def _b_lit(ir: tuple[Any, ...], fns: dict[str, Any]) -> Guard:
    value = ir[1]
    return lambda env: value


def _b_ident(ir: tuple[Any, ...], fns: dict[str, Any]) -> Guard:
    name = ir[1]
    return lambda env: env.get(name, UNKNOWN)


def _b_dot(ir: tuple[Any, ...], fns: dict[str, Any]) -> Guard:
    name = ir[2]
    if ir[1][0] == "ident":  # `segment.program`: one closure
        variable = ir[1][1]

        def field(env: dict[str, Any]) -> Any:
            value = env.get(variable)
            return value.get(name, UNKNOWN) if type(value) is dict else UNKNOWN

        return field
    target = _build(ir[1], fns)

    def dot(env: dict[str, Any]) -> Any:
        value = target(env)
        return value.get(name, UNKNOWN) if type(value) is dict else UNKNOWN

    return dot


def _b_index(ir: tuple[Any, ...], fns: dict[str, Any]) -> Guard:
    target, key = _build(ir[1], fns), _build(ir[2], fns)

    def index(env: dict[str, Any]) -> Any:
        value, at = target(env), key(env)
        if type(value) is list and type(at) is int and 0 <= at < len(value):
            return value[at]
        if type(value) is dict and type(at) is str:
            return value.get(at, UNKNOWN)
        return UNKNOWN

    return index


def _b_list(ir: tuple[Any, ...], fns: dict[str, Any]) -> Guard:
    items = [_build(item, fns) for item in ir[1]]

    def listing(env: dict[str, Any]) -> Any:
        values = [item(env) for item in items]
        return UNKNOWN if any(v is UNKNOWN for v in values) else values

    return listing


def _operands(ir: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """The operands of a chain of one operator (`a && b && c`), cheapest first.

    Three-valued `&&`/`||` give the same answer in any order, so the cheap tests run first.
    """
    if ir[0] not in ("and", "or"):
        return [ir]
    found = []
    for side in ir[1:]:
        found.extend(_operands(side) if side[0] == ir[0] else [side])
    return sorted(found, key=_cost)


#: Costs of the IR nodes of the guard being built, by id (each node is costed once, not per level).
_COSTS: dict[int, int] = {}


def _cost(ir: Any) -> int:
    if not isinstance(ir, tuple) or not ir:
        return 0
    known = _COSTS.get(id(ir))
    if known is None:
        own = {"call": 20, "mcall": 3, "exists": 10, "all": 10}.get(ir[0], 1)
        weight = 5 if ir[0] in ("exists", "all") else 1
        known = own + weight * sum(_cost(part) for part in ir[1:] if isinstance(part, tuple))
        _COSTS[id(ir)] = known
    return known


def _b_and(ir: tuple[Any, ...], fns: dict[str, Any]) -> Guard:
    parts = tuple(_build(part, fns) for part in _operands(ir))

    def conjunction(env: dict[str, Any]) -> Any:
        certain = True
        for part in parts:
            value = part(env)
            if value is False:
                return False
            if value is not True:
                certain = False
        return True if certain else UNKNOWN

    return conjunction


def _b_or(ir: tuple[Any, ...], fns: dict[str, Any]) -> Guard:
    parts = tuple(_build(part, fns) for part in _operands(ir))

    def disjunction(env: dict[str, Any]) -> Any:
        certain = True
        for part in parts:
            value = part(env)
            if value is True:
                return True
            if value is not False:
                certain = False
        return False if certain else UNKNOWN

    return disjunction


def _b_not(ir: tuple[Any, ...], fns: dict[str, Any]) -> Guard:
    operand = _build(ir[1], fns)

    def negation(env: dict[str, Any]) -> Any:
        value = operand(env)
        if value is True:
            return False
        return True if value is False else UNKNOWN

    return negation


def _scalar(value: Any) -> bool:
    return type(value) in (str, int, bool)


def _b_rel(ir: tuple[Any, ...], fns: dict[str, Any]) -> Guard:
    op, left, right = ir[1], _build(ir[2], fns), _build(ir[3], fns)
    if op == "in" and ir[3][0] == "list" and all(i[0] == "lit" for i in ir[3][1]):
        values = [i[1] for i in ir[3][1]]
        kinds = {type(v) for v in values}
        if len(kinds) == 1:  # a literal list of one type: a set lookup
            kind, members = kinds.pop(), frozenset(values)
            return lambda env: (v in members) if type(v := left(env)) is kind else UNKNOWN
    compare = _COMPARE[op]
    if op in ("eq", "ne") and ir[3][0] == "lit" and _scalar(ir[3][1]):  # `x == "lit"`
        value, kind, equal = ir[3][1], type(ir[3][1]), op == "eq"
        return lambda env: ((v == value) is equal) if type(v := left(env)) is kind else UNKNOWN
    if op in _ORDER and ir[3][0] == "lit" and type(ir[3][1]) in (int, str):  # `size(x) > 0`
        value, kind, test = ir[3][1], type(ir[3][1]), _ORDER[op]
        return lambda env: test(v, value) if type(v := left(env)) is kind else UNKNOWN

    def relation(env: dict[str, Any]) -> Any:
        a = left(env)
        if a is UNKNOWN:
            return UNKNOWN
        b = right(env)
        if b is UNKNOWN:
            return UNKNOWN
        return compare(a, b)

    return relation


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
_ORDER = {"lt": operator.lt, "le": operator.le, "gt": operator.gt, "ge": operator.ge}
_COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "eq": _eq,
    "ne": _ne,
    **{op: _ordered(test) for op, test in _ORDER.items()},
    "in": _in,
}


def _b_add(ir: tuple[Any, ...], fns: dict[str, Any]) -> Guard:
    left, right = _build(ir[1], fns), _build(ir[2], fns)

    def add(env: dict[str, Any]) -> Any:
        a, b = left(env), right(env)
        return a + b if type(a) is str and type(b) is str else UNKNOWN

    return add


_SIZED = (str, list, dict)  #: what CEL's size() measures here


def _size(value: Any) -> Any:
    return len(value) if type(value) in _SIZED else UNKNOWN


def _string(value: Any) -> Any:
    """CEL's `string()` of a string or an int (decimal); other types are left to CEL."""
    return str(value) if type(value) in (str, int) else UNKNOWN


def _strings(method: Callable[[str, str], bool]) -> Callable[[Any, Any], Any]:
    def call(text: Any, arg: Any) -> Any:
        return method(text, arg) if type(text) is str and type(arg) is str else UNKNOWN

    return call


_METHODS: dict[str, Callable[..., Any]] = {
    "startsWith": _strings(str.startswith),
    "endsWith": _strings(str.endswith),
    "contains": _strings(str.__contains__),
    "matches": _strings(re_matches),
    "size": _size,
}


def _b_call(ir: tuple[Any, ...], fns: dict[str, Any]) -> Guard:
    if ir[1] == "re_matches" and len(ir[2]) == 2 and ir[2][1][0] == "lit":
        return _literal_search(_build(ir[2][0], fns), ir[2][1][1])
    name, args = ir[1], [_build(a, fns) for a in ir[2]]
    if name == "size" and len(args) == 1:
        (arg,) = args
        return lambda env: len(v) if type(v := arg(env)) in _SIZED else UNKNOWN
    if name == "string" and len(args) == 1:
        impl, params = _string, None
    elif (name, len(args)) in fns:
        impl, params = fns[(name, len(args))]
    else:
        return _unknown
    return _caller(impl, params, args)


def _literal_search(target: Guard, pattern: Any) -> Guard:
    """`target.matches("literal")` with the pattern compiled once (`regex.py`)."""
    try:
        search = searcher(pattern)
    except Exception:  # noqa: BLE001 - an invalid pattern is a CEL error: unknown
        return _unknown

    def matches(env: dict[str, Any]) -> Any:
        text = target(env)
        return search(text) if type(text) is str else UNKNOWN

    return matches


def _b_mcall(ir: tuple[Any, ...], fns: dict[str, Any]) -> Guard:
    if ir[1] == "matches" and len(ir[3]) == 1 and ir[3][0][0] == "lit":
        return _literal_search(_build(ir[2], fns), ir[3][0][1])
    name, args = ir[1], [_build(ir[2], fns)] + [_build(a, fns) for a in ir[3]]
    if name in _METHODS:
        return _caller(_METHODS[name], None, args)
    return _unknown


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


def _b_comprehension(ir: tuple[Any, ...], fns: dict[str, Any]) -> Guard:
    quantifier, target, name, body = ir[0], _build(ir[1], fns), ir[2], _build(ir[3], fns)
    decisive = quantifier == "exists"  # exists: one true decides; all: one false decides

    def comprehension(env: dict[str, Any]) -> Any:
        items = target(env)
        if type(items) is dict:
            items = list(items)
        elif type(items) is not list:
            return UNKNOWN
        saved = env.get(name, UNKNOWN)
        uncertain = False
        try:
            for item in items:
                env[name] = item
                value = body(env)
                if value is decisive:
                    return decisive
                if value is not (not decisive):
                    uncertain = True
        finally:
            if saved is UNKNOWN:
                env.pop(name, None)
            else:
                env[name] = saved
        return UNKNOWN if uncertain else not decisive

    return comprehension


_BUILDERS: dict[str, Callable[[tuple[Any, ...], dict[str, Any]], Guard]] = {
    "lit": _b_lit,
    "ident": _b_ident,
    "dot": _b_dot,
    "index": _b_index,
    "list": _b_list,
    "and": _b_and,
    "or": _b_or,
    "not": _b_not,
    "rel": _b_rel,
    "add": _b_add,
    "call": _b_call,
    "mcall": _b_mcall,
    "exists": _b_comprehension,
    "all": _b_comprehension,
}


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
