"""Load-time rewrite of CEL sources into faster equivalents, done on cel-python's lark parse tree.

Today one rewrite: `x.matches('literal')` becomes `re_matches(x, 'literal')` (`regex.py`), whose
compiled pattern is cached for the process; the answers are the same (RE2, partial match). Only
calls whose pattern is a string literal that RE2 accepts are rewritten; anything else is left as
written. The source is spliced by the token positions of the tree, so spacing, comments and quoting
elsewhere are kept.
"""

from __future__ import annotations

from typing import Any

from rtk_policy.policy.regex import re_matches

FUNCTION = "re_matches"
_STRING_TOKENS = frozenset({"STRING_LIT", "MLSTRING_LIT"})


def fast_source(source: str) -> str:
    """`source` with every `x.matches('literal')` call turned into `re_matches(x, 'literal')`.

    Returns `source` unchanged when it does not parse or has nothing to rewrite.
    """
    if "matches" not in source:
        return source
    from rtk_policy.policy.checker import parse_tree

    tree, syntax = parse_tree(source)
    if syntax is not None:
        return source
    calls = [found for node in tree.iter_subtrees() if (found := _matches_call(node)) is not None]
    if not calls:
        return source
    calls.sort(key=lambda c: (c[0], -c[1]))  # outermost first
    return _render(source, 0, len(source), calls)


def _matches_call(node: Any) -> tuple[int, int, tuple[int, int], tuple[int, int]] | None:
    """(start, end, receiver span, pattern span) of a rewritable `x.matches('literal')` node."""
    if node.data != "member_dot_arg" or len(node.children) != 3:
        return None
    receiver, name, arguments = node.children
    if str(name) != "matches" or not hasattr(arguments, "children"):
        return None
    if len(arguments.children) != 1:
        return None
    literal = string_literal(arguments.children[0])
    if literal is None or not _valid(literal):
        return None
    meta, rmeta, ameta = node.meta, receiver.meta, arguments.meta
    return (
        meta.start_pos,
        meta.end_pos,
        (rmeta.start_pos, rmeta.end_pos),
        (ameta.start_pos, ameta.end_pos),
    )


def string_literal(expr: Any) -> str | None:
    """The value of `expr` when it is nothing but one string literal."""
    node = expr
    while hasattr(node, "children") and node.data != "literal":
        if len(node.children) != 1:
            return None
        node = node.children[0]
    if not hasattr(node, "children") or len(node.children) != 1:
        return None
    token = node.children[0]
    if getattr(token, "type", "") not in _STRING_TOKENS:
        return None
    from celpy.evaluation import celstr

    return str(celstr(token))


def _valid(pattern: str) -> bool:
    try:
        re_matches("", pattern)
    except Exception:  # noqa: BLE001 - an invalid pattern stays a plain `matches` call
        return False
    return True


def _render(source: str, lo: int, hi: int, calls: list[Any]) -> str:
    """`source[lo:hi]` with the outermost calls inside it rewritten (recursively)."""
    out: list[str] = []
    position = lo
    for start, end, receiver, pattern in calls:
        if start < position or end > hi or start < lo:
            continue  # nested in a call already rendered, or outside this span
        inner = [c for c in calls if start <= c[0] and c[1] <= end and c[0:2] != (start, end)]
        out.append(source[position:start])
        out.append(
            f"{FUNCTION}({_render(source, receiver[0], receiver[1], inner)}, "
            f"{_render(source, pattern[0], pattern[1], inner)})"
        )
        position = end
    out.append(source[position:hi])
    return "".join(out)
