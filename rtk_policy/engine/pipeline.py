"""The pipeline of stages: text → shell.parse → policy evaluation → decision.

`Engine` holds a loaded policy set and the config; `Engine.decide` is what `rewrite`, `hook`,
`explain` and `serve` call.
"""

from __future__ import annotations

from rtk_policy.config.load import Config
from rtk_policy.decision import Decision, decide
from rtk_policy.engine.recheck import recheck_needed
from rtk_policy.engine.rewrite import replacements, splice
from rtk_policy.policy.model import Context, Evaluation
from rtk_policy.shell import CommandLine, parse
from rtk_policy.util import record


@record.frozen
class Outcome:
    """Everything known about one decision: the parse, the rule results and the verdict."""

    command_line: CommandLine
    evaluation: Evaluation
    decision: Decision


@record.mutable
class Engine:
    """A loaded policy set and config, ready to decide commands."""

    policies: object  #: a rtk_policy.policy.PolicySet
    config: Config

    def context(self, **fields: object) -> Context:
        """A `Context` carrying this engine's config plus the given request fields."""
        return Context(
            exclude_commands=self.config.exclude_commands,
            transparent_prefixes=self.config.transparent_prefixes,
            disabled_rules=self.config.disabled_rules,
            **fields,  # type: ignore[arg-type]
        )

    def evaluate(self, text: str, context: Context, trace: bool = False) -> Outcome:
        """Parse `text`, evaluate the policies on it and combine the results.

        `trace` (explain) lists every rule tried in the evaluation, not only those that matched.

        Text that is not valid Unicode (lone surrogates from undecodable bytes) is judged with those
        characters replaced, since a CEL engine cannot hold them, and is never rewritten.
        """
        clean = _valid_unicode(text)
        command_line = parse(clean, context.transparent_prefixes)
        evaluation = self.policies.evaluate(command_line, context, trace)  # type: ignore[attr-defined]
        changed = replacements(command_line, evaluation) if clean == text else None
        rewrite = splice(command_line, changed) if changed is not None else None
        recheck = None
        if rewrite is not None and rewrite != text and (trace or self._recheck_needed(
            command_line, evaluation, changed, rewrite, context
        )):  # fmt: skip
            # only an enforced deny of the rewritten command can change the decision (decision.py);
            # `recheck.py` says when none can be found
            rewritten_line = parse(rewrite, context.transparent_prefixes)
            recheck = self.policies.evaluate(  # type: ignore[attr-defined]
                rewritten_line, context, trace, deny_only=True
            )
        decision = decide(command_line, evaluation, rewrite, recheck)
        return Outcome(command_line, evaluation, decision)

    def _recheck_needed(self, *facts: object) -> bool:
        return recheck_needed(*facts, self.policies)

    def decide(self, text: str, context: Context) -> Decision:
        """The `Decision` for `text` under `context`; the rewritten command is re-checked for deny.

        `rtk` is a transparent wrapper in the shell stage, so `rtk rm -rf /` is still seen as `rm`.
        """
        return self.evaluate(text, context).decision


def _valid_unicode(text: str) -> str:
    """`text` with lone surrogates replaced by U+FFFD (unchanged when it is valid Unicode)."""
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
) -> Engine:
    """Load config and policies (search path or `policy_paths`) into an `Engine`."""
    from rtk_policy.config.load import load_config
    from rtk_policy.policy import load_policy_set, policy_search_path

    config = load_config(config_path=config_path, cwd=cwd)
    paths = policy_paths or policy_search_path(cwd=cwd)
    policies = load_policy_set(
        paths, backend=backend or config.backend or None, use_cache=use_cache
    )
    return Engine(policies=policies, config=config)
