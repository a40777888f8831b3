"""A compiled policy set as plain data for the compiled-policy cache (`cache.py`), and back.

The cache holds JSON and program bytes only: nothing whose loading runs code. A record is kept as
the array of its fields in order, each field stored as its `LAYOUTS` entry says; every guard form
(of files, rules and the plans' residuals) goes into one table of nodes (`guards/ir.FormTable`)
and is kept as its reference there; the indexed programs' plans are flat int arrays
(`guards/plan_store.tables_from_data`). Reading it back checks every value's type and range, so
that what a damaged or forged file holds either makes the records the compiler made or raises
`ValueError` (the caller then compiles again): a rule index out of range, a verdict that is not
one, a string where a form belongs never reach the evaluator. A record class whose fields differ
from its layout fails at import: the format cannot silently miss a field.

Three parts are read when first used instead, since a cold hook needs few of them: the rules'
guard forms (`StoredRules`: the ~30 rules a command's plan tries, of ~180), the plans' residuals
(`plan_store.StoredResiduals`) and the rules' examples (`StoredExamples`: a hook never runs
them). They are checked as the rest is, where they are read: a guard form that does not read
back is one that cannot tell (CEL decides, as for a rule without a pre-check), an example raises.
The digest held, so only a forgery (or a bug here) can get there.
"""

from __future__ import annotations

from collections.abc import Sequence

from rtk_policy.policy.compiled import NO_PROGRAM, CompiledFile, CompiledRule
from rtk_policy.policy.errors import Problem
from rtk_policy.policy.guards.ir import (
    NO_FORM,
    FormTable,
    checked_reference,
    form_at,
    forms_from_data,
    readable_form,
)
from rtk_policy.policy.guards.plan_store import PlanTables, tables_data, tables_from_data
from rtk_policy.policy.model import MODES, PIPELINE_ROLES, TOOL_KINDS, VERDICTS, Example, Rule
from rtk_policy.util import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: per record class, how each field is stored: "str", "int", "bool", "strs" (a tuple of
#: strings), "form" (a reference in the form table), "path" (a policy file's path: the index of a
#: stored file whose path it is, else the string), "opt" (a string or None), "pairs" (an example's
#: overrides), "examples", "rule"
LAYOUTS: dict[type, tuple[tuple[str, str], ...]] = {
    CompiledFile: (("path", "str"), ("name", "str"), ("kind", "str"), ("when", "int"),
                   ("pipeline_consumer", "int"), ("when_guard", "form"),
                   ("consumer_guard", "form")),
    CompiledRule: (("rule", "rule"), ("file_index", "int"), ("match", "int"), ("message", "int"),
                   ("rewrite", "int"), ("derived", "strs"), ("guard", "form"), ("output", "form")),
    Rule: (("id", "str"), ("policy", "str"), ("file", "path"), ("line", "int"), ("kind", "str"),
           ("decision", "str"), ("mode", "str"), ("programs", "strs"), ("pipeline", "str"),
           ("description", "str"), ("examples", "examples"), ("tools", "strs"),
           ("locked", "bool")),
    Example: (("command", "str"), ("expect", "opt"), ("file", "path"), ("line", "int"),
              ("overrides", "pairs"), ("tool", "str"), ("path", "str")),
    Problem: (("file", "path"), ("line", "int"), ("col", "int"), ("message", "str"),
              ("source_line", "str")),
}  # fmt: skip
for _cls, _layout in LAYOUTS.items():
    if tuple(name for name, _ in _layout) != tuple(field.name for field in record.fields(_cls)):
        raise ImportError(f"stored.LAYOUTS does not match the fields of {_cls.__qualname__}")
#: the JSON types each kind of field may be stored as
_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "str": (str,), "int": (int,), "bool": (bool,), "strs": (list,), "form": (int,),
    "pairs": (list,),
    "examples": (list,), "rule": (list,), "opt": (str, type(None)), "path": (int, str),
}  # fmt: skip


