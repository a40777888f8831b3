"""Shapes of the tree-sitter-bash syntax tree: flattening lists, pipelines, redirected statements.

tree-sitter-bash nests lists left-deep (`a && b && c` is `((a && b) && c)`) and reads `a | b && c`
as `a | (b && c)`; these helpers give the walker bash's structure without recursion.
"""

from __future__ import annotations

from typing import Any

from rtk_policy.shell.simple import SKIP_TYPES

WORDISH = frozenset(
    {
        "word",
        "string",
        "raw_string",
        "concatenation",
        "number",
        "simple_expansion",
        "expansion",
        "command_substitution",
        "ansi_c_string",
        "translated_string",
        "process_substitution",
        "arithmetic_expansion",
        "string_content",
        "variable_name",
    }
)


def flatten(node: Any, kind: str, limit: int = 1 << 30) -> list[Any]:
    """Children of a left-deep chain of `kind` nodes, flattened without recursion.

    Stops once about `limit` children are collected (the walker caps commands anyway).
    """
    spine: list[Any] = []
    cur = node
    while cur.type == kind and cur.child_count:
        spine.append(cur)
        cur = cur.child(0)
    out = [cur] if cur.type != kind else []
    for n in reversed(spine):
        out.extend(n.child(k) for k in range(1, n.child_count))
        if len(out) > limit:
            break
    return out


def pipe_parts(node: Any) -> tuple[list[Any], list[str], list[Any]]:
    """Stages and operators of a pipeline, and what follows a list tree-sitter nested in its end.

    tree-sitter-bash parses `a | b | c && d` as `a | (b | c && d)`; bash binds the pipe tighter, so
    the list's first item joins the pipeline and the rest (from the operator on) follows it.
    """
    stages: list[Any] = []
    ops: list[str] = []
    for c in node.children:
        if c.is_named and c.type not in SKIP_TYPES:
            stages.append(c)
        elif c.type in ("|", "|&"):
            ops.append(c.type)
    rest: list[Any] = []
    if stages and stages[-1].type == "list":
        items = flatten(stages.pop(), "list")
        first, rest = items[0], items[1:]
        if first.type == "pipeline":
            inner, inner_ops, inner_rest = pipe_parts(first)
            stages.extend(inner)
            ops.extend(inner_ops)
            rest = inner_rest + rest
        else:
            stages.append(first)
    return stages, ops, rest


def statement_body(node: Any) -> Any:
    """The statement a redirected statement wraps (the node itself otherwise)."""
    if node.type == "redirected_statement":
        body = node.child_by_field_name("body")
        return body if body is not None else node
    return node


def error_parts(node: Any) -> list[tuple[str, Any]]:
    """An ERROR node's children: runs of loose words ("words", [nodes]) and other ("node", node)."""
    parts: list[tuple[str, Any]] = []
    loose: list[Any] = []
    for c in node.children:
        if c.is_named and c.type in WORDISH:
            loose.append(c)
            continue
        if loose:
            parts.append(("words", loose))
            loose = []
        parts.append(("node", c))
    if loose:
        parts.append(("words", loose))
    return parts
