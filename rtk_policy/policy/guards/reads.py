"""What a guard form reads of the CEL variables: the facts a rule's answer can depend on.

A rule's answer (match, no match, or error) is a function of the values its expression reads and of
the custom functions' answers on them, which are pure. The guard form (`guards/ir.py`) is the
expression node for node, so where it has no `("unknown",)` node its reads are the expression's.
`form_reads` names them as paths:

- `segment.F`, `segment.pipeline.F`, `command.F`: one field of a variable;
- `segments.F`: field F of some element of `command.segments` (through a comprehension over it or
  an index into it);
- a whole value: `segment`, `segment.pipeline`, `command`, `command.segments`, `segments` (an
  element of `command.segments` used whole), and any other variable (`ctx`, `claude`, `config`,
  `tool`) by its name, whichever of its fields is read.

It gives None when the form has a node outside the guard subset: what that part reads is not known.
Used by the re-check of a rewrite (`engine/recheck.py`) to prove that the deny rules cannot see the
difference between a command and its `rtk`-prefixed rewrite.
"""

from __future__ import annotations

from rtk_policy.policy.facts import VARIABLES

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~4 ms on a cold hook)
if TYPE_CHECKING:
    from typing import Any

#: what a comprehension variable stands for: an element of `command.segments`, or a plain value
_ELEMENT, _PLAIN = "segments", ""


class _Unknown(Exception):
    """A node outside the guard subset: its reads are not known."""


def form_reads(form: tuple[Any, ...]) -> frozenset[str] | None:
    """The paths `form` reads (see the module docstring); None when some are not known."""
    found: set[str] = set()
    try:
        _walk(form, {}, found)
    except _Unknown:
        return None
    return frozenset(found)


def _walk(ir: Any, bound: dict[str, str], found: set[str]) -> None:
    if not isinstance(ir, tuple) or not ir:
        return
    kind = ir[0]
    if not isinstance(kind, str):  # call arguments, list items
        for part in ir:
            _walk(part, bound, found)
        return
    if kind == "unknown":
        raise _Unknown
    if kind == "lit":
        return
    if kind in ("ident", "dot", "index"):
        path = _path(ir, bound, found)
        if path is not None:
            if path:
                found.add(path)
            return
        if kind == "dot":  # a field of a computed value: what the value reads
            _walk(ir[1], bound, found)
        elif kind == "index":
            _walk(ir[1], bound, found)
            _walk(ir[2], bound, found)
        return
    if kind in ("exists", "all"):
        _walk_comprehension(ir, bound, found)
        return
    start = {"rel": 2, "call": 2, "mcall": 2}.get(kind, 1)  # skip operator and function names
    for part in ir[start:]:
        _walk(part, bound, found)


def _walk_comprehension(ir: Any, bound: dict[str, str], found: set[str]) -> None:
    """`target.exists(v, body)`: over `command.segments`, `v` is an element of it."""
    target, name, body = ir[1], ir[2], ir[3]
    over_segments = _path(target, bound, found) == "command.segments"
    if not over_segments:
        _walk(target, bound, found)
    _walk(body, {**bound, name: _ELEMENT if over_segments else _PLAIN}, found)


def _path(ir: Any, bound: dict[str, str], found: set[str]) -> str | None:
    """The path of a chain of field reads rooted at a variable or a `command.segments` element;
    "" for a plain comprehension value; None when `ir` is not such a chain. The reads of an
    index's key go to `found`."""
    kind = ir[0]
    if kind == "ident":
        name = ir[1]
        if name in bound:
            return bound[name]
        return name if name in VARIABLES else None
    if kind == "index":
        if _path(ir[1], bound, found) != "command.segments":
            return None
        _walk(ir[2], bound, found)
        return _ELEMENT
    if kind == "dot":
        root = _path(ir[1], bound, found)
        if root is None:
            return None
        if root == _PLAIN:
            return _PLAIN
        if root in ("segment", "command", _ELEMENT, "segment.pipeline"):
            return f"{root}.{ir[2]}"
        return root  # another variable, or a field's field: the whole of it
    return None
