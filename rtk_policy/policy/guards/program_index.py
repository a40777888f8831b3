"""The program index of a rule derived from its `match:` expression (load path only).

A rule whose match is a conjunction (`&&` chain) with a conjunct `segment.program in ["a", "b"]` or
`segment.program == "a"` can only match segments running those programs: such a conjunct is false
elsewhere, and CEL's `&&` is false whenever one side is false (even when the other side errors). The
`PolicySet` then tries the rule only on those programs, exactly like an explicit `programs:` list.
"""

from __future__ import annotations

from typing import Any

from rtk_policy.policy.guards.fast_source import string_literal

_WRAPPERS = frozenset(
    {
        "expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication",
        "unary", "member", "primary", "paren_expr",
    }
)  # fmt: skip


def derived_programs(source: str) -> tuple[str, ...]:
    """The programs `source` is limited to by a `segment.program` conjunct; () when not limited."""
    if "program" not in source:
        return ()
    from rtk_policy.policy.checker import parse_tree

    tree, syntax = parse_tree(source)
    if syntax is not None:
        return ()
    found: list[str] | None = None
    for conjunct in _conjuncts(tree):
        programs = _programs_of(conjunct)
        if programs is not None:
            found = programs if found is None else [p for p in found if p in programs]
    return tuple(dict.fromkeys(found)) if found else ()


def _strip(node: Any) -> Any:
    while hasattr(node, "data") and node.data in _WRAPPERS and len(node.children) == 1:
        node = node.children[0]
    return node


def _conjuncts(node: Any) -> list[Any]:
    """The operands of the top-level `&&` chain of `node` (parentheses looked through)."""
    node = _strip(node)
    if hasattr(node, "data") and node.data == "conditionaland" and len(node.children) == 2:
        return _conjuncts(node.children[0]) + _conjuncts(node.children[1])
    return [node]


def _is_segment_program(node: Any) -> bool:
    node = _strip(node)
    if not hasattr(node, "data") or node.data != "member_dot" or len(node.children) != 2:
        return False
    target, name = node.children
    target = _strip(target)
    return (
        str(name) == "program"
        and hasattr(target, "data")
        and target.data == "ident"
        and [str(c) for c in target.children] == ["segment"]
    )


def _programs_of(node: Any) -> list[str] | None:
    """The programs a `segment.program in [...]` / `== "x"` conjunct allows; None for other
    conjuncts."""
    if not hasattr(node, "data") or node.data != "relation" or len(node.children) != 2:
        return None
    operator, right = node.children
    if not hasattr(operator, "data") or len(operator.children) != 1:
        return None
    left = operator.children[0]
    if operator.data == "relation_in" and _is_segment_program(left):
        return _string_list(right)
    if operator.data == "relation_eq":
        if _is_segment_program(left):
            value = string_literal(right)
        elif _is_segment_program(right):
            value = string_literal(left)
        else:
            return None
        return None if value is None else [value]
    return None


def _string_list(node: Any) -> list[str] | None:
    node = _strip(node)
    if not hasattr(node, "data") or node.data != "list_lit":
        return None
    if not node.children:
        return []
    values = [string_literal(item) for item in node.children[0].children]
    return None if any(v is None for v in values) else [v for v in values if v is not None]
