"""The pipeline of stages: text → shell.parse → policy evaluation → decision.

`Engine` holds a loaded policy set and the config; `Engine.decide` is what `rewrite`, `hook`,
`explain` and `serve` call.
"""

from __future__ import annotations

import time

from rtk_policy.config.load import Config
from rtk_policy.decision import Decision, decide
from rtk_policy.engine.budget import DECISION_BUDGET_S, deadline, within_budget
from rtk_policy.engine.recheck import recheck_needed
from rtk_policy.engine.rewrite import replacements, splice
from rtk_policy.engine.unread import unread, unread_decision
from rtk_policy.policy.model import Context, Evaluation, ToolCall
from rtk_policy.shell import CommandLine, parse
from rtk_policy.shell.model import Segment
from rtk_policy.util import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rtk_policy.agents.common import HookRequest
    from rtk_policy.agents.protocol import AgentProtocol
    from rtk_policy.policy.policyset import PolicySet


@record.frozen(compile_after=record.PER_COMMAND)
class Outcome:
    """Everything known about one decision: the parse, the rule results and the verdict."""

    command_line: CommandLine
    evaluation: Evaluation
    decision: Decision


@record.mutable
class Engine:
    """A loaded policy set and config, ready to decide commands."""

    policies: PolicySet
    config: Config
    #: files of any layer that did not load (left out): every answer is then at least ask
    problems: tuple[str, ...] = ()
    #: what the user is told with every answer: loosening of untrusted layers ignored, and why
    notices: tuple[str, ...] = ()
    #: ids of the untrusted layers' loosening rules, never evaluated (`engine/layered.py`)
    suppressed: tuple[str, ...] = ()
    #: seconds a decision may take before what is left is asked about (`engine/budget.py`);
    #: None: no budget (tools that must give the same answer on any machine load)
    budget_s: float | None = DECISION_BUDGET_S

    @property
    def folder_facts(self) -> None:
        """No remembered file-system facts: the hook reads them (`hook.interfaces.HookEngine`)."""
        return None

    def rendered(
        self, module: AgentProtocol, decision: Decision, request: HookRequest
    ) -> str | None:
        """`module.render(decision, request)`: this engine remembers no answers."""
        return module.render(decision, request)

    def context(self, **fields: Any) -> Context:
        """A `Context` carrying this engine's config plus the given request fields (which may
        replace a config list, e.g. `exclude_commands`)."""
        configured: dict[str, Any] = {
            "exclude_commands": self.config.exclude_commands,
            "transparent_prefixes": self.config.transparent_prefixes,
            "disabled_rules": self.config.disabled_rules,
            "enabled_packs": self.config.enabled_packs,
            "suppressed_rules": self.suppressed,
        }
        return Context(**{**configured, **fields})

    def evaluate(
        self, text: str, context: Context, trace: bool = False, messages: bool = True
    ) -> Outcome:
        """Parse `text`, evaluate the policies on it and combine the results.

        `trace` (explain) lists every rule tried in the evaluation, not only those that matched.
        Without `messages` (a caller that shows no reason), the rules' default messages stand in
        for their own (`PolicySet.evaluate`); verdict, rewrite and rule ids are the same.

        Text that is not valid Unicode (lone surrogates from undecodable bytes) is judged with those
        characters replaced, since a CEL engine cannot hold them, and is never rewritten.
        """
        ends = deadline(self.budget_s)
        clean = _valid_unicode(text)
        command_line = parse(clean, context.transparent_prefixes)
        if command_line.parse_error:
            closed = self._closed(command_line, context, trace, ends, messages)
            if closed is not None:
                return closed
        evaluation = self.policies.evaluate(
            command_line, context, trace, messages=messages, deadline=ends
        )
        changed = replacements(command_line, evaluation) if clean == text else None
        rewrite = splice(command_line, changed) if changed is not None else None
        recheck = None
        if changed is not None and rewrite is not None and rewrite != text and (trace or (
            recheck_needed(command_line, evaluation, changed, rewrite, context, self.policies)
        )):  # fmt: skip
            # only an enforced deny of the rewritten command can change the decision (decision.py);
            # `recheck.py` says when none can be found
            rewritten_line = parse(rewrite, context.transparent_prefixes)
            recheck = self.policies.evaluate(
                rewritten_line, context, trace, deny_only=True, messages=messages, deadline=ends
            )
        decision = decide(command_line, evaluation, rewrite, recheck)
        decision = within_budget(decision, (evaluation, recheck), self.budget_s)
        if unread(command_line):
            decision = unread_decision(decision, command_line, self.config.fail_mode)
        return Outcome(command_line, evaluation, self._layer_state(decision))

    def _closed(
        self,
        command_line: CommandLine,
        context: Context,
        trace: bool,
        ends: float | None,
        messages: bool = True,
    ) -> Outcome | None:
        """The outcome of a command whose last quote is left open, judged with it closed
        (`engine/unclosed.py`), never rewritten; None when that is not the parse error, or when
        the text as typed is denied (that deny stands)."""
        from rtk_policy.engine.unclosed import closed_text
        from rtk_policy.policy.model import only_rules

        if ends is not None and time.monotonic() > ends:
            return None  # no time left to parse it again: judged as typed, within the budget
        closed = closed_text(command_line, lambda t: parse(t, context.transparent_prefixes))
        if closed is None:
            return None
        as_typed = self.policies.evaluate(
            command_line, context, trace, messages=messages, deadline=ends
        )
        if decide(command_line, as_typed, None).verdict == "deny":
            return None
        evaluation = self.policies.evaluate(
            closed, context, trace, messages=messages, deadline=ends
        )
        # no allow rule speaks for text bash rejects: the agent, which sees the open quote, decides
        # (Claude Code's read-only set does not cover a command it cannot parse either)
        evaluation = only_rules(evaluation, lambda rule: rule.decision != "allow")
        decision = decide(closed, evaluation, None)
        decision = within_budget(decision, (as_typed, evaluation), self.budget_s)
        return Outcome(closed, evaluation, self._layer_state(decision))

    def evaluate_tool(self, call: ToolCall, context: Context, trace: bool = False) -> Outcome:
        """Evaluate the rules on a tool call that is not a shell command (`tools:` of its kind),
        its paths spelt out against the context's cwd, and combine them: never a rewrite."""
        from rtk_policy.policy.facts import tool_call_value

        command_line = tool_command_line(call)
        tool = tool_call_value(call, context.cwd)
        evaluation = self.policies.evaluate_tool(command_line, tool, context, trace)
        decision = decide(command_line, evaluation, None)
        return Outcome(command_line, evaluation, self._layer_state(decision))

    def _layer_state(self, decision: Decision) -> Decision:
        """`decision` raised to at least ask when files did not load, with the layers' notices."""
        if not (self.problems or self.notices):
            return decision
        from rtk_policy.engine.layered import with_layer_state

        return with_layer_state(decision, self.problems, self.notices)

    def decide(self, text: str, context: Context, messages: bool = True) -> Decision:
        """The `Decision` for `text` under `context`; the rewritten command is re-checked for deny.

        `rtk` is a transparent wrapper in the shell stage, so `rtk rm -rf /` is still seen as `rm`.
        `messages`: as `evaluate` takes it.
        """
        return self.evaluate(text, context, messages=messages).decision


