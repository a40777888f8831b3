"""Running policy test cases and inline examples, and measuring which rules they exercised."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from rtk_policy.decision import decide
from rtk_policy.policy.model import only_rules
from rtk_policy.policytest.examples import build_context, matched_rule_ids, run_examples
from rtk_policy.policytest.files import UNSET, TestCase, TestFile
from rtk_policy.util import record

if TYPE_CHECKING:
    from rtk_policy.engine.pipeline import Engine
    from rtk_policy.policy.model import Rule

PASS, FAIL, ERROR, SKIP = "pass", "fail", "error", "skip"


@record.frozen
class TestResult:
    """The outcome of one test case or inline example."""

    __test__ = False  # not a pytest class

    kind: str  #: "case" | "example" | "file" (a test file or case that could not be read)
    name: str
    file: str
    line: int
    status: str  #: PASS | FAIL | ERROR | SKIP
    command: str = ""
    detail: str = ""
    matched_rules: tuple[str, ...] = ()

    @property
    def location(self) -> str:
        """`file:line` of the case or example."""
        return f"{self.file}:{self.line}"


@record.frozen
class Coverage:
    """Which rules of the loaded set matched in at least one case or example."""

    rules: tuple[Rule, ...]  #: every loaded rule, in policy order
    exercised: tuple[str, ...]  #: ids of rules that matched at least once

    @property
    def unexercised(self) -> tuple[Rule, ...]:
        """The rules no case or example made match."""
        hit = set(self.exercised)
        return tuple(rule for rule in self.rules if rule.id not in hit)


def run_case(engine: Engine, case: TestCase, policies: frozenset[str]) -> TestResult:
    """Run one case: evaluate its command in its context and compare with its expectation.

    With a `policy:` named, the verdict and reasons are those of that pack's rules alone (as for
    inline examples); the rewrite is always the whole set's, the command the host would run.
    """
    result = TestResult("case", case.name, case.file, case.line, PASS, case.command)
    if case.skip:
        return record.evolve(result, status=SKIP, detail=case.skip)
    if case.policy and case.policy not in policies:
        return record.evolve(result, status=SKIP, detail=f"policy {case.policy!r} is not loaded")
    try:
        context = build_context(engine, dict(case.claude), dict(case.config), dict(case.context))
        outcome = engine.evaluate(case.command, context)
    except Exception as error:  # noqa: BLE001 - a case must never stop the run
        return record.evolve(result, status=ERROR, detail=f"{type(error).__name__}: {error}")
    decision = outcome.decision
    verdict, reasons = decision.verdict, decision.reasons
    if case.policy:
        own = only_rules(outcome.evaluation, lambda rule: rule.policy == case.policy)
        scoped = decide(outcome.command_line, own, None)
        verdict, reasons = scoped.verdict, scoped.reasons
    matched = matched_rule_ids(outcome.evaluation)
    problems = check_expectation(
        case, verdict, decision.rewritten, (*reasons, *decision.warnings), matched
    )
    status = FAIL if problems else PASS
    return record.evolve(result, status=status, detail="; ".join(problems), matched_rules=matched)


def check_expectation(
    case: TestCase,
    verdict: str,
    rewritten: str | None,
    messages: tuple[str, ...],
    matched: tuple[str, ...],
) -> list[str]:
    """What differs between the case's expectation and what was observed (empty: it passed)."""
    expect, problems = case.expect, []
    if expect.verdict != UNSET and verdict != expect.verdict:
        problems.append(f"expected verdict {expect.verdict!r}, got {verdict!r}")
    if expect.rewrite != UNSET and rewritten != expect.rewrite:
        problems.append(f"expected rewrite {expect.rewrite!r}, got {rewritten!r}")
    if expect.message != UNSET and not any(expect.message in text for text in messages):
        shown = " | ".join(messages) if messages else "no reason"
        problems.append(f"expected a reason containing {expect.message!r}, got: {shown}")
    missing = [rule_id for rule_id in expect.rules if rule_id not in matched]
    if missing:
        problems.append(f"expected rule(s) {', '.join(missing)} to match; matched: "
                        f"{', '.join(matched) or 'none'}")
    return problems


def run_test_files(engine: Engine, files: Iterable[TestFile]) -> list[TestResult]:
    """Run every case of every test file; unreadable cases are ERROR results at their line."""
    policies = frozenset(rule.policy for rule in engine.policies.rules)
    results: list[TestResult] = []
    for test_file in files:
        for problem in test_file.problems:
            results.append(error_result(problem.location, problem.message))
        results.extend(run_case(engine, case, policies) for case in test_file.cases)
    return results


def error_result(location: str, message: str) -> TestResult:
    """An ERROR result for a test file or case that could not be read, at `file:line`."""
    file, _, line = location.rpartition(":")
    return TestResult("file", "invalid test", file, int(line or 1), ERROR, detail=message)


def example_results(engine: Engine) -> list[TestResult]:
    """Every inline example of the loaded rules, as test results."""
    results = []
    for example_result in run_examples(engine):
        rule, example = example_result.rule, example_result.example
        results.append(
            TestResult(
                kind="example",
                name=f"example of {rule.id}",
                file=example.file,
                line=example.line,
                status=example_result.status,
                command=example.command,
                detail=example_result.detail,
                matched_rules=example_result.matched_rules,
            )
        )
    return results


def coverage(engine: Engine, results: Iterable[TestResult]) -> Coverage:
    """Which loaded rules matched in at least one of `results`."""
    exercised: dict[str, None] = {}
    for result in results:
        for rule_id in result.matched_rules:
            exercised[rule_id] = None
    return Coverage(tuple(engine.policies.rules), tuple(exercised))


def summary(results: Iterable[TestResult]) -> dict[str, int]:
    """Counts per status (passed, failed, errors, skipped) and the total."""
    counts = {PASS: 0, FAIL: 0, ERROR: 0, SKIP: 0}
    for result in results:
        counts[result.status] += 1
    return {"total": sum(counts.values()), "passed": counts[PASS], "failed": counts[FAIL],
            "errors": counts[ERROR], "skipped": counts[SKIP]}
