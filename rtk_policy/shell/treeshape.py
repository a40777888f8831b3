"""Shapes of the tree-sitter-bash syntax tree: flattening lists, pipelines, redirected statements.

tree-sitter-bash nests lists left-deep (`a && b && c` is `((a && b) && c)`) and reads `a | b && c`
as `a | (b && c)`; these helpers give the walker bash's structure without recursion.
"""

from __future__ import annotations

from rtk_policy.shell.redirects import REDIRECT_TYPES
from rtk_policy.shell.simple import SKIP_TYPES
from rtk_policy.util import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

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


class Stage(record.NamedTuple):
    """One pipeline stage: its statement (`node`), the redirect nodes typed after it that
    tree-sitter hung on an enclosing node (`redirs`: they belong to its last command), and the end
    byte of both (`end`)."""

    node: Any
    redirs: tuple[Any, ...]
    end: int


class PipeGroup(record.NamedTuple):
    """One pipeline of an `&&` / `||` chain: the operator before it, its `Stage`s and pipe ops."""

    op_before: str
    stages: list[Stage]
    ops: list[str]


_CHAIN_TYPES = frozenset({"pipeline", "list"})
_PIPE_OPS = frozenset({"|", "|&"})
_AND_OR = frozenset({"&&", "||"})


def pipe_groups(node: Any, limit: int = 1 << 30) -> list[PipeGroup]:
    """The pipelines and `&&` / `||` operators tree-sitter folded into the pipeline `node`.

    tree-sitter-bash parses `a | b | c && d` as `a | (b | c && d)`, `a | b 2>&1 | c` as
    `(a | b) 2>&1 | c` and `a && b 2>x | c` as `(a && b) 2>x | c`; bash binds the pipe tighter than
    `&&` / `||` and a redirect to the simple command before it. The node is read as the flat
    sequence of statements and operators it spells (a redirect goes with the statement before it)
    and cut into pipelines at `&&` / `||`. No recursion; stops after about `limit` items.
    """
    groups = [PipeGroup("", [], [])]
    for item in _linear(node, limit):
        cur = groups[-1]
        if isinstance(item, Stage):
            cur.stages.append(item)
        elif item in _AND_OR:
            groups.append(PipeGroup(item, [], []))
        elif cur.stages:
            cur.ops.append(item)
    return [g for g in groups if g.stages]


def _linear(node: Any, limit: int) -> list[Any]:
    """`node` as a flat list of `Stage`s and operator strings, in source order."""
    out: list[Any] = []
    stack: list[Any] = [node]
    while stack and len(out) <= limit:
        cur = stack.pop()
        if isinstance(cur, str):
            out.append(cur)
        elif isinstance(cur, tuple):  # redirects of a chain: to the statement typed before them
            redirs, end = cur
            k = len(out) - 1
            while k >= 0 and not isinstance(out[k], Stage):
                k -= 1
            if k >= 0:
                out[k] = Stage(out[k].node, out[k].redirs + redirs, max(out[k].end, end))
        elif cur.type in _CHAIN_TYPES:
            kids: list[Any] = []
            for c in cur.children:
                if c.is_named and c.type not in SKIP_TYPES:
                    kids.append(c)
                elif c.type in _PIPE_OPS or c.type in _AND_OR:
                    kids.append(c.type)
            stack.extend(reversed(kids))
        elif cur.type == "redirected_statement" and _chain_body(cur) is not None:
            redirs = tuple(c for c in cur.children if c.type in REDIRECT_TYPES)
            stack.append((redirs, cur.end_byte))
            stack.append(cur.child_by_field_name("body"))
        else:
            out.append(Stage(cur, (), cur.end_byte))
    return out


def _chain_body(node: Any) -> Any:
    """The pipeline / list a redirected statement wraps, through nested redirected statements
    (None for other bodies)."""
    body = node.child_by_field_name("body")
    while body is not None and body.type == "redirected_statement":
        body = body.child_by_field_name("body")
    return body if body is not None and body.type in _CHAIN_TYPES else None


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
