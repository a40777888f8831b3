"""Compiling validated policy files (`loader.FileSpec`) into the parts of a `PolicySet` (load path
only)."""

from __future__ import annotations

from typing import Any

from rtk_policy.policy.backends.select import Backend, CompileError
from rtk_policy.policy.compiled import NO_PROGRAM, CompiledFile, CompiledRule
from rtk_policy.policy.errors import Problem
from rtk_policy.policy.guards.fast_source import fast_source
from rtk_policy.policy.guards.ir import guard_ir
from rtk_policy.policy.guards.program_index import derived_programs
from rtk_policy.policy.loader import ExprSpec, FileSpec, read_policy_file
from rtk_policy.policy.positions import locate, offset_in_value
from rtk_policy.util import record


@record.mutable
class Compilation:
    """Everything compiled so far, and every problem found."""

    backend: Backend
    files: list[CompiledFile] = record.Factory(list)
    rules: list[CompiledRule] = record.Factory(list)
    programs: list[Any] = record.Factory(list)
    expected: list[str] = record.Factory(list)
    problems: list[Problem] = record.Factory(list)
    uses: set[str] = record.Factory(set)

    def expr(self, spec: FileSpec, expr: ExprSpec | None) -> int:
        """Compile one expression; its index in `programs`, or NO_PROGRAM (also on error)."""
        if expr is None:
            return NO_PROGRAM
        try:
            program, uses = self._compile(expr)
        except CompileError as error:
            for item in error.errors:
                self.problems.append(
                    _expression_problem(spec, expr, item.line, item.col, item.message)
                )
            return NO_PROGRAM
        self.uses.update(uses)
        self.programs.append(program)
        self.expected.append(expr.expected)
        return len(self.programs) - 1

    def _compile(self, expr: ExprSpec) -> tuple[Any, frozenset[str]]:
        """Compile the faster equivalent of the source (`fast_source`); errors are those of the
        source."""
        fast = fast_source(expr.source)
        if fast == expr.source:
            return self.backend.compile(expr.source, expr.expected)
        try:
            return self.backend.compile(fast, expr.expected)
        except CompileError:
            return self.backend.compile(expr.source, expr.expected)


def _expression_problem(
    spec: FileSpec, expr: ExprSpec, line: int, col: int, message: str
) -> Problem:
    file_line, file_col = locate(spec.text, expr.node, offset_in_value(expr.source, line, col))
    lines = spec.text.splitlines()
    source = lines[file_line - 1] if 0 < file_line <= len(lines) else ""
    return Problem(spec.path, file_line, file_col, message, source)


def compile_files(sources: list[tuple[str, str]], backend: Backend) -> Compilation:
    """Read, validate and compile `(path, text)` pairs in order; problems are collected, not
    raised."""
    state = Compilation(backend)
    names: dict[str, str] = {}
    ids: dict[str, str] = {}
    for path, text in sources:
        spec, problems = read_policy_file(path, text)
        state.problems.extend(problems)
        if spec is None:
            continue
        _check_unique(state, spec, names, ids)
        _compile_file(state, spec)
    order = {path: index for index, (path, _) in enumerate(sources)}
    state.problems.sort(key=lambda p: (order.get(p.file, 0), p.line, p.col))
    return state


def _check_unique(
    state: Compilation, spec: FileSpec, names: dict[str, str], ids: dict[str, str]
) -> None:
    lines = spec.text.splitlines() or [""]
    if spec.name and spec.name in names:
        state.problems.append(
            Problem(
                spec.path, 1, 1, f"policy name {spec.name!r} is also used by {names[spec.name]}"
            )
        )
    names.setdefault(spec.name, spec.path)
    for item in spec.rules:
        rule = item.rule
        if not rule.id:
            continue
        if rule.id in ids:
            mark = item.id_node.start_mark
            message = f"duplicate rule id {rule.id!r} (first defined at {ids[rule.id]})"
            state.problems.append(
                Problem(spec.path, mark.line + 1, mark.column + 1, message, lines[mark.line])
            )
        else:
            ids[rule.id] = f"{spec.path}:{rule.line}"


def _compile_file(state: Compilation, spec: FileSpec) -> None:
    file_index = len(state.files)
    when = state.expr(spec, spec.when)
    consumer = state.expr(spec, spec.pipeline_consumer)
    state.files.append(
        CompiledFile(
            spec.path,
            spec.name,
            spec.kind,
            when,
            consumer,
            _guard(spec.when, when),
            _guard(spec.pipeline_consumer, consumer),
        )
    )
    for item in spec.rules:
        match = state.expr(spec, item.match)
        message = state.expr(spec, item.message)
        rewrite = state.expr(spec, item.rewrite)
        if item.match is None or match == NO_PROGRAM or (
            spec.kind == "rewrite" and rewrite == NO_PROGRAM
        ):  # no match (a load problem) gives NO_PROGRAM too
            continue
        derived = () if item.rule.programs else derived_programs(item.match.source)
        output = (
            _guard(item.rewrite, rewrite)
            if spec.kind == "rewrite"
            else _guard(item.message, message)
        )
        state.rules.append(
            CompiledRule(
                item.rule,
                file_index,
                match,
                message,
                rewrite,
                derived,
                guard_ir(item.match.source),
                output,
            )
        )


def _guard(expr: ExprSpec | None, program: int) -> tuple[Any, ...]:
    """The guard form (`guard.py`) of a compiled expression; () when there is none."""
    return () if expr is None or program == NO_PROGRAM else guard_ir(expr.source)
