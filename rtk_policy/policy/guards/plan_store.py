"""Plans worked out when the policies are compiled and kept in the compiled cache (`load.py`).

Specialising the guards to a program (`specialize.py`) walks every candidate rule's guard form,
evaluates its program tests (compiling their regexes) and folds it: ~5 ms for the first program of
a process, which a cold hook pays on every call. So for every program of the rule index the plan
is worked out at compile time and stored as `PlanTables`: per program its steps as (rule index,
code) pairs, packed as 32-bit ints, where the code is the index of its residual guard form in
`residuals`, or `GENERIC` for the rule's own guard form. A rule whose residual is `false` for the
program is left out, exactly as `Planner` leaves it out. A cold process then only builds the
guards of its one program's steps.

A residual that is the program's own (its signature is the program itself: the guard reads
`segment.program` outside a test, as in `exists(p, p == segment.program)`) is not stored: the step
keeps the rule's own guard, which gives the same value on every segment running that program (the
residual is that guard with the program's value put in and constants folded by the guard's rules).
Storing them would add a residual per rule per program to every cold load.
"""

from __future__ import annotations

from array import array
from collections import namedtuple

from rtk_policy.policy.guards.guard import FALSE_FORM

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~4 ms on a cold hook)
if TYPE_CHECKING:
    from typing import Any

    from rtk_policy.policy.guards.specialize import Specializer

#: version of the stored tables; part of the cache key (`load.py`)
PLANS_FORMAT = "1"
#: the code of a step whose guard is the rule's own guard form
GENERIC = -1


class PlanTables(namedtuple("PlanTables", "steps residuals")):
    """Plans of the indexed programs: `steps`, program → its packed (rule index, code) pairs
    (bytes), and `residuals`, the residual guard forms the codes point to."""

    __slots__ = ()


def plan_tables(
    compiled: tuple[Any, ...], functions: dict[Any, Any], programs: Any, candidates: Any
) -> PlanTables:
    """The plans of `programs` (each rule's `.guard` specialised to each program); `candidates`
    gives the rule indexes tried on a program, in order (`Planner.candidates`)."""
    from rtk_policy.policy.guards.specialize import Specializer  # compile time only

    specializer = Specializer(functions)
    residuals: list[tuple[Any, ...]] = []
    codes: dict[tuple[Any, ...], int] = {}  # (rule index, signature) → code, or None when false
    steps: dict[str, bytes] = {}
    for program in sorted(programs):
        pairs = array("i")
        for index in candidates(program):
            code = _code(specializer, compiled[index].guard, index, program, codes, residuals)
            if code is not None:
                pairs.extend((index, code))
        steps[program] = pairs.tobytes()
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
    return codes[key]  # type: ignore[no-any-return]


def unpack(steps: bytes) -> list[int]:
    """The (rule index, code) pairs of a stored plan, flattened."""
    pairs = array("i")
    pairs.frombytes(steps)
    return pairs.tolist()
