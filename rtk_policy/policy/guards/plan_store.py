"""Plans worked out when the policies are compiled and kept in the compiled cache (`load.py`).

Specialising the guards to a program (`specialize.py`) walks every candidate rule's guard form,
evaluates its program tests (compiling their regexes) and folds it: ~5 ms for the first program of
a process, which a cold hook pays on every call. So for every program of the rule index the plan
is worked out at compile time and stored as `PlanTables`: per program its steps as (rule index,
code) pairs, flattened into one tuple of ints, where the code is the index of its residual guard
form in `residuals`, or `GENERIC` for the rule's own guard form. A rule whose residual is `false`
for the program is left out, exactly as `Planner` leaves it out. A cold process then only builds
the guards of its one program's steps.

A residual that is the program's own (its signature is the program itself: the guard reads
`segment.program` outside a test, as in `exists(p, p == segment.program)`) is not stored: the step
keeps the rule's own guard, which gives the same value on every segment running that program (the
residual is that guard with the program's value put in and constants folded by the guard's rules).
Storing them would add a residual per rule per program to every cold load.
"""

from __future__ import annotations

from collections.abc import Sequence

from rtk_policy.policy.guards.guard import FALSE_FORM
from rtk_policy.policy.guards.ir import checked_reference, readable_form
from rtk_policy.util import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from rtk_policy.policy.guards.ir import FormTable
    from rtk_policy.policy.guards.specialize import Specializer

#: version of the stored tables; part of the cache key (`load.py`)
#: 3: steps are flat tuples of ints, kept in the cache as their text, no longer packed bytes
#: 4: first-word tests (`first_word.py`) fold too: rules such a test rules out are left out
PLANS_FORMAT = "4"
#: the code of a step whose guard is the rule's own guard form
GENERIC = -1
_STR = {str}


class PlanTables(record.NamedTuple):
    """Plans of the indexed programs: `steps`, program → its (rule index, code) pairs flattened
    (a tuple of ints; read from the compiled cache, their text `"3,-1,7,0"` until `pairs`
    decodes it), and `residuals`, the residual guard forms the codes point to."""

    steps: Mapping[str, tuple[int, ...] | str]
    residuals: Sequence[tuple[Any, ...]]

    def pairs(self, program: str, rules: int) -> tuple[int, ...] | None:
        """The steps of `program` for a policy set of `rules` rules; None when none is stored, or
        the stored text is not pairs of a rule and a residual kept (a damaged or forged cache:
        the planner then works the plan out, as for a program that is not indexed)."""
        found = self.steps.get(program)
        if not isinstance(found, str):
            return found
        try:
            pairs = tuple(map(int, found.split(","))) if found else ()
        except ValueError:
            return None
        indexes, codes = pairs[0::2], pairs[1::2]
        if len(pairs) % 2 or (pairs and not (
            0 <= min(indexes) and max(indexes) < rules
            and GENERIC <= min(codes) and max(codes) < len(self.residuals)
        )):  # fmt: skip
            return None
        return pairs


def plan_tables(
    compiled: tuple[Any, ...], functions: dict[Any, Any], programs: Any, candidates: Any
) -> PlanTables:
    """The plans of `programs` (each rule's `.guard` specialised to each program); `candidates`
    gives the rule indexes tried on a program, in order (`Planner.candidates`)."""
    from rtk_policy.policy.guards.specialize import Specializer  # compile time only

    specializer = Specializer(functions)
    residuals: list[tuple[Any, ...]] = []
    codes: dict[tuple[Any, ...], int] = {}  # (rule index, signature) → code, or None when false
    steps: dict[str, tuple[int, ...]] = {}
    for program in sorted(programs):
        pairs: list[int] = []
        for index in candidates(program):
            code = _code(specializer, compiled[index].guard, index, program, codes, residuals)
            if code is not None:
                pairs += (index, code)
        steps[program] = tuple(pairs)
    return PlanTables(steps, tuple(residuals))


def _code(
    specializer: Specializer,
    ir: tuple[Any, ...],
    index: int,
    program: str,
    codes: dict[tuple[Any, ...], Any],
    residuals: list[tuple[Any, ...]],
) -> int | None:
    """The step code of rule `index` on `program`; None when the rule is false for it."""
    if not specializer.mentions(ir):
        return GENERIC
    signature = specializer.signature(ir, program)
    key = (index, signature)
    if key not in codes:
        residual = specializer.specialize(ir, program)
        if residual == FALSE_FORM:
            codes[key] = None
        elif signature == (program,):  # the program's own residual: the rule's own guard
            codes[key] = GENERIC
        else:
            codes[key] = len(residuals)
            residuals.append(residual)
    return codes[key]


def tables_data(tables: PlanTables, forms: FormTable) -> list[Any]:
    """`tables` as plain data for the compiled cache, the residuals as references in `forms`
    (`tables_from_data` reads it back)."""
    steps = {program: ",".join(map(str, pairs)) for program, pairs in tables.steps.items()}
    return [steps, [forms.add(residual) for residual in tables.residuals]]


def tables_from_data(data: Any, forms: Any) -> PlanTables:
    """The `PlanTables` of `tables_data` output whose stored forms are `forms`
    (`ir.forms_from_data`); raise `ValueError` when it is not a map of texts and a list of form
    references. The texts are decoded and checked when a program is planned (`pairs`), each
    residual read back when a plan first uses it (`StoredResiduals`)."""
    steps, references = data
    if type(steps) is not dict or type(references) is not list:
        raise ValueError("plan tables are a map of steps and a list of residuals")
    if not set(map(type, steps.values())) <= _STR:
        raise ValueError("stored plans are texts")
    for reference in references:
        checked_reference(forms, reference)
    return PlanTables(steps, StoredResiduals(forms, references))


class StoredResiduals(Sequence):
    """The residual forms of stored plans, each read from the stored forms when a plan first uses
    it; one that does not read back (a forged cache whose digest held) is a guard that cannot
    tell (`ir.readable_form`), so CEL decides that step."""

    __slots__ = ("_forms", "_references")

    def __init__(self, forms: Any, references: list[int]) -> None:
        self._forms, self._references = forms, references

    def __len__(self) -> int:
        return len(self._references)

    def __getitem__(self, code: Any) -> Any:
        if type(code) is slice:
            return tuple([self[at] for at in range(*code.indices(len(self)))])
        return readable_form(self._forms, self._references[code])
