"""Values crossing the policy stage: rules, the evaluation context, and per-segment results."""

from __future__ import annotations

from rtk_policy.util import record

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~4 ms on a cold hook)
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

VERDICTS = ("allow", "ask", "deny")
#: What a tool call does, as the `tool.kind` fact and a rule's `tools:` selector say it.
TOOL_KINDS = ("shell", "write", "edit", "read", "other")
#: The tools a rule without `tools:` is tried on.
SHELL_ONLY = ("shell",)
MODES = ("enforce", "warn", "audit")
#: A rewrite rule's role in a pipeline (reference §3.4): never piped, stage 1 only, last stage only,
#: or both.
PIPELINE_ROLES = ("never", "producer", "final", "both")


@record.frozen
class Example:
    """An inline example of a rule: a command and what the whole policy set must answer for it."""

    command: str
    #: permission rules: "allow" | "ask" | "deny" | "none" (the verdict of the command);
    #: rewrite rules: the expected rewrite text, or None for "no rewrite"
    expect: str | None
    file: str
    line: int
    #: the example's own `claude:` rules ({deny, ask, allow}) and `config:` overrides, as pairs
    overrides: tuple[tuple[str, object], ...] = ()
    tool: str = ""  #: a file tool's name (`Write`, `Read`…): the example is that call
    path: str = ""  #: the path that tool call writes or reads


@record.frozen
class Rule:
    """One rule of a policy file, without its compiled expressions."""

    id: str  #: unique across the loaded policy set
    policy: str  #: the `name` of the file it comes from
    file: str  #: path of the policy file
    line: int  #: 1-based line of the rule in its file
    kind: str  #: "permission" or "rewrite"
    decision: str  #: "deny" | "ask" | "allow" for permission rules, "" for rewrite rules
    mode: str  #: "enforce" | "warn" | "audit"
    programs: tuple[
        str, ...
    ]  #: index: the rule is only tried on these programs (empty = every segment)
    pipeline: str  #: one of PIPELINE_ROLES (rewrite rules; "never" for permission rules)
    description: str = ""
    #: a tuple as the loader makes them; read from the compiled cache, a sequence equal to it
    #: that is decoded when first used (`stored.StoredExamples`)
    examples: Sequence[Example] = ()
    tools: tuple[str, ...] = SHELL_ONLY  #: the `TOOL_KINDS` the rule is tried on
    #: `locked: true` (on the rule or its file): no config may disable it (honoured in managed
    #: files)
    locked: bool = False

    @property
    def on_shell(self) -> bool:
        """Whether the rule is tried on the segments of shell commands."""
        return "shell" in self.tools


@record.frozen
class ToolCall:
    """A tool call that is not a shell command (a file tool: Write, Edit, Read, apply_patch …)."""

    name: str  #: the agent's tool name
    kind: str  #: one of `TOOL_KINDS` but "shell"
    paths_written: tuple[str, ...] = ()  #: as the agent gave them (absolute, or relative to cwd)
    paths_read: tuple[str, ...] = ()


@record.frozen
class Context:
    """Everything a policy may see besides the command: the `ctx`, `claude` and `config` CEL
    variables."""

    agent: str = ""
    cwd: str = ""
    project_dir: str = ""
    permission_mode: str = ""
    session_id: str = ""
    tool_name: str = ""
    tool_input: tuple[tuple[str, object], ...] = ()  #: the agent's tool_input as pairs
    env: tuple[tuple[str, str], ...] = ()  #: selected environment variables
    claude_deny: tuple[
        str, ...
    ] = ()  #: Claude Code Bash(...) patterns, text inside the parentheses
    claude_ask: tuple[str, ...] = ()
    claude_allow: tuple[str, ...] = ()
    exclude_commands: tuple[str, ...] = ()
    transparent_prefixes: tuple[str, ...] = ()
    disabled_rules: tuple[str, ...] = ()  #: rule ids switched off in the config
    enabled_packs: tuple[str, ...] = ()  #: opt-in packs switched on in the config
    #: rule ids left out whatever the config says: an untrusted layer's loosening
    #: (`engine/layered.py`)
    suppressed_rules: tuple[str, ...] = ()