def _type_rows(layout: tuple[tuple[str, str], ...]) -> frozenset[tuple[type, ...]]:
    """Every tuple of JSON types a record of `layout` may be stored as (bool is not int)."""
    rows: list[tuple[type, ...]] = [()]
    for _, kind in layout:
        rows = [row + (kind_type,) for row in rows for kind_type in _JSON_TYPES[kind]]
    return frozenset(rows)


_TYPES = {cls: _type_rows(layout) for cls, layout in LAYOUTS.items()}
#: per record class, the fields read back as something else than their JSON value
_CONVERTED = {
    cls: tuple((at, kind) for at, (_, kind) in enumerate(layout)
               if kind in ("form", "strs", "pairs", "path"))
    for cls, layout in LAYOUTS.items()
}  # fmt: skip
#: where a stored Rule keeps its examples
_EXAMPLES_AT = Rule.__match_args__.index("examples")
_KINDS = ("permission", "rewrite")
_DECISIONS = (*VERDICTS, "")
_EXPECTED = {"bool", "string"}
_STR = {str}


def policy_data(
    files: tuple[CompiledFile, ...],
    rules: tuple[CompiledRule, ...],
    expected: tuple[str, ...],
    uses: frozenset[str],
    plans: PlanTables,
    patterns: dict[str, tuple[str, ...]],
    problems: tuple[Problem, ...] = (),
) -> dict[str, Any]:
    """The compiled parts of a policy set as JSON-ready data (the programs are kept apart, as
    bytes), with the `problems` of the files a partial load left out; `policy_from_data` reads
    it back. Raise `ValueError` when an example holds a value JSON would change (the set is then
    not cached)."""
    tables = _Tables(FormTable(), {item.path: at for at, item in enumerate(files)})
    return {
        "files": [_stored(item, tables) for item in files],
        "rules": [_stored(item, tables) for item in rules],
        "expected": list(expected),
        "uses": sorted(uses),
        "plans": tables_data(plans, tables.forms),
        "patterns": {pattern: list(literals) for pattern, literals in patterns.items()},
        "forms": tables.forms.nodes,
        "problems": [_stored(problem, tables) for problem in problems],
    }


@record.frozen(eq=False)
class _Tables:
    """What the records of one stored set refer to: the guard forms (a `FormTable` when writing,
    the forms read back when reading) and the policy files' paths (path → index when writing,
    the paths when reading)."""

    forms: Any
    paths: Any


def _stored(stored: Any, tables: _Tables) -> list[Any]:
    """A record as the array of its fields, each as its layout says."""
    values = []
    for name, kind in LAYOUTS[type(stored)]:
        value = getattr(stored, name)
        if kind == "form":
            value = tables.forms.add(value)
        elif kind == "path":
            value = tables.paths.get(value, value)
        elif kind in ("rule", "examples"):
            value = (
                _stored(value, tables)
                if kind == "rule"
                else [_stored(example, tables) for example in value]
            )
        elif kind == "strs":
            value = list(value)
        elif kind == "pairs":
            if not all(_json_exact(item) for _, item in value):
                raise ValueError(f"an example at line {stored.line} holds values JSON changes")
            value = [[key, item] for key, item in value]
        values.append(value)
    return values


def _json_exact(value: Any) -> bool:
    """Whether JSON gives `value` back equal and of the same types (an example's `config:` is any
    YAML mapping: a date, or a key that is not a string, would come back changed)."""
    if type(value) is dict:
        return all(type(k) is str and _json_exact(v) for k, v in value.items())
    if type(value) is list:
        return all(_json_exact(item) for item in value)
    return value is None or type(value) in (str, int, float, bool)