def _guard_configured(config: Config) -> None:
    """Tell the guarded list (`policy/guarded.py`) about the files the config moved (the audit log,
    its key), without importing it when there are none and it was never needed."""
    import sys

    chosen = (config.audit_path, getattr(config, "audit_key_file", ""))
    if any(chosen) or "rtk_policy.policy.guarded" in sys.modules:
        from rtk_policy.policy.guarded import remember_configured

        remember_configured(*chosen)


def tool_command_line(call: ToolCall) -> CommandLine:
    """The one-segment command line that stands for a tool call in the audit log and in CEL's
    `segment` and `command`: `NAME PATH…` (the program is the tool's name, the arguments its
    paths)."""
    argv = (call.name, *call.paths_written, *call.paths_read)
    text = " ".join(argv)
    segment = Segment(
        index=0, text=text, start=-1, end=-1, program=call.name, program_path=call.name,
        argv=argv, args=argv[1:], raw_words=argv, subcommand="", flags=(), env=(), wrappers=(),
        prefix="", command=text, suffix="", redirects=(), match_text=text, pipeline_index=0,
        pipeline_size=1, pipeline_before=(), pipeline_after=(), pipe_stderr=False,
        operator_before="", operator_after="", background=False, negated=False, depth=0,
        origin="top", parent=-1, dynamic_program=False, rewritable=False,
    )  # fmt: skip
    return CommandLine(
        text=text, segments=(segment,), parse_error=False, has_substitution=False,
        has_heredoc=False, has_here_string=False, has_file_redirect=False, unattestable=False,
        multiline=False, rewrite_refused=True, error="",
    )  # fmt: skip


def _valid_unicode(text: str) -> str:
    """`text` with lone surrogates replaced by U+FFFD (unchanged when it is valid Unicode)."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        import re

        return re.sub("[\ud800-\udfff]", "\ufffd", text)
    return text


def load_engine(
    policy_paths: list[str] | None = None,
    backend: str | None = None,
    config_path: str | None = None,
    cwd: str | None = None,
    use_cache: bool = True,
    strict: bool = False,
    system: bool = False,
    system_root: str = "/",
    store: bool | None = None,
) -> Engine:
    """Load the config and policies of the layers for `cwd` (`engine/layered.py`), or the
    `policy_paths` and `config_path` given instead, into an `Engine`; `use_cache` and `store`
    (read and write the compiled cache) as `load_policy_set` takes them.

    A file that does not load is left out and makes every answer at least ask; `strict` (check,
    test, replay) raises `PolicyLoadError` or `ConfigError` for it instead. `system` (a
    machine-wide install, `hook --system`): only what the agent's user cannot write — the shipped
    packs and the managed folder's policies and config (`config/managed.py`, under `system_root`),
    compiled through the root-owned system cache; no user or project file."""
    from rtk_policy.engine.layered import load_layered

    engine = load_layered(
        policy_paths, backend, config_path, cwd, use_cache, strict, system, system_root, store
    )
    _guard_configured(engine.config)
    return engine