@record.frozen(compile_after=record.PER_COMMAND)
class RuleResult:
    """The outcome of trying one rule on one segment."""

    rule: Rule
    matched: bool
    message: str = ""  #: the rule's rendered message (permission rules that matched)
    rewrite: str | None = None  #: the replacement text for the segment (rewrite rules that matched)
    error: str = ""  #: an evaluation error; a rule that errors does not match


@record.frozen(compile_after=record.PER_COMMAND)
class SegmentResult:
    """All rule outcomes for one segment."""

    segment_index: int
    tried: tuple[RuleResult, ...]  #: every rule tried, in policy order (matched or not)
    permission_hits: tuple[RuleResult, ...]  #: matched permission rules, every mode
    rewrite: RuleResult | None  #: the first matching rewrite rule, if any
    safe_consumer: bool  #: the segment may consume a rewritten producer's output (reference §3.4)


@record.frozen(compile_after=record.PER_COMMAND)
class Evaluation:
    """The policy stage's answer for a whole command line."""

    results: tuple[SegmentResult, ...]  #: one per segment, same order as CommandLine.segments
    policy_digest: str
    backend: str
    eval_us: int  #: time spent evaluating, microseconds
    errors: tuple[str, ...] = ()  #: evaluation errors (also recorded per rule)
    #: segments left unjudged (no rule tried) because the decision's time budget ran out
    unjudged: int = 0


def unjudged_result(segment_index: int) -> SegmentResult:
    """The result of a segment no rule was tried on (the decision's time ran out first)."""
    return SegmentResult(segment_index, (), (), None, False)


def unevaluable(rule: Rule, error: str) -> RuleResult:
    """The result of a rule whose expression could not be evaluated.

    When the engine gives up or crashes (e.g. an input too large for its iteration budget), a deny
    or ask rule fails closed as an ask, since its deny may be hiding behind the error; other rules
    do not match.
    """
    if rule.kind == "permission" and rule.decision in ("deny", "ask"):
        asking = record.evolve(rule, decision="ask")
        message = f"rule {rule.id} could not be evaluated on this command ({error}); confirm it"
        return RuleResult(asking, True, message=message, error=error)
    return RuleResult(rule, False, error=error)


def guessed(result: SegmentResult) -> SegmentResult:
    """The result of a guessed copy of a command (`Segment.guessed`: an unknown value taken as "/"):
    its enforced denies become asks that say so, and nothing else it matched counts."""
    hits = tuple(
        RuleResult(
            record.evolve(hit.rule, decision="ask"),
            True,
            message=f"A value this command leaves unknown may be '/', and then: {hit.message}"
            " The user must confirm it, or spell the value out.",
        )
        for hit in result.permission_hits
        if hit.rule.decision == "deny" and hit.rule.mode == "enforce"
    )
    return record.evolve(result, permission_hits=hits, rewrite=None)


def uncalled(result: SegmentResult) -> SegmentResult:
    """The result of a command in the body of a function the input never calls
    (`Segment.uncalled`): bash runs none of it here, so only its enforced denies count (a shell that
    lasts between calls could still call the function later); with none it has no opinion, so it
    still keeps the whole from an allow."""
    hits = tuple(
        hit
        for hit in result.permission_hits
        if hit.rule.decision == "deny" and hit.rule.mode == "enforce"
    )
    return record.evolve(result, permission_hits=hits, rewrite=None)


def only_rules(evaluation: Evaluation, keep: Callable[[Rule], bool]) -> Evaluation:
    """The evaluation restricted to the permission hits of the rules `keep` accepts."""
    results = tuple(
        record.evolve(
            result,
            permission_hits=tuple(h for h in result.permission_hits if keep(h.rule)),
        )
        for result in evaluation.results
    )
    return record.evolve(evaluation, results=results)


def default_message(rule: Rule) -> str:
    """The message of a rule without `message:`: its description or its decision, naming the
    rule."""
    if rule.description:
        return f"{rule.description.strip()} (rule {rule.id})"
    verb = {"deny": "denied", "ask": "needs confirmation", "allow": "allowed"}.get(
        rule.decision, "matched"
    )
    return f"{verb} by rule {rule.id} of policy {rule.policy}"