def policy_from_data(data: Any, programs: int) -> dict[str, Any]:
    """The parts `policy_data` stored, checked, for a policy set of `programs` compiled programs:
    `files`, `rules`, `expected`, `uses`, `plans`, `patterns`, `problems`. Raise `ValueError` (or
    `TypeError`, `KeyError`) for anything that is not what the compiler makes."""
    if type(data) is not dict:
        raise ValueError("the stored policy set is a map")
    expected = tuple(data["expected"])
    if len(expected) != programs or not set(expected) <= _EXPECTED:
        raise ValueError("the programs' result types do not match the programs")
    forms = forms_from_data(data["forms"])
    files = tuple([_file(item, programs, _Tables(forms, ())) for item in data["files"]])
    tables = _Tables(forms, tuple(item.path for item in files))
    rules = StoredRules(data["rules"], len(files), programs, tables)
    uses = data["uses"]
    patterns = data["patterns"]
    if not _strings(uses) or type(patterns) is not dict:
        raise ValueError("uses and patterns are strings")
    for literals in patterns.values():
        if not _strings(literals):
            raise ValueError("a pattern's literals are strings")
    return {
        "files": files,
        "rules": rules,
        "expected": expected,
        "uses": frozenset(uses),
        "plans": tables_from_data(data["plans"], forms),
        "patterns": {pattern: tuple(literals) for pattern, literals in patterns.items()},
        "problems": tuple([Problem(*_fields(Problem, item, tables)) for item in data["problems"]]),
    }


def _fields(cls: type, data: Any, tables: _Tables, forms: Any = form_at) -> list[Any]:
    """The field values of a stored `cls` record (the decoded list itself, converted in place),
    of the types its layout says: forms resolved (`forms(tables.forms, reference)`), paths
    resolved, string lists as tuples; raise `ValueError` for any other shape."""
    if type(data) is not list or tuple(map(type, data)) not in _TYPES[cls]:
        raise ValueError(f"a stored {cls.__qualname__} has the wrong fields")
    for at, kind in _CONVERTED[cls]:
        value = data[at]
        if kind == "form":
            data[at] = forms(tables.forms, value)
        elif kind == "path":
            if type(value) is int:
                if not 0 <= value < len(tables.paths):
                    raise ValueError(f"a stored {cls.__qualname__} names a file not kept")
                data[at] = tables.paths[value]
        elif kind == "strs":
            if not _strings(value):
                raise ValueError(f"a stored {cls.__qualname__} holds a list that is not strings")
            data[at] = tuple(value)
        else:
            data[at] = _pairs(value)
    return data


def _file(data: Any, programs: int, tables: _Tables) -> CompiledFile:
    path, name, kind, when, consumer, when_guard, consumer_guard = _fields(
        CompiledFile, data, tables
    )
    if kind not in _KINDS or not (_optional(when, programs) and _optional(consumer, programs)):
        raise ValueError(f"stored policy file {path[:80]!r} is not one the compiler makes")
    return CompiledFile(path, name, kind, when, consumer, when_guard, consumer_guard)


class StoredRules(Sequence):
    """The compiled rules of a stored set. Each rule's record and program indexes are read back
    and checked when the set loads (anything wrong refuses the whole file, as for every other
    part); its guard forms only when the rule is first used (`rules[index]`), so a cold hook
    reads the forms of the ~30 rules its command's plan tries, not those of all ~180.

    `facts` gives what the policy set indexes every rule by (`compiled.rules_facts`) without
    reading a form. A form that does not read back (a forged cache whose digest held) is one a
    guard cannot tell by (`ir.readable_form`): the rule is then decided by CEL alone, as a rule
    without a pre-check, and the decision is a fresh compile's."""

    __slots__ = ("facts", "_values", "_forms", "_built")

    def __init__(self, data: Any, files: int, programs: int, tables: _Tables) -> None:
        if type(data) is not list:
            raise ValueError("the stored rules are a list")
        self._values = [_rule_values(item, files, programs, tables) for item in data]
        self._forms = tables.forms
        self._built: list[CompiledRule | None] = [None] * len(data)
        rules = tuple([values[0] for values in self._values])
        self.facts = (
            rules,
            tuple([values[1] for values in self._values]),
            tuple([values[0].programs or values[5] for values in self._values]),
        )

    def __len__(self) -> int:
        return len(self._values)

    def __getitem__(self, at: Any) -> Any:
        if type(at) is slice:
            return tuple([self[index] for index in range(*at.indices(len(self)))])
        found = self._built[at]
        if found is None:
            rule, file_index, match, message, rewrite, derived, guard, output = self._values[at]
            found = CompiledRule(rule, file_index, match, message, rewrite, derived,
                                 self._form(guard), self._form(output))  # fmt: skip
            self._built[at] = found
        return found

    def _form(self, reference: int) -> tuple[Any, ...]:
        return () if reference == NO_FORM else readable_form(self._forms, reference)


