"""A compiled policy set as plain data for the compiled-policy cache (`cache.py`), and back.

The cache holds JSON and program bytes only: nothing whose loading runs code. Records are kept as
arrays of their fields in order; every guard form (of files, rules and the plans' residuals) goes
into one table of nodes (`guards/ir.FormTable`) and is kept as its reference there; the indexed
programs' plans are flat int arrays (`guards/plan_store.tables_from_data`). Reading it back
checks every value's type and range, so that what a damaged or forged file holds either makes the
records the compiler made or raises `ValueError` (the caller then compiles again): a rule index
out of range, a verdict that is not one, a string where a form belongs never reach the evaluator.
"""

from __future__ import annotations

from rtk_policy.policy.compiled import NO_PROGRAM, CompiledFile, CompiledRule
from rtk_policy.policy.guards.ir import FormTable, form_at, forms_from_data
from rtk_policy.policy.guards.plan_store import PlanTables, tables_data, tables_from_data
from rtk_policy.policy.model import MODES, PIPELINE_ROLES, VERDICTS, Example, Rule

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~4 ms on a cold hook)
if TYPE_CHECKING:
    from typing import Any

#: the field types of a stored `CompiledFile`, `CompiledRule`, `Rule` and `Example`
_FILE_TYPES = (str, str, str, int, int, int, int)
_COMPILED_TYPES = (list, int, int, int, int, list, int, int)
_RULE_TYPES = (str, str, str, int, str, str, str, list, str, str, list)
_EXAMPLE_TYPES = (str, str, str, int, list)
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
) -> dict[str, Any]:
    """The compiled parts of a policy set as JSON-ready data (the programs are kept apart, as
    bytes); `policy_from_data` reads it back. Raise `ValueError` when an example holds a value
    JSON would change (the set is then not cached)."""
    forms = FormTable()
    stored_files = [
        [*_fields(f)[:5], forms.add(f.when_guard), forms.add(f.consumer_guard)] for f in files
    ]
    stored_rules = [
        [_rule_fields(c.rule), *_fields(c)[1:6], forms.add(c.guard), forms.add(c.output)]
        for c in rules
    ]
    return {
        "files": stored_files,
        "rules": stored_rules,
        "expected": list(expected),
        "uses": sorted(uses),
        "plans": tables_data(plans, forms),
        "patterns": {pattern: list(literals) for pattern, literals in patterns.items()},
        "forms": forms.nodes,
    }


def _fields(value: Any) -> list[Any]:
    """A record's field values in order, tuples as lists (all the way down)."""
    return [_plain(getattr(value, name)) for name in value.__match_args__]


def _rule_fields(rule: Rule) -> list[Any]:
    fields = _fields(rule)
    fields[-1] = [_fields(example) for example in rule.examples]
    for example in rule.examples:
        if not all(_json_exact(value) for _, value in example.overrides):
            raise ValueError(f"an example of {rule.id} holds values JSON does not keep as they are")
    return fields


def _json_exact(value: Any) -> bool:
    """Whether JSON gives `value` back equal and of the same types (an example's `config:` is any
    YAML mapping: a date, or a key that is not a string, would come back changed)."""
    if type(value) is dict:
        return all(type(k) is str and _json_exact(v) for k, v in value.items())
    if type(value) is list:
        return all(_json_exact(item) for item in value)
    return value is None or type(value) in (str, int, float, bool)


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    return value


def policy_from_data(data: Any, programs: int) -> dict[str, Any]:
    """The parts `policy_data` stored, checked, for a policy set of `programs` compiled programs:
    `files`, `rules`, `expected`, `uses`, `plans`, `patterns`. Raise `ValueError` (or `TypeError`,
    `KeyError`) for anything that is not what the compiler makes."""
    if type(data) is not dict:
        raise ValueError("the stored policy set is a map")
    expected = tuple(data["expected"])
    if len(expected) != programs or not set(expected) <= _EXPECTED:
        raise ValueError("the programs' result types do not match the programs")
    forms = forms_from_data(data["forms"])
    files = tuple([_file(item, programs, forms) for item in data["files"]])
    rules = tuple([_compiled_rule(item, len(files), programs, forms) for item in data["rules"]])
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
        "plans": tables_from_data(data["plans"], len(rules), forms),
        "patterns": {pattern: tuple(literals) for pattern, literals in patterns.items()},
    }


def _file(data: Any, programs: int, forms: list[tuple[Any, ...]]) -> CompiledFile:
    _check_types(data, _FILE_TYPES, "policy file")
    path, name, kind, when, consumer, when_guard, consumer_guard = data
    if kind not in _KINDS or not (_optional(when, programs) and _optional(consumer, programs)):
        raise ValueError(f"stored policy file {path[:80]!r} is not one the compiler makes")
    return CompiledFile(path, name, kind, when, consumer, form_at(forms, when_guard),
                        form_at(forms, consumer_guard))  # fmt: skip


def _compiled_rule(
    data: Any, files: int, programs: int, forms: list[tuple[Any, ...]]
) -> CompiledRule:
    _check_types(data, _COMPILED_TYPES, "compiled rule")
    rule_data, file_index, match, message, rewrite, derived, guard, output = data
    rule = _rule(rule_data)
    valid = (
        0 <= file_index < files
        and 0 <= match < programs
        and _optional(message, programs)
        and _optional(rewrite, programs)
        and (rule.kind != "rewrite" or rewrite != NO_PROGRAM)
        and _strings(derived)
    )
    if not valid:
        raise ValueError(f"stored rule {rule.id[:80]!r} names a file or program not kept")
    return CompiledRule(rule, file_index, match, message, rewrite, tuple(derived),
                        form_at(forms, guard), form_at(forms, output))  # fmt: skip


def _rule(data: Any) -> Rule:
    _check_types(data, _RULE_TYPES, "rule")
    id_, policy, file, line, kind, decision, mode, programs, pipeline, description, examples = data
    valid = (
        kind in _KINDS
        and decision in _DECISIONS
        and mode in MODES
        and pipeline in PIPELINE_ROLES
        and _strings(programs)
    )
    if not valid:
        raise ValueError(f"stored rule {id_[:80]!r} is not one the loader makes")
    return Rule(id_, policy, file, line, kind, decision, mode, tuple(programs), pipeline,
                description, tuple([_example(item) for item in examples]))  # fmt: skip


def _example(data: Any) -> Example:
    if type(data) is list and len(data) == 5 and data[1] is None:  # a rewrite example: no rewrite
        _check_types([*data[:1], "", *data[2:]], _EXAMPLE_TYPES, "example")
    else:
        _check_types(data, _EXAMPLE_TYPES, "example")
    command, expect, file, line, overrides = data
    pairs = []
    for pair in overrides:
        if type(pair) is not list or len(pair) != 2 or type(pair[0]) is not str:
            raise ValueError("an example's overrides are (name, value) pairs")
        pairs.append((pair[0], pair[1]))
    return Example(command, expect, file, line, tuple(pairs))


def _check_types(data: Any, types: tuple[type, ...], what: str) -> None:
    """Raise `ValueError` unless `data` is a list of values of exactly `types` (bool is not int)."""
    if type(data) is not list or tuple(map(type, data)) != types:
        raise ValueError(f"a stored {what} has the wrong fields")


def _optional(index: Any, programs: int) -> bool:
    """Whether `index` is a program index or `NO_PROGRAM`."""
    return NO_PROGRAM <= index < programs


def _strings(values: Any) -> bool:
    """Whether `values` is a list of strings."""
    return type(values) is list and set(map(type, values)) <= _STR
