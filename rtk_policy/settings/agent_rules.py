"""The host agent's own shell permission rules, for the `claude` CEL variable.

One variable for every agent, so the same policies (`policies/claude-permissions.yaml`) apply each
host's rules: `claude.deny`, `claude.ask` and `claude.allow` hold Claude Code `Bash(…)` patterns,
read from the settings of the agent the hook answers — Claude Code's for Claude Code, Copilot CLI
(which also reads `.claude/settings*.json`) and Codex (which has no such rules of its own),
Gemini CLI's for Gemini (`gemini_rules`), Cursor's for Cursor (`cursor_rules`). So a host's allow
rule auto-approves a rewrite of a command it allows, and its deny rule is enforced on the command
and on the rewritten command, never slipped past by a rewrite.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO

#: Agents whose rules are Claude Code's `Bash(…)` permission rules.
CLAUDE_RULE_AGENTS = ("claude", "copilot", "codex")
#: How policy messages name each host's rules.
RULE_OWNERS = {"gemini": "Gemini CLI", "cursor": "Cursor"}

Rules = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]


def load_agent_rules(agent: str, cwd: str | None, stderr: IO[str] | None = None) -> Rules:
    """The `(deny, ask, allow, keep)` of `agent`'s own rules for a call from `cwd`: patterns, and
    `exclude_commands` entries for the commands a host rule we cannot write as a pattern would
    judge itself (a rewrite must leave them as typed; Gemini's `commandRegex` rules)."""
    import os

    if agent == "gemini":
        from rtk_policy.settings.gemini_rules import load_gemini_rules

        found = load_gemini_rules(cwd or os.getcwd(), stderr)
    elif agent == "cursor":
        from rtk_policy.settings.cursor_rules import load_cursor_rules

        found = load_cursor_rules(cwd or os.getcwd(), stderr)
    else:
        from rtk_policy.settings.claude_rules import load_claude_rules

        return (*load_claude_rules(cwd, stderr), ())
    return tuple(found["deny"]), tuple(found["ask"]), tuple(found["allow"]), tuple(found["keep"])


def rule_paths(agent: str, cwd: str) -> tuple[str, ...]:
    """The paths whose content decides `agent`'s rules for `cwd` (Gemini and Cursor only)."""
    if agent == "gemini":
        from rtk_policy.settings.gemini_rules import rule_paths as gemini_paths

        return gemini_paths(cwd)
    from rtk_policy.settings.cursor_rules import rule_paths as cursor_paths

    return cursor_paths(cwd)
