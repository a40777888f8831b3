"""`PolicySet`: compiled rules ready to evaluate a `CommandLine` (the hot path: no yaml, no
lark)."""

from __future__ import annotations

import time
from functools import partial

from rtk_policy.policy.backends.select import Backend, EngineError, EvalError
from rtk_policy.policy.compiled import NO_PROGRAM, CompiledFile, CompiledRule, rules_facts
from rtk_policy.policy.facts import (
    VARIABLES,
    command_value,
    context_values,
    segment_value,
    tool_value,
)
from rtk_policy.policy.functions_rtk import rtk_norm_begins_with
from rtk_policy.policy.guards.guard import Guard, build_guard, guard_functions
from rtk_policy.policy.guards.plan_store import PlanTables
from rtk_policy.policy.guards.plans import Planner
from rtk_policy.policy.left_out import LeftOut, configured_out
from rtk_policy.policy.model import (
    TOOL_KINDS,
    Context,
    Evaluation,
    Rule,
    RuleResult,
    SegmentResult,
    default_message,
    guessed,
    uncalled,
    unevaluable,
    unjudged_result,
)
from rtk_policy.policy.writes import segment_writes
from rtk_policy.shell.model import CommandLine, Segment

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

#: segments evaluated before the files' `when` and pipeline-consumer guards (run on every segment)
#: are compiled (`guards/code.py`); the rules' guards are compiled per program by the planner
WARM_AFTER = 256
#: plans whose loop steps are kept (`_loop_steps`): a bound for a long-running server
MAX_LOOPS = 2048


