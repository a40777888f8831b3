"""Which rules a segment tries, by program: the rule index and the guards specialised to the
program.

A rule is tried on a program when it lists it (`programs:` or a `segment.program` conjunct of its
match, `program_index.py`) or lists none. Its guard (`guard.py`) is then specialised to the program
(`specialize.py`): a rule whose guard becomes `false` is left out, the others keep the residual
guard. Programs whose tests in a rule give the same values share that rule's residual; plans are
kept for `MAX_PLANS` programs (a bound for a long-running server fed arbitrary text). The plans of
the indexed programs come worked out from the compiled cache when it has them (`plan_store.py`):
then only the guards of the program's steps are built. Guards are closures (`guard.py`) until a
program has been planned `COMPILE_AFTER` times (a batch, a server): its plan's guards are then
compiled (`guards/code.py`, each distinct form once), so a cold hook compiles nothing. A program
planned later takes at once the forms other plans compiled (most guards are shared by every
program). A rule whose `rtk_norm(segment.command).matches(R)` test cannot hold for the
program (`first_word.py`) is left out the same way; such a plan holds only for segments whose
normal form begins with their program (`functions_rtk.rtk_norm_begins_with`): the others take
`unfolded`, where every rule with such a test keeps its own guard. The analysis costs a few
milliseconds (it parses the patterns), so a process that has stored plans folds them at run time
only from its `FOLD_AFTER`th program on (a batch, a server; never a cold hook).
"""

from __future__ import annotations

from rtk_policy.policy.compiled import rules_facts
from rtk_policy.policy.guards.guard import FALSE_FORM, Guard, build_guard
from rtk_policy.policy.guards.plan_store import GENERIC, PlanTables, plan_tables

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeAlias

#: programs whose plans are kept
MAX_PLANS = 4096
#: segments of a program planned with closure guards before its plan's guards are compiled.
#: Compiling a plan's new forms costs about as much as ~250 of its segments save (measured on the
#: shipped packs: ~20-30 ms against ~0.1 ms per segment), so compiling then bounds what a program
#: costs at twice the best choice made knowing its number of segments (a batch of a few thousand
#: lines gains; a server pays ~190 closure runs more, once per program)
COMPILE_AFTER = 256
#: programs specialised at run time without first-word folds when plans are stored
FOLD_AFTER = 16
#: the rules tried on one program: (index of the rule, its specialised guard or None)
Plan: TypeAlias = "tuple[tuple[int, Guard | None], ...]"


