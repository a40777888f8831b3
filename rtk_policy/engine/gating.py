"""Whether a selected rewrite reaches the host: the rewrite is dropped, the decision is kept.

The engine picks a rewrite as RTK would (`rtk-policy rewrite --batch` reports it as is); before
a hook hands it to an agent, four questions decide whether the agent runs `rtk …` or the command
as typed:

1. **Is RTK there?** `rewrite = "never"` drops every rewrite; `"auto"` (the default) keeps one
   only when an `rtk` executable of a usable version is on the agent's PATH (`rtk_probe`).
2. **Must the user approve it?** A command a rule asks about is shown and run as typed: the user
   approves what runs, and an ask rule the hook cannot see still matches it.
3. **Did a rule approve it?** (Claude Code, by default.) Claude Code matches its own permission
   rules against the rewritten text, so `rtk git push` escapes a `Bash(git push:*)` deny rule.
   A rewrite is therefore handed over only with an allow (the user's allow rules, or Claude
   Code's read-only set), never with no decision, where Claude Code would apply rules the hook
   may not have read.
4. **Were all of the agent's rules read?** (Claude Code, Gemini CLI, Copilot CLI.) Even with an
   allow, the agent checks its deny rules on the rewritten text. The hook reads the agent's
   settings and policy files and its command line (`settings.host_process`: Claude Code's
   `--disallowedTools`, Gemini's `--policy`, Copilot's `--deny-tool`); where the command line
   cannot be read (no `/proc`, the agent's process not found), no rewrite.

`rewrite_unapproved = true` turns 3 and 4 off (RTK's own behaviour): a command-line deny rule
may then be bypassed.
"""

from __future__ import annotations

from rtk_policy.util import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rtk_policy.config.load import Config
    from rtk_policy.decision import Decision

#: gates of this module (`Decision.gate`): why a rewrite the policies selected was not handed over
GATE_OFF, GATE_NO_RTK, GATE_ASKED = "rewrite-off", "rtk-absent", "asked"
GATE_UNAPPROVED, GATE_UNSEEN = "unapproved", "unseen-rules"


def host_decision(
    decision: Decision,
    config: Config | None,
    agent: str,
    rules_seen: bool,
    path_env: str | None = None,
) -> Decision:
    """`decision` as the hook hands it to `agent`: its rewrite dropped (and `gate` saying why) when
    one of the module's four questions says no. `rules_seen`: the agent's command line was
    read."""
    if getattr(decision, "rewritten", None) is None:
        return decision
    gate = rewrite_gate(decision, config, agent, rules_seen, path_env)
    return record.evolve(decision, rewritten=None, gate=gate) if gate else decision


def rewrite_gate(
    decision: object, config: object, agent: str, rules_seen: bool, path_env: str | None = None
) -> str:
    """The gate that stops `decision`'s rewrite reaching the host, "" when none does."""
    if getattr(decision, "verdict", "") == "ask":
        return GATE_ASKED
    from rtk_policy.settings.agent_rules import CLI_RULE_AGENTS  # agents with command-line rules

    if agent in CLI_RULE_AGENTS and not getattr(config, "rewrite_unapproved", False):
        if agent == "claude" and getattr(decision, "verdict", "") != "allow":
            return GATE_UNAPPROVED
        if not rules_seen:
            return GATE_UNSEEN
    return availability_gate(config, path_env)


def availability_gate(config: object, path_env: str | None = None) -> str:
    """GATE_OFF or GATE_NO_RTK when the config's `rewrite` mode keeps rewrites off, else ""."""
    from rtk_policy.engine.rtk_probe import rewriting_on

    on, why = rewriting_on(getattr(config, "rewrite", "auto"), path_env)
    return "" if on else why
