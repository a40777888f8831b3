"""Whether the enforce-mode deny rules tried on a program can see some facts, under a context
(the re-check proof of `engine/recheck.py`).

The re-check of a rewrite runs only the enforce-mode deny rules of each segment's program
(`Planner.deny_plan`). `DenyReads.blind_to(facts, program, context)` is True when none of them
can see `facts` (read paths, `guards/reads.py`): each rule reads none of them in its match or its
file's `when`, or it cannot match under `context` whatever the command. A rule cannot match when
it is disabled there, or when its guard gives `false` from the context's values alone (no
`segment`, no `command`: those read as unknown, so that `false` holds for every command, as a
guard's `false` is CEL's). A rule whose form is not wholly known to the guards reads anything.
Only the rules that do read some of `facts` are run on the context, so a cold hook builds the
guard of one rule (`claude-deny`) at most.
"""

from __future__ import annotations

from rtk_policy.policy.compiled import NO_PROGRAM
from rtk_policy.policy.facts import context_values
from rtk_policy.policy.guards.guard import build_guard
from rtk_policy.policy.guards.reads import form_reads

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: (facts, context) pairs whose answers are kept (a batch has one, a server a few)
MAX_CONTEXTS = 64


class DenyReads:
    """`blind_to` for one policy set's compiled rules, files, planner and guard functions."""

    def __init__(
        self, compiled: tuple[Any, ...], files: tuple[Any, ...], planner: Any, functions: Any
    ) -> None:
        self._compiled = compiled
        self._files = files
        self._planner = planner
        self._functions = functions
        self._rule_reads: dict[int, frozenset[str] | None] = {}
        #: (facts, context) → ((program, exact) → blind, rule index → cannot match, the
        #: context's values)
        self._known: dict[Any, tuple[dict[Any, bool], dict[int, bool], list[Any]]] = {}
        #: the last (facts, context, their `_known` entry): a batch asks with the same two objects
        #: for every program of every command, and hashing the context each time costs more than
        #: the answer
        self._last: tuple[frozenset[str], Any, Any] | None = None

    def blind_to(
        self, facts: frozenset[str], program: str, context: Any, exact: bool = False
    ) -> bool:
        """True when no enforce-mode deny rule tried on `program` can see `facts` under
        `context`; `exact`: as the planner plans a segment whose normal form does not begin
        with its program (`Planner.unfolded`)."""
        last = self._last
        if last is not None and last[0] is facts and last[1] is context:
            known = last[2]
        else:
            try:
                known = self._known.get((facts, context))
            except TypeError:  # a context that cannot be hashed (lists in tool_input): not kept
                return self._blind(facts, program, context, {}, [], exact)
            if known is None:
                if len(self._known) >= MAX_CONTEXTS:
                    self._known.clear()
                known = self._known[(facts, context)] = ({}, {}, [])
            self._last = (facts, context, known)
        programs, dead, values = known
        key = (program, exact)
        if key not in programs:
            programs[key] = self._blind(facts, program, context, dead, values, exact)
        return programs[key]

    def _blind(
        self,
        facts: frozenset[str],
        program: str,
        context: Any,
        dead: dict[int, bool],
        values: Any,
        exact: bool,
    ) -> bool:
        planner = self._planner
        plan = planner.unfolded(program, True) if exact else planner.deny_plan(program)
        for index, _ in plan:
            reads = self._reads_of(index)
            if reads is not None and facts.isdisjoint(reads):
                continue
            if index not in dead:
                dead[index] = self._cannot_match(index, context, values)
            if not dead[index]:
                return False
        return True

    def _reads_of(self, index: int) -> frozenset[str] | None:
        """What rule `index` reads: its match, and its file's `when` when it has one."""
        if index not in self._rule_reads:
            item = self._compiled[index]
            reads = form_reads(item.guard) if item.guard else None
            file = self._files[item.file_index]
            if reads is not None and file.when != NO_PROGRAM:
                when = form_reads(file.when_guard) if file.when_guard else None
                reads = None if when is None else reads | when
            self._rule_reads[index] = reads
        return self._rule_reads[index]

    def _cannot_match(self, index: int, context: Any, values: list[Any]) -> bool:
        """Rule `index` is disabled under `context`, or false from the context's values alone
        (`values` keeps them for the context's other rules)."""
        item = self._compiled[index]
        if item.rule.id in context.disabled_rules:
            return True
        guard = build_guard(item.guard, self._functions) if item.guard else None
        if guard is None:
            return False
        if not values:
            values.append(context_values(context))
        return guard(dict(values[0])) is False
