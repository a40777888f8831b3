"""The guard form of a CEL expression: lark tree → nested tuples (`guard.py` runs them), and back
from the plain data the compiled-policy cache keeps.

Each node becomes a tuple naming its kind (`lit`, `ident`, `dot`, `index`, `list`, `and`, `or`,
`not`, `rel`, `add`, `call`, `mcall`, `exists`, `all`); anything outside that subset is
`("unknown",)`, which a guard answers with UNKNOWN. The forms are kept in the compiled-policy cache
as a table of JSON arrays (`FormTable`), so a cache hit never parses: `forms_from_data` turns them
back into tuples as they are first used (`StoredForms`), checking every node's shape, so a damaged
or forged cache can never hand the guard layer (or the Python it generates from the forms,
`guards/code.py`) anything `guard_ir` would not make.
"""

from __future__ import annotations

from rtk_policy.util import json_codec

TYPE_CHECKING = False
if TYPE_CHECKING:
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


#: the values a `lit` node holds
_LITERAL_TYPES = (str, bool, int)
_RELATION_NAMES = frozenset(_RELATIONS.values())
#: the reference of "no form" (a rule or file without that expression) in `FormTable` data
NO_FORM = -1


class FormTable:
    """Guard forms as plain data for the compiled-policy cache: one node table for all of them.

    A node is a JSON array naming its kind, with the operands that are forms given as indexes of
    nodes before it, so a subtree shared by several forms (a rule's guard and its residuals, the
    `claude-deny` guard inside its message) is stored once, and read back as one tuple.
    `add(form)` gives the reference of a form (`NO_FORM` for `()`); `nodes` is the table.
    """

    def __init__(self) -> None:
        self.nodes: list[list[Any]] = []
        self._seen: dict[str, int] = {}

    def add(self, form: tuple[Any, ...]) -> int:
        """The reference of `form` in the table (its nodes added as needed)."""
        return self._node(form) if form else NO_FORM

    def _node(self, form: tuple[Any, ...]) -> int:
        kind = form[0]
        if kind in ("lit", "ident", "unknown"):
            node = list(form)
        elif kind == "dot":
            node = [kind, self._node(form[1]), form[2]]
        elif kind in ("call", "mcall"):
            node = [kind, form[1], *([self._node(form[2])] if kind == "mcall" else []),
                    [self._node(item) for item in form[-1]]]  # fmt: skip
        elif kind == "rel":
            node = [kind, form[1], self._node(form[2]), self._node(form[3])]
        elif kind == "list":
            node = [kind, [self._node(item) for item in form[1]]]
        elif kind in _QUANTIFIERS:
            node = [kind, self._node(form[1]), form[2], self._node(form[3])]
        else:  # and, or, index, add, not: every operand a form
            node = [kind, *(self._node(part) for part in form[1:])]
        key = json_codec.dumps(node)  # ("lit", 1) == ("lit", True), yet a guard tells them apart
        found = self._seen.get(key)
        if found is None:
            found = self._seen[key] = len(self.nodes)
            self.nodes.append(node)
        return found


def forms_from_data(nodes: Any) -> StoredForms:
    """The nodes of a `FormTable`'s `nodes` as guard forms (nested tuples, shared subtrees one
    object), by reference, each node read back when a form first refers to it (`StoredForms`).
    Raise `ValueError` when `nodes` is not a list."""
    if type(nodes) is not list:
        raise ValueError("the guard forms are a list of nodes")
    return StoredForms(nodes)


class StoredForms:
    """The guard forms of a compiled-cache file: `forms[reference]` is the form of a node, read
    back (and checked) the first time a form refers to it, so a cold hook builds the forms of the
    rules it tries rather than the ~3,600 nodes of the shipped packs.

    Reading a node raises `ValueError` for any node `guard_ir` (or the specialiser, whose residuals
    are kept too) would not make, or one that refers to a node not before it (so the table holds
    no cycle): the caller either refuses the whole file (the files' forms, read when the set
    loads) or reads the form as one it cannot tell (`readable_form`)."""

    __slots__ = ("_nodes", "_built")

    def __init__(self, nodes: list[Any]) -> None:
        self._nodes = nodes
        self._built: list[tuple[Any, ...] | None] = [None] * len(nodes)

    def __len__(self) -> int:
        return len(self._nodes)

    def __getitem__(self, at: int) -> tuple[Any, ...]:
        found = self._built[at]
        if found is not None:
            return found
        try:
            return self._read(at)
        except RecursionError:  # a form nested deeper than the stack: the nodes before it first
            for before in range(at):  # in order, each refers to nodes read already
                try:
                    self._read(before)
                except ValueError:
                    continue  # not one `at` refers to, or reading `at` raises below
            return self._read(at)

    def _read(self, at: int) -> tuple[Any, ...]:
        """Read node `at` back (and, through `_ref`, the nodes it refers to that are not yet)."""
        found = self._built[at]
        if found is None:
            found = self._built[at] = _node(self._nodes[at], self, at)
        return found