class PolicySet:
    """Compiled policies of a set of files, evaluated on one backend.

    Programs are kept as cache bytes until first use (`_program`), so a cache hit restores only what
    the commands evaluated actually need.
    """

    def __init__(
        self,
        files: tuple[CompiledFile, ...],
        compiled: tuple[CompiledRule, ...],
        programs: list[Any],
        expected: tuple[str, ...],
        backend: Backend,
        digest: str,
        uses: frozenset[str] | None = None,
        plans: PlanTables | None = None,
        problems: tuple[Any, ...] = (),
    ) -> None:
        self.compiled_files = files
        #: a tuple, or for a set read from the compiled cache a sequence whose rules read their
        #: guard forms when first used (`stored.StoredRules`): index it, iterate it only where
        #: every rule is needed
        self.compiled_rules = compiled
        rules, file_indexes, _ = rules_facts(compiled)
        self.rules: tuple[Rule, ...] = rules
        self.files: tuple[str, ...] = tuple(f.path for f in files)
        self.digest = digest
        #: `errors.Problem`s of the files left out of a partial load
        #: (`load_policy_set(partial=True)`)
        self.problems: tuple[Any, ...] = problems
        self.backend = backend.name
        self._backend = backend
        self._programs = programs
        #: per program, the type its result must have ("bool" or "string")
        self.expected = expected
        self._restored = [not isinstance(p, (bytes, bytearray)) for p in programs]
        self._functions = functions = guard_functions()
        #: `plans`: the indexed programs' plans from the compiled cache (`plan_store.py`)
        self._planner = Planner(compiled, functions, plans)
        self._outputs: dict[int, Guard | None] = {}
        self._build_output: Callable[[Any], Guard | None] = partial(
            build_guard, functions=functions
        )
        self._deny_reads: Any = None
        self._last_context: tuple[Context, dict[str, Any]] | None = None
        self._left_out = LeftOut(
            tuple(rule.id for rule in rules),
            lambda: self._planner.generic(tuple(range(len(compiled)))),
        )
        #: per rule, what the evaluation loop tests before its guard: (id, is a rewrite, index of
        #: its file when that file has a `when`, else None)
        self._step_facts = tuple(
            (
                rule.id,
                rule.kind == "rewrite",
                None if files[file_index].when == NO_PROGRAM else file_index,
            )
            for rule, file_index in zip(rules, file_indexes, strict=True)
        )
        #: `_loop_steps`' answers by id of the plan, rewritable, writes: (plan, left out, steps)
        self._loops: dict[tuple[int, bool, bool], tuple[Any, frozenset[str], list[Any]]] = {}
        #: per rule index looked at: whether it cannot match a shell command writing nothing
        #: (`_needs_writes`), worked out for the rules of the plans met
        self._write_rules: dict[int, bool] = {}
        #: per kind of tool call that is not a shell command, the rules tried on it
        self._tool_rules = {
            kind: tuple(i for i, rule in enumerate(rules) if kind in rule.tools)
            for kind in TOOL_KINDS
            if kind != "shell"
        }
        self._until_warm = WARM_AFTER
        self._file_guards(lambda form: build_guard(form, functions))
        #: what the expressions read (from the checker): only those variables are converted for CEL
        self.uses = frozenset(uses) if uses is not None else frozenset(VARIABLES)
        self._variables = frozenset(use.split(".", 1)[0] for use in self.uses)
        self._command_segments = bool({"command", "command.segments"} & self.uses)
        whole = self._command_segments or "segment" in self.uses
        self._segment_fields = (
            None
            if whole
            else frozenset(use.split(".", 1)[1] for use in self.uses if use.startswith("segment."))
        )

    def _file_guards(self, build: Any) -> None:
        """The guards of the files' `when` and pipeline consumers, built with `build`."""
        files = self.compiled_files
        self._when_guards = tuple(build(f.when_guard) for f in files)
        self._consumers = tuple(
            (f.pipeline_consumer, build(f.consumer_guard))
            for f in files
            if f.pipeline_consumer != NO_PROGRAM
        )

    def _program(self, index: int) -> Any:
        """The compiled program `index`, restored from its cache bytes on first use; raise
        `EngineError` when they do not restore (a damaged or forged cache whose digest held: the
        rule then fails closed, as when the engine gives up)."""
        if not self._restored[index]:
            try:
                program = self._backend.restore(self._programs[index], self.expected[index])
            except Exception as error:  # noqa: BLE001 - whatever the library raises
                raise EngineError(f"cached program {index} does not restore: {error}") from None
            self._programs[index] = program
            self._restored[index] = True
        return self._programs[index]

    def program_blobs(self) -> list[bytes]:
        """Every compiled program as the backend's bytes (what the compiled cache keeps)."""
        return [
            program if isinstance(program, bytes) else self._backend.dump(program)
            for program in self._programs
        ]

    def candidates(self, program: str) -> tuple[int, ...]:
        """Indexes of the rules tried on a segment running `program`, in load order."""
        return self._planner.candidates(program)

    def deny_blind_to(
        self, facts: frozenset[str], program: str, context: Context, exact: bool = False
    ) -> bool:
        """True when no enforce-mode deny rule tried on `program` can see `facts` (read paths)
        under `context` (`deny_reads.py`); `exact`: for a segment whose normal form does not
        begin with its program (`evaluate` plans it with `Planner.unfolded`)."""
        if self._deny_reads is None:
            from rtk_policy.policy.deny_reads import DenyReads  # a rewrite's re-check only

            files, functions = self.compiled_files, self._functions
            self._deny_reads = DenyReads(self.compiled_rules, files, self._planner, functions)
        return self._deny_reads.blind_to(facts, program, context, exact)

    def plan_tables(self) -> PlanTables:
        """The plans of every indexed program, worked out now (for the compiled cache)."""
        return self._planner.tables()

    def evaluate(
        self,
        command_line: CommandLine,
        context: Context,
        trace: bool = False,
        deny_only: bool = False,
        deadline: float | None = None,
        messages: bool = True,
    ) -> Evaluation:
        """Evaluate every applicable rule on every segment; never raises for evaluation errors.
        Past `deadline` (a `time.monotonic()` value) the segments not yet judged get no result
        (`Evaluation.unjudged` counts them; `engine/budget.py` makes the decision an ask).

        Without `trace`, rules whose guard (`guard.py`) proves they cannot match are skipped and
        `SegmentResult.tried` holds only the rules that matched or failed; with `trace` (explain),
        every candidate rule is run by the backend and listed in `tried`. Hits, rewrites and errors
        are the same either way. `deny_only` (the re-check of a rewritten command, where only an
        enforced deny can change the decision) tries only the enforce-mode deny rules. Without
        `messages` (a caller that shows no reason: `rewrite --batch`), a matched rule's own message
        is not worked out: its default (`model.default_message`) stands in.
        """
        started = time.perf_counter_ns()
        if self._until_warm > 0:
            self._until_warm -= len(command_line.segments)
            if self._until_warm <= 0:  # a batch or a server: compile them (never a cold hook)
                self._file_guards(self._planner.compiler())
                self._outputs.clear()  # the outputs met from now on are compiled too
                self._build_output = self._planner.compiler()
        variables = self._variables
        want_segments = "segment" in variables or self._command_segments
        fields = self._segment_fields
        segment_maps = [
            segment_value(s, fields) if want_segments else None for s in command_line.segments
        ]
        values: dict[str, Any] = {}
        if "command" in variables:
            values["command"] = command_value(
                command_line, segment_maps if self._command_segments else None
            )
        if variables & {"ctx", "claude", "config"}:
            values.update(self._context_values(context))
        disabled = (
            configured_out(context)
            if trace
            else self._left_out(context, self._context_values(context))
        )
        errors: list[str] = []
        results = []
        tools, restore = (
            self._shell_tools(command_line, context, deadline)
            if "tool" in variables
            else (None, None)
        )
        try:
            for segment, segment_map in zip(command_line.segments, segment_maps, strict=True):
                if deadline is not None and time.monotonic() > deadline:
                    break
                if segment_map is not None:
                    values["segment"] = segment_map
                if tools is not None:
                    values["tool"] = tools[segment.index]
                    writes = trace or bool(values["tool"]["paths_written"])
                else:
                    writes = True
                rewritable = segment.rewritable and not command_line.rewrite_refused
                run = _Run(self._backend, values, disabled, errors, trace, deny_only, messages)
                result = self._segment(segment, run, rewritable, writes)
                if segment.guessed:
                    result = guessed(result)
                elif segment.uncalled:
                    result = uncalled(result)
                results.append(result)
        finally:
            if restore is not None:
                restore()
        unjudged = len(command_line.segments) - len(results)
        if unjudged:
            results.extend(unjudged_result(s.index) for s in command_line.segments[len(results) :])
        elapsed = (time.perf_counter_ns() - started) // 1000
        return Evaluation(
            tuple(results), self.digest, self.backend, int(elapsed), tuple(errors), unjudged
        )

    def evaluate_tool(
        self, command_line: CommandLine, tool: dict[str, Any], context: Context, trace: bool = False
    ) -> Evaluation:
        """Evaluate the rules whose `tools:` hold `tool["kind"]` on a tool call that is not a shell
        command: `tool` is its CEL map (`facts.tool_call_value`), `command_line` the one segment
        that stands for it (`segment` and `command` in CEL, the audit record's segment)."""
        started = time.perf_counter_ns()
        segment = command_line.segments[0]
        segment_map = segment_value(segment)
        values = {"segment": segment_map, "command": command_value(command_line, [segment_map])}
        values.update(self._context_values(context), tool=tool)
        errors: list[str] = []
        run = _Run(self._backend, values, configured_out(context), errors, trace)
        steps = self._planner.generic(self._tool_rules.get(str(tool.get("kind")), ()))
        result = self._run_steps(segment.index, steps, run, False, consumer=False)
        elapsed = (time.perf_counter_ns() - started) // 1000
        return Evaluation((result,), self.digest, self.backend, int(elapsed), tuple(errors))

    @staticmethod
    def _shell_tools(
        command_line: CommandLine, context: Context, deadline: float | None = None
    ) -> tuple[list[dict[str, Any]], Callable[[], object] | None]:
        """Per segment, the CEL `tool` map of a shell command (the paths the segment writes), and
        for a command that writes, what ends its spellings memo (`paths.evaluation_memo`: the
        guards spell the written paths again, each of them several times) once it is decided.
        Past `deadline` the segments left are taken to write the whole tree."""
        name = context.tool_name or "Bash"
        restore = None
        try:
            words = [segment_writes(segment) for segment in command_line.segments]
            if not any(words):  # most commands: nothing to spell out
                return [tool_value(name, "shell", ())] * len(words), None
            from rtk_policy.policy.paths import evaluation_memo
            from rtk_policy.policy.shell_paths import command_writes

            previous = evaluation_memo({})
            restore = partial(evaluation_memo, previous)
            writes = command_writes(command_line, context.cwd, words, deadline)
        except Exception:  # noqa: BLE001 - facts that cannot be read never hide a write
            writes = (("/",),) * len(command_line.segments)  # the whole tree: asked
        return [tool_value(name, "shell", written) for written in writes], restore

    def _context_values(self, context: Context) -> dict[str, Any]:
        """`context_values(context)`, the same maps again for the same (frozen) context: a batch, a
        command's re-check and a server's repeated context share them (nothing changes them)."""
        last = self._last_context
        if last is None or last[0] is not context:
            last = self._last_context = (context, context_values(context))
        return last[1]

    def _segment(
        self, segment: Segment, run: _Run, rewritable: bool, writes: bool = True
    ) -> SegmentResult:
        program, planner = segment.program, self._planner
        if run.trace:
            steps = planner.traced(program, run.deny_only)
        elif not rtk_norm_begins_with(segment.command, program):  # first-word folds do not hold
            steps = planner.unfolded(program, run.deny_only)
        else:
            steps = planner.deny_plan(program) if run.deny_only else planner.plan(program)
        return self._run_steps(segment.index, steps, run, rewritable, writes=writes)

    def _run_steps(
        self,
        index: int,
        steps: Any,
        run: _Run,
        rewritable: bool,
        consumer: bool = True,
        writes: bool = True,
    ) -> SegmentResult:
        """Try the rules of `steps` (rule index, guard) in order on one segment; without `writes`
        (a shell command whose `tool.paths_written` is empty, not traced) the rules that need a
        written path are left out (`_needs_writes`: they give false)."""
        tried: list[RuleResult] = []
        hits: list[RuleResult] = []
        rewrite: RuleResult | None = None
        when_cache: dict[int, bool] = {}  # the files' `when` on this segment (files without apply)
        values, trace = run.values, run.trace
        for rule_index, guard, is_rewrite, file_index in self._loop_steps(
            steps, run.disabled, rewritable, writes
        ):
            if is_rewrite and rewrite is not None:
                continue
            if file_index is not None:
                applies = when_cache.get(file_index)
                if applies is None:
                    applies = when_cache[file_index] = self._file_applies(file_index, run)
                if not applies:
                    continue
            known = guard(values) if guard is not None else None
            if known is False:
                continue
            result = self._try(rule_index, run, known is True)
            if result is None:
                continue
            if trace or result.matched or result.error:
                tried.append(result)
            if result.matched:
                if is_rewrite:
                    rewrite = result
                else:
                    hits.append(result)
        safe = consumer and not run.deny_only and self._safe_consumer(run)
        return SegmentResult(index, tuple(tried), tuple(hits), rewrite, safe)

    def _loop_steps(
        self, steps: Any, disabled: frozenset[str], rewritable: bool, writes: bool = True
    ) -> list[Any]:
        """The steps `_run_steps` tries, as (rule index, guard, is a rewrite, index of the file
        whose `when` must hold or None): `steps` less the rules `disabled`, for a segment that is
        not `rewritable` the rewrites, and without `writes` the rules that need a written path
        (none of them is tried then). Remembered by the plan object (kept alive and compared by
        identity) and what else they depend on."""
        key = (id(steps), rewritable, writes)
        found = self._loops.get(key)
        if found is not None and found[0] is steps and found[1] == disabled:
            return found[2]
        facts, needs_writes = self._step_facts, self._writes_needed
        loop = [
            (index, guard, is_rewrite, file_index)
            for index, guard in steps
            for rule_id, is_rewrite, file_index in (facts[index],)
            if rule_id not in disabled
            and (rewritable or not is_rewrite)
            and (writes or not needs_writes(index))
        ]
        if len(self._loops) >= MAX_LOOPS:
            self._loops.clear()
        self._loops[key] = (steps, disabled, loop)
        return loop

    def _writes_needed(self, index: int) -> bool:
        """Whether rule `index` cannot match a shell command writing nothing (`_needs_writes`)."""
        found = self._write_rules.get(index)
        if found is None:
            found = self._write_rules[index] = _needs_writes(self.compiled_rules[index].guard)
        return found

    def _file_applies(self, file_index: int, run: _Run) -> bool:
        """Whether the file's `when` holds for this segment (True for a file without one)."""
        compiled = self.compiled_files[file_index]
        if compiled.when == NO_PROGRAM:
            return True
        guard = self._when_guards[file_index]
        known = guard(run.values) if guard is not None and not run.trace else None
        if type(known) is bool:  # the guard's answer is CEL's
            return known
        try:
            return self._backend.run_bool(self._program(compiled.when), run.activation())
        except Exception as error:  # noqa: BLE001 - fail towards trying the rules
            run.errors.append(f"{compiled.name}: when: {error}")
            return True  # a `when` that cannot be evaluated never hides a deny

    def _try(self, index: int, run: _Run, proven: bool = False) -> RuleResult | None:
        """The result of one rule; None for a plain non-match when not tracing.

        `proven`: the guard gave `true`, which is CEL's answer too (`guard.py`), so the match is
        not evaluated again. Likewise a rewrite or message whose guard form gives a string.
        """
        item = self.compiled_rules[index]
        rule = item.rule
        backend = self._backend
        try:
            if not proven and not backend.run_bool(self._program(item.match), run.activation()):
                return RuleResult(rule, False) if run.trace else None
            if rule.kind == "rewrite":
                rewrite = self._output(index, run)
                if rewrite is None:
                    rewrite = backend.run_string(self._program(item.rewrite), run.activation())
                return RuleResult(rule, True, rewrite=rewrite)
        except EngineError as error:
            run.errors.append(f"{rule.id}: {error}")
            return unevaluable(rule, str(error))
        except EvalError as error:  # an error of the expression (e.g. a missing key): no match
            run.errors.append(f"{rule.id}: {error}")
            return RuleResult(rule, False, error=str(error))
        except Exception as error:  # noqa: BLE001 - the engine crashed: fail closed
            run.errors.append(f"{rule.id}: {type(error).__name__}: {error}")
            return unevaluable(rule, f"{type(error).__name__}: {error}")
        message = self._message(index, run) if run.messages else default_message(rule)
        return RuleResult(rule, True, message=message)

    def _output(self, index: int, run: _Run) -> str | None:
        """The rule's rewrite or message from its guard form; None when CEL must say it."""
        item = self.compiled_rules[index]
        if run.trace or not item.output:
            return None
        if index not in self._outputs:
            self._outputs[index] = self._build_output(item.output)
        guard = self._outputs[index]
        value = guard(run.values) if guard is not None else None
        return value if type(value) is str else None

    def _message(self, index: int, run: _Run) -> str:
        item = self.compiled_rules[index]
        if item.message != NO_PROGRAM:
            message = self._output(index, run)
            if message is not None:
                return message
            try:
                return self._backend.run_string(self._program(item.message), run.activation())
            except EvalError as error:
                run.errors.append(f"{item.rule.id}: message: {error}")
        return default_message(item.rule)

    def _safe_consumer(self, run: _Run) -> bool:
        for program, guard in self._consumers:
            known = guard(run.values) if guard is not None and not run.trace else None
            if known is True:  # the guard's answer is CEL's
                return True
            if known is False:
                continue
            try:
                if self._backend.run_bool(self._program(program), run.activation()):
                    return True
            except EvalError as error:
                run.errors.append(f"pipeline_consumer: {error}")
        return False


