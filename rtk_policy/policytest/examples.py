"""Running the inline `examples` of policy rules (used by `check` and `test`).

A permission example states the verdict that the example's own policy file gives the command (its
rules combined as in DESIGN §6), so packs are tested independently of each other. A rewrite example
states the rewrite that the whole loaded set selects (rewrite packs are ordered, so priority across
files counts).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rtk_policy.decision import decide
from rtk_policy.policy.model import Context, Evaluation, Example, Rule, ToolCall, only_rules
from rtk_policy.util import record

if TYPE_CHECKING:
    from rtk_policy.engine.pipeline import Engine


@record.frozen
class ExampleResult:
    """The outcome of one example."""

    rule: Rule
    example: Example
    status: str  #: "pass" | "fail" | "error"
    actual: str | None  #: the verdict or rewrite observed
    detail: str = ""
    #: ids of every rule that matched a segment (for `test --coverage`)
    matched_rules: tuple[str, ...] = ()

    @property
    def location(self) -> str:
        """`file:line` of the example."""
        return f"{self.example.file}:{self.example.line}"


#: the working and project folder an example runs in: fixed, so that an example decides the same
#: wherever `check` runs (inside a virtualenv, whose folder the guard-self pack guards, a relative
#: path would otherwise land in the guarded install)
EXAMPLE_PROJECT = "/home/example/project"


def example_context(engine: Engine, example: Example) -> Context:
    """The context an example runs in: the engine's config, overridden by the example's own, in
    the fixed project folder `EXAMPLE_PROJECT` (unless its `ctx:` names other request fields)."""
    overrides: dict[str, Any] = dict(example.overrides)  # shapes checked by the loader
    claude, config = overrides.get("claude") or {}, overrides.get("config") or {}
    fields = {"cwd": EXAMPLE_PROJECT, "project_dir": EXAMPLE_PROJECT}
    fields.update(overrides.get("ctx") or {})
    return build_context(engine, claude, config, fields)


def build_context(
    engine: Engine,
    claude: dict[str, Any],
    config: dict[str, Any],
    fields: dict[str, Any] | None = None,
) -> Context:
    """The engine's context with `claude` rules ({deny, ask, allow}), `config` overrides
    (exclude_commands, transparent_prefixes, disabled_rules, enabled_packs) and request `fields`
    (agent, cwd, …)."""
    base = engine.context(**(fields or {}))
    return record.evolve(
        base,
        claude_deny=tuple(claude.get("deny", ())),
        claude_ask=tuple(claude.get("ask", ())),
        claude_allow=tuple(claude.get("allow", ())),
        exclude_commands=tuple(config.get("exclude_commands", base.exclude_commands)),
        transparent_prefixes=tuple(config.get("transparent_prefixes", base.transparent_prefixes)),
        disabled_rules=tuple(config.get("disabled_rules", base.disabled_rules)),
        enabled_packs=tuple(config.get("enabled_packs", base.enabled_packs)),
    )


def run_examples(engine: Engine) -> list[ExampleResult]:
    """Run every example of every rule of the engine's policy set."""
    results = []
    for rule in engine.policies.rules:
        for example in rule.examples:
            results.append(run_example(engine, rule, example))
    return results


def run_example(engine: Engine, rule: Rule, example: Example) -> ExampleResult:
    """Run one example and compare it with its expectation."""
    try:
        context = example_context(engine, example)
        if example.tool:
            call = example_tool_call(example)
            outcome = engine.evaluate_tool(call, context)
        else:
            outcome = engine.evaluate(example.command, context)
    except Exception as error:  # noqa: BLE001 - an example must never stop the run
        return ExampleResult(rule, example, "error", None, f"{type(error).__name__}: {error}")
    if rule.kind == "rewrite":
        actual = outcome.decision.rewrite
    else:
        own = _only_file(outcome.evaluation, rule.file)
        actual = decide(outcome.command_line, own, None).verdict
    status = "pass" if actual == example.expect else "fail"
    detail = "" if status == "pass" else f"expected {example.expect!r}, got {actual!r}"
    return ExampleResult(
        rule, example, status, actual, detail, matched_rule_ids(outcome.evaluation)
    )


def example_tool_call(example: Example) -> ToolCall:
    """The tool call of an example with `tool:` (its path written or read, by the tool's kind)."""
    from rtk_policy.agents.tools import tool_call

    return tool_call(example.tool, {"file_path": example.path} if example.path else {})


def matched_rule_ids(evaluation: Evaluation) -> tuple[str, ...]:
    """Ids of every rule (any kind or mode) that matched a segment of `evaluation`, first hit
    first."""
    ids: dict[str, None] = {}
    for result in evaluation.results:
        for hit in result.permission_hits:
            ids[hit.rule.id] = None
        if result.rewrite is not None:
            ids[result.rewrite.rule.id] = None
    return tuple(ids)


def _only_file(evaluation: Evaluation, file: str) -> Evaluation:
    """The evaluation restricted to the permission hits of rules from `file`."""
    return only_rules(evaluation, lambda rule: rule.file == file)


def summarize(results: list[ExampleResult]) -> tuple[int, int, int]:
    """Counts of (passed, failed, errored) examples."""
    passed = sum(r.status == "pass" for r in results)
    errored = sum(r.status == "error" for r in results)
    return passed, len(results) - passed - errored, errored

