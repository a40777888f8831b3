"""The guard forms of the compiled cache are read node by node when first used (`ir.StoredForms`),
checked as the whole table was: what a forged table holds is refused where it is read, and a form
nested deeper than Python's stack still reads back."""

from __future__ import annotations

import pytest

from rtk_policy.policy.guards.ir import FormTable, form_at, forms_from_data, readable_form

FORMS = [
    ("and", ("rel", "eq", ("dot", ("ident", "segment"), "program"), ("lit", "git")),
     ("mcall", "exists", ("dot", ("ident", "segment"), "args"), ())),
    ("call", "glob", (("lit", "*.txt"), ("dot", ("ident", "segment"), "program"))),
    ("exists", ("dot", ("ident", "tool"), "paths_written"), "p", ("not", ("lit", True))),
    ("list", (("lit", 1), ("lit", False), ("unknown",))),
]  # fmt: skip


def _stored(forms: list[tuple]) -> tuple[list, list[int]]:
    """(the node table of `forms` as the cache keeps it, each form's reference)."""
    table = FormTable()
    references = [table.add(form) for form in forms]
    return [list(node) for node in table.nodes], references


def test_forms_read_back_equal_and_shared():
    """Each form reads back equal to what was stored, a shared subtree as one object, only the
    nodes a form refers to read."""
    nodes, references = _stored(FORMS)
    forms = forms_from_data(nodes)
    first = form_at(forms, references[0])
    assert first == FORMS[0]
    assert sum(node is not None for node in forms._built) < len(nodes)
    assert [form_at(forms, reference) for reference in references] == FORMS
    assert form_at(forms, references[1])[2][1][1] is first[1][2][1]  # ("ident", "segment")
    assert form_at(forms, -1) == ()


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        (["exec", "print(1)"], "not a guard node"),
        (["lit", [1, 2]], "not a guard node"),
        (["not", 10**6], "not before it"),
        (["dot", True, "x"], "not before it"),
        ("text", "a list starting"),
        (["call", "f", 3], "operands are a list"),
    ],
)
def test_a_forged_node_is_refused_where_it_is_read(bad, reason):
    """A node the compiler never makes raises when a form refers to it (and every time after),
    a form that does not refer to it still reads, and `readable_form` reads the bad one as a
    guard that cannot tell."""
    nodes, references = _stored(FORMS)
    target = references[2]  # the `exists` form's root
    nodes[target] = bad
    forms = forms_from_data(nodes)
    for _ in range(2):
        with pytest.raises(ValueError, match=reason):
            form_at(forms, target)
    assert readable_form(forms, target) == ("unknown",)
    assert form_at(forms, references[0]) == FORMS[0]


def test_a_node_refers_only_to_nodes_before_it():
    """A reference to itself or to a later node is refused: the table holds no cycle."""
    nodes = [["lit", True], ["not", 1], ["not", 2], ["not", 0]]
    forms = forms_from_data(nodes)
    for at in (1, 2):
        with pytest.raises(ValueError, match="not before it"):
            forms[at]
    assert forms[3] == ("not", ("lit", True))


def test_a_form_deeper_than_the_stack_reads_back():
    """A chain of nodes nested far deeper than Python's recursion limit reads back (the nodes
    before it first, in order), node by node the same as its neighbours'."""
    depth = 5000
    nodes = [["lit", True]] + [["not", at] for at in range(depth)]
    forms = forms_from_data(nodes)
    form = forms[depth]
    for _ in range(depth):
        assert form[0] == "not"
        form = form[1]
    assert form == ("lit", True)


def test_the_table_must_be_a_list():
    """Anything but a list of nodes is refused at once (the whole file is then compiled again)."""
    with pytest.raises(ValueError):
        forms_from_data({"0": ["lit", 1]})