def checked_reference(forms: Any, reference: Any) -> int:
    """`reference`, a reference into `forms` (or `NO_FORM`); raise `ValueError` when it is not."""
    if type(reference) is not int or not NO_FORM <= reference < len(forms):
        raise ValueError("a guard form reference that is not one")
    return reference


def form_at(forms: Any, reference: Any) -> tuple[Any, ...]:
    """The form of `reference` in `forms_from_data` output; `()` for `NO_FORM`. Raise `ValueError`
    for a reference that is not one, or a form that does not read back."""
    checked_reference(forms, reference)
    return forms[reference] if reference != NO_FORM else ()


def readable_form(forms: Any, reference: int) -> tuple[Any, ...]:
    """`form_at` for a reference checked already, where a form that does not read back (a forged
    cache whose digest held) is `("unknown",)`: a guard that cannot tell, so CEL decides what a
    guard of that form would have pre-checked (the decision is a fresh compile's)."""
    try:
        return form_at(forms, reference)
    except ValueError:
        return _NO_IR


def _node(data: Any, forms: StoredForms, limit: int) -> tuple[Any, ...]:
    """The form of the stored node `data`, whose operands are nodes of `forms` before `limit`."""
    if type(data) is not list or not data or type(data[0]) is not str:
        raise ValueError("a guard node is a list starting with its kind")
    kind, size = data[0], len(data)
    if kind == "lit" and size == 2 and type(data[1]) in _LITERAL_TYPES:
        return ("lit", data[1])
    if kind == "dot" and size == 3 and type(data[2]) is str:
        return ("dot", _ref(data[1], forms, limit), data[2])
    if kind == "ident" and size == 2 and type(data[1]) is str:
        return ("ident", data[1])
    if kind in _BINARY and size == 3:
        return (kind, _ref(data[1], forms, limit), _ref(data[2], forms, limit))
    if kind == "call" and size == 3 and type(data[1]) is str:
        return ("call", data[1], _refs(data[2], forms, limit))
    if kind == "mcall" and size == 4 and type(data[1]) is str:
        return ("mcall", data[1], _ref(data[2], forms, limit), _refs(data[3], forms, limit))
    if kind == "rel" and size == 4 and type(data[1]) is str and data[1] in _RELATION_NAMES:
        return ("rel", data[1], _ref(data[2], forms, limit), _ref(data[3], forms, limit))
    if kind == "not" and size == 2:
        return ("not", _ref(data[1], forms, limit))
    if kind == "list" and size == 2:
        return ("list", _refs(data[1], forms, limit))
    if kind in _QUANTIFIERS and size == 4 and type(data[2]) is str:
        return (kind, _ref(data[1], forms, limit), data[2], _ref(data[3], forms, limit))
    if kind == "unknown" and size == 1:
        return _NO_IR
    raise ValueError(f"not a guard node: kind {kind[:20]!r} with {size - 1} operand(s)")


def _ref(reference: Any, forms: StoredForms, limit: int) -> tuple[Any, ...]:
    """The node `reference` names: one before `limit` (so the table holds no cycle), read back
    now when it is not yet."""
    if type(reference) is not int or not 0 <= reference < limit:
        raise ValueError("a guard node refers to a node not before it")
    found = forms._built[reference]
    return found if found is not None else forms._read(reference)


def _refs(references: Any, forms: StoredForms, limit: int) -> tuple[tuple[Any, ...], ...]:
    if type(references) is not list:
        raise ValueError("operands are a list")
    return tuple([_ref(reference, forms, limit) for reference in references])


_BINARY = frozenset({"and", "or", "index", "add"})
_QUANTIFIERS = frozenset({"exists", "all"})
