"""The guard form of a CEL expression (load time only): lark tree → nested tuples (`guard.py` runs them).

Each node becomes a tuple naming its kind (`lit`, `ident`, `dot`, `index`, `list`, `and`, `or`, `not`,
`rel`, `add`, `call`, `mcall`, `exists`, `all`); anything outside that subset is `("unknown",)`, which a
guard answers with UNKNOWN. The forms are kept in the compiled-policy cache, so a cache hit never parses.
"""

from __future__ import annotations

from typing import Any

_NO_IR: tuple[str, ...] = ("unknown",)
_PASS = frozenset(
    {"expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication", "unary",
     "member", "primary", "paren_expr"}
)  # fmt: skip
_RELATIONS = {
    "relation_eq": "eq", "relation_ne": "ne", "relation_lt": "lt", "relation_le": "le",
    "relation_gt": "gt", "relation_ge": "ge", "relation_in": "in",
}  # fmt: skip


def guard_ir(source: str) -> tuple[Any, ...]:
    """The guard form of a CEL source; `("unknown",)` when it does not parse."""
    from rtk_policy.policy.checker import parse_tree

    tree, syntax = parse_tree(source)
    if syntax is not None:
        return _NO_IR
    try:
        return _ir(tree)
    except Exception:  # noqa: BLE001 - an unexpected tree shape: no guard
        return _NO_IR


def _ir(node: Any) -> tuple[Any, ...]:
    data = getattr(node, "data", None)
    children = getattr(node, "children", [])
    if data in _PASS and len(children) == 1:
        return _ir(children[0])
    if data == "conditionaland" and len(children) == 2:
        return ("and", _ir(children[0]), _ir(children[1]))
    if data == "conditionalor" and len(children) == 2:
        return ("or", _ir(children[0]), _ir(children[1]))
    if data == "unary" and len(children) == 2 and getattr(children[0], "data", "") == "unary_not":
        return ("not", _ir(children[1]))
    if data == "relation" and len(children) == 2:
        operator = children[0]
        name = _RELATIONS.get(getattr(operator, "data", ""))
        if name is not None and len(operator.children) == 1:
            return ("rel", name, _ir(operator.children[0]), _ir(children[1]))
    if data == "addition" and len(children) == 2:
        operator = children[0]
        if getattr(operator, "data", "") == "addition_add" and len(operator.children) == 1:
            return ("add", _ir(operator.children[0]), _ir(children[1]))
    if data == "literal":
        return _literal(node)
    if data == "ident":
        return ("ident", str(children[0]))
    if data == "member_dot" and len(children) == 2:
        return ("dot", _ir(children[0]), str(children[1]))
    if data == "member_index" and len(children) == 2:
        return ("index", _ir(children[0]), _ir(children[1]))
    if data == "list_lit":
        items = children[0].children if children else []
        return ("list", tuple(_ir(item) for item in items))
    if data == "ident_arg":
        args = children[1].children if len(children) > 1 else []
        return ("call", str(children[0]), tuple(_ir(a) for a in args))
    if data == "member_dot_arg" and len(children) in (2, 3):
        args = children[2].children if len(children) == 3 else []
        return _member_call(_ir(children[0]), str(children[1]), args)
    return _NO_IR


def _member_call(target: tuple[Any, ...], name: str, args: list[Any]) -> tuple[Any, ...]:
    if name in ("exists", "all") and len(args) == 2:
        variable = _ir(args[0])
        if variable[0] != "ident":
            return _NO_IR
        return (name, target, variable[1], _ir(args[1]))
    return ("mcall", name, target, tuple(_ir(a) for a in args))


def _literal(node: Any) -> tuple[Any, ...]:
    from rtk_policy.policy.guards.fast_source import string_literal

    token = node.children[0]
    kind = getattr(token, "type", "")
    if kind in ("STRING_LIT", "MLSTRING_LIT"):
        value = string_literal(node)
        return _NO_IR if value is None else ("lit", value)
    if kind == "BOOL_LIT":
        return ("lit", str(token) == "true")
    if kind == "INT_LIT":
        text = str(token)
        if text.lstrip("-").isdigit():
            return ("lit", int(text))
    return _NO_IR