class Planner:
    """The plans of one policy set's compiled rules (anything with `.index`, `.guard`, `.rule`)."""

    def __init__(
        self,
        compiled: Any,
        functions: dict[Any, Any],
        tables: PlanTables | None = None,
    ) -> None:
        """`compiled`: a sequence of compiled rules (`PolicySet.compiled_rules`), indexed by
        `rules_facts` (a stored set's without reading a form)."""
        self._compiled = compiled
        rules, _, indexes = rules_facts(compiled)
        self._tables = tables
        #: (program, deny only) → `unfolded` plan; the rules with first-word tests
        self._unfolded: dict[tuple[str, bool], Plan] = {}
        self._first_word_rules: frozenset[int] | None = None
        #: guards of the stored residuals, by code
        self._stored: dict[int, Guard | None] = {}
        self._functions = functions
        self._compiler: Any = None  #: a `guard_code.CompiledGuards`, made on first need
        #: rules tried on shell segments (a rule whose `tools:` leave the shell out never is)
        shell = [i for i, rule in enumerate(rules) if rule.on_shell]
        self._unindexed = tuple(i for i in shell if not indexes[i])
        self._by_program: dict[str, list[int]] = {}
        for index in shell:
            for program in indexes[index]:
                self._by_program.setdefault(program, []).append(index)
        self._denying = frozenset(
            i
            for i, rule in enumerate(rules)
            if (rule.kind, rule.decision, rule.mode) == ("permission", "deny", "enforce")
        )
        self._specializer: Any = None  #: a `Specializer`, made when a plan is not stored
        self._specialized_count = 0  #: programs specialised at run time
        self._candidates: dict[str, tuple[int, ...]] = {}
        self._plans: dict[str, Plan] = {}
        self._deny_plans: dict[str, Plan] = {}
        #: per program planned with closures: its steps' guard forms and how often it was planned
        self._forms: dict[str, tuple[tuple[int, Any], ...]] = {}
        self._uses: dict[str, int] = {}
        #: id of a form compiled for a plan → (the form, its compiled guard): a program planned
        #: later takes these at once (most forms are shared by every program's plan)
        self._made: dict[int, tuple[Any, Guard | None]] = {}
        self._generic: dict[int, Guard | None] = {}
        #: (rule index, signature of its program tests) → (its residual form, its guard)
        self._residuals: dict[tuple[Any, ...], tuple[Any, Guard | None]] = {}

    def unfolded(self, program: str, deny_only: bool) -> Plan:
        """`plan` (`deny_plan` when `deny_only`) for a segment whose normal form does not begin
        with its program: the rules with a first-word test (`first_word.py`) are tried with
        their own guards, whatever their test gave for the program."""
        key = (program, deny_only)
        found = self._unfolded.get(key)
        if found is None:
            if self._first_word_rules is None:
                from rtk_policy.policy.guards.specialize import holds_first_word_test

                guards = [c.guard for c in self._compiled]
                self._first_word_rules = frozenset(
                    i for i, ir in enumerate(guards) if holds_first_word_test(ir)
                )
            tested = self._first_word_rules
            steps = dict(self.plan(program))
            found = tuple(
                (i, self._generic_guard(i) if i in tested else steps[i])
                for i in self.candidates(program)
                if (i in tested or i in steps) and (not deny_only or i in self._denying)
            )
            if len(self._unfolded) >= MAX_PLANS:
                self._unfolded.clear()
            self._unfolded[key] = found
        return found

    def tables(self) -> PlanTables:
        """The plans of every indexed program, worked out now (what the compiled cache keeps)."""
        return plan_tables(self._compiled, self._functions, self._by_program, self.candidates)

    def candidates(self, program: str) -> tuple[int, ...]:
        """Indexes of the rules tried on a segment running `program`, in load order."""
        found = self._candidates.get(program)
        if found is None:
            found = tuple(sorted({*self._unindexed, *self._by_program.get(program, ())}))
            self._candidates[program] = found
        return found

    def traced(self, program: str, deny_only: bool) -> Plan:
        """Every candidate rule without guards (explain), only the enforce-mode deny rules when
        `deny_only`."""
        return tuple(
            (i, None) for i in self.candidates(program) if not deny_only or i in self._denying
        )

    def compiler(self) -> Any:
        """The `guard_code.CompiledGuards` of this policy set (imported on first need)."""
        if self._compiler is None:
            from rtk_policy.policy.guards.code import CompiledGuards  # never on a cold hook

            self._compiler = CompiledGuards(self._functions)
        return self._compiler

    def plan(self, program: str) -> Plan:
        """`candidates` without the rules false for `program`, each with its residual guard."""
        found = self._plans.get(program)
        if found is None:
            if len(self._plans) >= MAX_PLANS:
                for kept in (self._plans, self._deny_plans, self._residuals, self._forms):
                    kept.clear()
                self._uses.clear()
                self._made.clear()
            steps = tuple(self._planned(program))
            found = self._plans[program] = tuple(
                (index, self._compiled_form(form, guard)) for index, form, guard in steps
            )
            self._forms[program] = tuple((index, form) for index, form, _ in steps)
            self._uses[program] = 1
        elif program in self._uses:
            uses = self._uses[program] = self._uses[program] + 1
            if uses >= COMPILE_AFTER:
                found = self._compile_plan(program)
        return found

    def _compile_plan(self, program: str) -> Plan:
        """The program's plan with its guards compiled (its deny plan is derived again)."""
        compiler = self.compiler()
        forms = self._forms.pop(program, None)
        self._uses.pop(program, None)
        if forms is None:  # compiled meanwhile (engines are used under a lock; be safe anyway)
            return self._plans[program]
        found = tuple((index, self._compile_form(compiler, form)) for index, form in forms)
        self._deny_plans.pop(program, None)
        self._plans[program] = found
        return found

    def _compile_form(self, compiler: Any, form: Any) -> Guard | None:
        """The compiled guard of `form`, remembered by the form object for `_compiled_form`."""
        guard = compiler(form)
        self._made[id(form)] = (form, guard)
        return guard

    def _compiled_form(self, form: Any, guard: Guard | None) -> Guard | None:
        """The guard another plan compiled for this very form object, else `guard`."""
        made = self._made.get(id(form))
        return made[1] if made is not None and made[0] is form else guard

    def deny_plan(self, program: str) -> Plan:
        """`plan` limited to the enforce-mode deny rules (the re-check of a rewrite)."""
        found = self._deny_plans.get(program)
        if found is None:
            found = tuple(step for step in self.plan(program) if step[0] in self._denying)
            self._deny_plans[program] = found
        return found

    def _planned(self, program: str) -> Any:
        tables = self._tables
        stored = tables.pairs(program, len(self._compiled)) if tables is not None else None
        if stored is not None:
            return self._unpacked(stored)
        return self._specialized(program)

    def _unpacked(self, pairs: tuple[int, ...]) -> Any:
        """The steps of a plan stored in `PlanTables`: (rule index, guard form, guard)."""
        residuals = self._tables.residuals  # type: ignore[union-attr]
        for at in range(0, len(pairs), 2):
            index, code = pairs[at], pairs[at + 1]
            if code == GENERIC:
                yield index, self._compiled[index].guard, self._generic_guard(index)
                continue
            if code not in self._stored:
                self._stored[code] = build_guard(residuals[code], self._functions)
            yield index, residuals[code], self._stored[code]

    def generic(self, indexes: tuple[int, ...]) -> Plan:
        """The rules `indexes`, each with its own guard (not specialised to a program)."""
        return tuple((index, self._generic_guard(index)) for index in indexes)

    def _generic_guard(self, index: int) -> Guard | None:
        """The guard of the rule's own guard form (built once)."""
        if index not in self._generic:
            self._generic[index] = build_guard(self._compiled[index].guard, self._functions)
        return self._generic[index]

    def _kept_key(self, index: int, ir: Any, program: str) -> tuple[Any, ...] | None:
        """Where a rule whose residual is the program's own (it reads `segment.program` outside
        its tests) is remembered as kept, by the values of its tests: another program with the
        same values keeps it too, with its own guard, without specialising it again. Keeping a
        rule is always exact (its guard decides at run time; at worst a rule that would have
        specialised to `false` costs one step), so only a kept rule is shared, never a dropped
        one. None when the values cannot be a key."""
        key = (index, "kept", self._specializer.program_tests(ir, program)[0])
        try:
            hash(key)
        except TypeError:
            return None
        return key

    def _specialized(self, program: str) -> Any:
        self._specialized_count += 1
        fold = self._tables is None or self._specialized_count > FOLD_AFTER
        specializer = self._specializer
        if specializer is None or fold and not specializer.first_word:
            from rtk_policy.policy.guards.specialize import Specializer  # not on a stored plan

            if specializer is not None:
                self._residuals.clear()  # kept by the signatures of the other specialiser
            specializer = self._specializer = Specializer(self._functions, fold)
        for index in self.candidates(program):
            ir = self._compiled[index].guard
            if not specializer.mentions(ir):  # the same guard for every program: built once
                yield index, ir, self._generic_guard(index)
                continue
            whole = specializer.whole_first_word(ir, program)
            if whole is not None:  # the guard is one first-word test: kept as it is, or false
                if whole:
                    yield index, ir, self._generic_guard(index)
                continue
            signature = specializer.signature(ir, program)
            step = self._residuals.get((index, signature))
            kept = None
            if step is None and signature == (program,):
                kept = self._kept_key(index, ir, program)
                step = self._residuals.get(kept) if kept is not None else None
            if step is None:
                residual = specializer.specialize(ir, program)
                if residual == FALSE_FORM:
                    step = (residual, None)
                elif signature == (program,):  # the program's own residual: as stored plans do,
                    step = (ir, self._generic_guard(index))  # the rule's own guard (built once)
                    if kept is not None:
                        self._residuals[kept] = step
                else:
                    step = (residual, build_guard(residual, self._functions))
                self._residuals[(index, signature)] = step
            if step[0] != FALSE_FORM:
                yield index, step[0], step[1]
