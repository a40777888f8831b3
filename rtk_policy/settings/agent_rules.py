"""The host agent's own shell permission rules, for the `claude` CEL variable.

One variable for every agent, so the same policies (`policies/claude-permissions.yaml`) apply each
host's rules: `claude.deny`, `claude.ask` and `claude.allow` hold Claude Code `Bash(…)` patterns,
read from the settings of the agent the hook answers — Claude Code's for Claude Code, Copilot CLI
(which also reads `.claude/settings*.json`) and Codex (with its execpolicy rules, `codex_rules`),
Gemini CLI's for Gemini (`gemini_rules`), Cursor's for Cursor (`cursor_rules`) — and from the
agent's own command line (`command_line_rules`: Claude Code, Gemini CLI, Copilot CLI). So a host's
allow rule auto-approves a rewrite of a command it allows, and its deny rule is enforced on the
command and on the rewritten command, never slipped past by a rewrite. `keep` holds
`exclude_commands` entries: commands a host rule judges itself (an ask rule, a rule we cannot
write as a pattern, a file we cannot read), left as typed so that rule applies to them.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO

    from rtk_policy.settings.host_process import CliRules

#: Agents whose rules are Claude Code's `Bash(…)` permission rules.
CLAUDE_RULE_AGENTS = ("claude", "copilot", "codex")
#: Agents with rule files of their own, read by `own_rules` (beside Claude Code's for Codex).
OWN_RULE_AGENTS = ("gemini", "cursor", "codex")
#: Agents whose command line holds rules (`command_line_rules`): unread, no rewrite is handed over.
CLI_RULE_AGENTS = ("claude", "gemini", "copilot")
#: How policy messages name each host's rules.
RULE_OWNERS = {"gemini": "Gemini CLI", "cursor": "Cursor"}
#: An `exclude_commands` entry matching every command (a bare `^` is ignored there, as by RTK).
EVERY_COMMAND = "^(?:)"

Rules = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]


def load_agent_rules(agent: str, cwd: str | None, stderr: IO[str] | None = None) -> Rules:
    """The `(deny, ask, allow, keep)` of `agent`'s own rule files for a call from `cwd`: patterns,
    and `exclude_commands` entries for the commands a rewrite must leave as typed."""
    claude: tuple[tuple[str, ...], ...] = ((), (), ())
    if agent in CLAUDE_RULE_AGENTS or agent not in OWN_RULE_AGENTS:
        from rtk_policy.settings.claude_rules import load_claude_rules

        claude = load_claude_rules(cwd, stderr)
    if agent not in OWN_RULE_AGENTS:
        return (*claude, ())  # type: ignore[return-value]
    return merge_rules((*claude, ()), own_rules(agent, cwd, stderr))  # type: ignore[arg-type]


def own_rules(agent: str, cwd: str | None, stderr: IO[str] | None = None) -> Rules:
    """The `(deny, ask, allow, keep)` of the rule files of Gemini CLI, Cursor or Codex."""
    import os

    where = cwd or os.getcwd()
    if agent == "gemini":
        from rtk_policy.settings.gemini_rules import load_gemini_rules

        found = load_gemini_rules(where, stderr)
    elif agent == "cursor":
        from rtk_policy.settings.cursor_rules import load_cursor_rules

        found = load_cursor_rules(where, stderr)
    else:
        from rtk_policy.settings.codex_rules import load_codex_rules

        found = load_codex_rules(where, stderr)
    return tuple(found["deny"]), tuple(found["ask"]), tuple(found["allow"]), tuple(found["keep"])


def merge_rules(*parts: Rules) -> Rules:
    """The `(deny, ask, allow, keep)` of several sources, in order, duplicates removed."""
    return tuple(  # type: ignore[return-value]
        tuple(dict.fromkeys(item for part in parts for item in part[index])) for index in range(4)
    )


def command_line_rules(agent: str, host_pid: int | None, stderr: IO[str] | None = None) -> CliRules:
    """The rules on the command line of the `agent` process above `host_pid` (`host_process`;
    None: this process; 0: unknown); an unseen `CliRules` for an agent without such rules."""
    if agent == "claude":
        from rtk_policy.settings.claude_cli import host_rules

        return host_rules(host_pid)
    if agent == "gemini":
        from rtk_policy.settings.gemini_cli import host_rules as gemini_host_rules

        return gemini_host_rules(host_pid, stderr)
    if agent == "copilot":
        from rtk_policy.settings.copilot_cli import host_rules as copilot_host_rules

        return copilot_host_rules(host_pid)
    from rtk_policy.settings.host_process import CliRules

    return CliRules(why=f"{agent} has no command-line rules")


def keep_entry(prefix: str) -> str:
    """The `exclude_commands` entry for the commands starting with the words `prefix`."""
    import re

    return "^" + re.escape(prefix) + r"(?:$|[ \t\n])" if prefix.startswith("^") else prefix


def rule_paths(agent: str, cwd: str) -> tuple[str, ...]:
    """The paths whose content decides `agent`'s own rule files for `cwd` (`OWN_RULE_AGENTS`)."""
    if agent == "gemini":
        from rtk_policy.settings.gemini_rules import rule_paths as gemini_paths

        return gemini_paths(cwd)
    if agent == "codex":
        from rtk_policy.settings.codex_rules import rule_paths as codex_paths

        return codex_paths(cwd)
    from rtk_policy.settings.cursor_rules import rule_paths as cursor_paths

    return cursor_paths(cwd)