def _rule_values(data: Any, files: int, programs: int, tables: _Tables) -> list[Any]:
    """A stored compiled rule's field values, checked, its forms as their references."""
    values = _fields(CompiledRule, data, tables, forms=checked_reference)
    rule = values[0] = _rule(values[0], tables)
    _, file_index, match, message, rewrite, *_ = values
    valid = (
        0 <= file_index < files
        and 0 <= match < programs
        and _optional(message, programs)
        and _optional(rewrite, programs)
        and (rule.kind != "rewrite" or rewrite != NO_PROGRAM)
    )
    if not valid:
        raise ValueError(f"stored rule {rule.id[:80]!r} names a file or program not kept")
    return values


def _rule(data: Any, tables: _Tables) -> Rule:
    values = _fields(Rule, data, tables)
    values[_EXAMPLES_AT] = StoredExamples(values[_EXAMPLES_AT], tables.paths)
    rule = Rule(*values)
    valid = (
        rule.kind in _KINDS
        and rule.decision in _DECISIONS
        and rule.mode in MODES
        and rule.pipeline in PIPELINE_ROLES
        and set(rule.tools) <= set(TOOL_KINDS)
    )
    if not valid:
        raise ValueError(f"stored rule {rule.id[:80]!r} is not one the loader makes")
    return rule


class StoredExamples(Sequence):
    """A stored rule's examples, read back (and checked) when first used.

    A hook never runs examples (`check` and `test` do, on a set they compile afresh), so a cold
    hook no longer builds the ~800 examples of the shipped packs (~2 ms). It is a sequence equal
    (and hashing alike) to the tuple of the same examples, as the compiler makes them, and pickles
    as that tuple. Stored data that is not examples raises `ValueError` where they are first read:
    the digest held, so only a forgery or a bug of this module can get there, and no decision
    reads examples."""

    __slots__ = ("_data", "_paths", "_examples")

    def __init__(self, data: list[Any], paths: tuple[str, ...]) -> None:
        self._data = data
        self._paths = paths
        self._examples: tuple[Example, ...] | None = None

    def _read(self) -> tuple[Example, ...]:
        """The examples, decoded on the first call (each stored list copied: read twice by two
        threads at once, neither sees the other's conversions)."""
        if self._examples is None:
            tables = _Tables((), self._paths)
            self._examples = tuple(
                [Example(*_fields(Example, list(item), tables)) for item in self._data]
            )
        return self._examples

    def __len__(self) -> int:
        return len(self._data)

    def __getitem__(self, at: Any) -> Any:
        return self._read()[at]

    def __iter__(self) -> Any:
        return iter(self._read())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (tuple, StoredExamples)):
            return self._read() == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._read())

    def __repr__(self) -> str:
        return repr(self._read())

    def __reduce__(self) -> tuple[Any, ...]:
        return (tuple, (self._read(),))


def _pairs(data: Any) -> tuple[tuple[str, Any], ...]:
    """An example's overrides: (name, value) pairs."""
    pairs = []
    for pair in data:
        if type(pair) is not list or len(pair) != 2 or type(pair[0]) is not str:
            raise ValueError("an example's overrides are (name, value) pairs")
        pairs.append((pair[0], pair[1]))
    return tuple(pairs)


def _optional(index: Any, programs: int) -> bool:
    """Whether `index` is a program index or `NO_PROGRAM`."""
    return NO_PROGRAM <= index < programs


def _strings(values: Any) -> bool:
    """Whether `values` is a list of strings."""
    return type(values) is list and set(map(type, values)) <= _STR
