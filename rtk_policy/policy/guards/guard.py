"""Guards: a cheap Python form of a rule's expressions that gives CEL's answer where it can.

At load time (`guards/ir.py`: lark tree → nested tuples, kept in the compiled cache) an expression
is translated into a three-valued form: each node gives a plain value, or `UNKNOWN` when the node
is outside the small subset understood here (or its CEL evaluation would be an error). At
evaluation time (`build_guard`, tuples → Python closures, no lark; the operations on values are in
`guards/values.py`) the guard runs on the same plain values the CEL activation is built from. A rule
whose guard gives `False` is skipped: its CEL result would be `false` too, because the guard
follows CEL's rules (`&&` is false when one side is false even if the other errors, `||` is false
only when both sides are false, comprehensions likewise). For the same reason a plain `True` (a
match, a file's `when`, a pipeline consumer) or a plain string (a rewrite, a message) is CEL's
answer and is used without calling the backend (`policyset.py`). Anything uncertain gives
`UNKNOWN`, and the expression is evaluated by the CEL backend. Custom functions are called through
the same Python implementations the backends call, so a guard saves the backend round trip (and
the cel-expr-python leak of every Python call from CEL).
"""

from __future__ import annotations

from collections.abc import Callable

from rtk_policy.policy.guards.values import (
    UNKNOWN,
    Guard,
    function_call,
    guard_functions,
    literal_search,
    method_call,
    relation,
    unknown,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    #: the custom CEL functions by (name, arity): (implementation, parameter types)
    Functions = dict[tuple[str, int], Any]

__all__ = [
    "FALSE_FORM", "UNKNOWN", "Guard", "build_guard", "chain_operands", "forget_costs",
    "guard_functions", "guard_patterns",
]  # fmt: skip

#: the guard form of `false`: what a specialised rule that cannot match becomes
FALSE_FORM = ("lit", False)


# --------------------------------------------------------------------------- run time: IR → closure


def build_guard(ir: tuple[Any, ...], functions: Functions | None = None) -> Guard | None:
    """A closure `env -> True | False | UNKNOWN` for `ir`; None when it could never say `False`."""
    if not ir or ir[0] == "unknown":
        return None
    return _build(ir, functions or {})


def _build(ir: tuple[Any, ...], fns: Functions) -> Guard:
    kind = ir[0]
    builder = _BUILDERS.get(kind)
    if builder is None:
        return unknown
    return builder(ir, fns)


def _b_lit(ir: tuple[Any, ...], fns: Functions) -> Guard:
    value = ir[1]
    return lambda env: value


def _b_ident(ir: tuple[Any, ...], fns: Functions) -> Guard:
    name = ir[1]
    return lambda env: env.get(name, UNKNOWN)


def _b_dot(ir: tuple[Any, ...], fns: Functions) -> Guard:
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


def _b_index(ir: tuple[Any, ...], fns: Functions) -> Guard:
    target, key = _build(ir[1], fns), _build(ir[2], fns)

    def index(env: dict[str, Any]) -> Any:
        value, at = target(env), key(env)
        if type(value) is list and type(at) is int and 0 <= at < len(value):
            return value[at]
        if type(value) is dict and type(at) is str:
            return value.get(at, UNKNOWN)
        return UNKNOWN

    return index


def _b_list(ir: tuple[Any, ...], fns: Functions) -> Guard:
    items = [_build(item, fns) for item in ir[1]]

    def listing(env: dict[str, Any]) -> Any:
        values = [item(env) for item in items]
        return UNKNOWN if any(v is UNKNOWN for v in values) else values

    return listing


def chain_operands(ir: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """The operands of a chain of one operator (`a && b && c`), cheapest first.

    Three-valued `&&`/`||` give the same answer in any order, so the cheap tests run first. The
    costs are remembered by node (`_COSTS`): a plan's guards share most of their subtrees.
    """
    if ir[0] not in ("and", "or"):
        return [ir]
    found: list[tuple[Any, ...]] = []
    for side in ir[1:]:
        found.extend(chain_operands(side) if side[0] == ir[0] else [side])
    return sorted(found, key=_cost)


#: what a node costs besides its operands (1 for the kinds not listed)
_OWN_COSTS = {"call": 20, "mcall": 3, "exists": 10, "all": 10}
#: Costs of the IR nodes costed, by id, each kept with its node (so that no other object takes its
#: id while the entry lasts): each node is costed once, not per level nor per guard built (the 34
#: guards of `git`'s plan share most subtrees: ~0.7 ms of a cold hook). At most `MAX_COSTS`.
_COSTS: dict[int, tuple[Any, int]] = {}
MAX_COSTS = 1 << 16


def forget_costs() -> None:
    """Drop the remembered costs (and the nodes they keep alive)."""
    _COSTS.clear()


def _cost(ir: Any) -> int:
    if not isinstance(ir, tuple) or not ir:
        return 0
    known = _COSTS.get(id(ir))
    if known is not None:
        return known[1]
    own = _OWN_COSTS.get(ir[0], 1)
    weight = 5 if ir[0] in ("exists", "all") else 1
    cost = own + weight * sum(_cost(part) for part in ir[1:] if isinstance(part, tuple))
    if len(_COSTS) >= MAX_COSTS:
        _COSTS.clear()
    _COSTS[id(ir)] = (ir, cost)
    return cost


def _b_and(ir: tuple[Any, ...], fns: Functions) -> Guard:
    parts = tuple(_build(part, fns) for part in chain_operands(ir))

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


def _b_or(ir: tuple[Any, ...], fns: Functions) -> Guard:
    parts = tuple(_build(part, fns) for part in chain_operands(ir))

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


def _b_not(ir: tuple[Any, ...], fns: Functions) -> Guard:
    operand = _build(ir[1], fns)

    def negation(env: dict[str, Any]) -> Any:
        value = operand(env)
        if value is True:
            return False
        return True if value is False else UNKNOWN

    return negation


def _b_rel(ir: tuple[Any, ...], fns: Functions) -> Guard:
    return relation(ir[1], ir[3], _build(ir[2], fns), _build(ir[3], fns))


def _b_add(ir: tuple[Any, ...], fns: Functions) -> Guard:
    left, right = _build(ir[1], fns), _build(ir[2], fns)

    def add(env: dict[str, Any]) -> Any:
        a, b = left(env), right(env)
        return a + b if type(a) is str and type(b) is str else UNKNOWN

    return add


def guard_patterns(ir: Any) -> set[str]:
    """The literal patterns of the `matches` calls in a guard form (what `literal_search` runs)."""
    found: set[str] = set()
    stack = [ir]
    while stack:
        node = stack.pop()
        if not isinstance(node, (tuple, list)):
            continue
        stack.extend(node)
        pattern = literal_pattern(node)
        if pattern is not None:
            found.add(pattern)
    return found


def literal_pattern(node: Any) -> str | None:
    """The pattern of a `re_matches(x, "p")` or `x.matches("p")` node, else None."""
    if len(node) == 3 and node[0] == "call" and node[1] == "re_matches":
        args = node[2]
        if len(args) == 2 and args[1][0] == "lit" and type(args[1][1]) is str:
            return args[1][1]
    if len(node) == 4 and node[0] == "mcall" and node[1] == "matches":
        args = node[3]
        if len(args) == 1 and args[0][0] == "lit" and type(args[0][1]) is str:
            return args[0][1]
    return None


def _b_call(ir: tuple[Any, ...], fns: Functions) -> Guard:
    pattern = literal_pattern(ir)
    if pattern is not None:
        return literal_search(_build(ir[2][0], fns), pattern)
    return function_call(ir[1], [_build(a, fns) for a in ir[2]], fns)


def _b_mcall(ir: tuple[Any, ...], fns: Functions) -> Guard:
    pattern = literal_pattern(ir)
    if pattern is not None:
        return literal_search(_build(ir[2], fns), pattern)
    return method_call(ir[1], [_build(ir[2], fns)] + [_build(a, fns) for a in ir[3]])


def _b_comprehension(ir: tuple[Any, ...], fns: Functions) -> Guard:
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


_BUILDERS: dict[str, Callable[[tuple[Any, ...], Functions], Guard]] = {
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