#: the guard form of `tool.paths_written`
_PATHS_WRITTEN = ("dot", ("ident", "tool"), "paths_written")


def _needs_writes(form: Any) -> bool:
    """Whether a rule whose match has the guard form `form` is false when `tool.paths_written` is
    empty: the form is, or has among the operands of its top `&&` chain, an `exists` over
    `tool.paths_written` (false over an empty list, so the conjunction is false too)."""
    if not form:
        return False
    if form[0] == "exists":
        return form[1] == _PATHS_WRITTEN
    return form[0] == "and" and any(_needs_writes(operand) for operand in form[1:])


class _Run:
    """The state of evaluating one segment: its values, the backend activation built on first
    need."""

    __slots__ = (
        "backend", "values", "disabled", "errors", "trace", "deny_only", "messages", "_activation"
    )  # fmt: skip

    def __init__(
        self,
        backend: Backend,
        values: dict[str, Any],
        disabled: frozenset[str],
        errors: list[str],
        trace: bool,
        deny_only: bool = False,
        messages: bool = True,
    ) -> None:
        self.backend = backend
        self.values = values
        self.disabled = disabled
        self.errors = errors
        self.trace = trace
        self.deny_only = deny_only
        self.messages = messages
        self._activation: Any = None

    def activation(self) -> Any:
        """The backend activation of `values` (built once, when a rule needs the backend)."""
        if self._activation is None:
            self._activation = self.backend.activation(self.values)
        return self._activation
