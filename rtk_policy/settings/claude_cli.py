"""The permission rules on Claude Code's own command line, read from the process that runs the hook.

Claude Code matches its rules against the command a hook hands back, so a rewrite (`git push` →
`rtk git push`) slips past any deny rule the hook never saw. The settings files are read by
`claude_rules`; this module reads the rest: `--disallowedTools` / `--disallowed-tools`,
`--allowedTools` / `--allowed-tools` and `--settings FILE-OR-JSON` of the nearest ancestor process
that is Claude Code (the hook's parent, or its shell's parent; `host_process`). Where that process
cannot be found or read (no `/proc`, another host, the http hook) the answer says so (`seen`
False), and rewrites stay off unless the user accepts the risk (`rewrite_unapproved = true`).
"""

from __future__ import annotations

import os

from rtk_policy.settings.host_process import CliRules, host_argv, options
from rtk_policy.util import environ, json_codec

__all__ = ["CliRules", "host_rules", "is_claude_code", "rules_of_argv", "split_tools"]

#: options holding rules: Claude Code's spelling and commander's kebab-case alias
_DENY_OPTIONS = ("--disallowedTools", "--disallowed-tools")
_ALLOW_OPTIONS = ("--allowedTools", "--allowed-tools")
_SETTINGS_OPTION = "--settings"


def host_rules(start_pid: int | None = None) -> CliRules:
    """The command-line rules of the Claude Code process above `start_pid` (default: this process;
    0: unknown, nothing is read)."""
    found = host_argv(start_pid, is_claude_code, "Claude Code")
    if isinstance(found, CliRules):
        return found
    pid, argv, cwd = found
    deny, ask, allow = rules_of_argv(argv, cwd)
    return CliRules(True, deny, ask, allow, f"the command line of Claude Code (pid {pid})")


def is_claude_code(argv: list[str]) -> bool:
    """True for Claude Code's native binary (`claude …`, a `…/claude/versions/N` path) or its Node
    form (`node …/@anthropic-ai/claude-code/cli.js …`)."""
    heads = argv[:2]
    for word in heads:
        name = os.path.basename(word)
        if name == "claude" or "claude-code" in word or "/claude/versions/" in word:
            return True
    return False


def rules_of_argv(
    argv: list[str], cwd: str = ""
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """The (deny, ask, allow) Bash patterns of a Claude Code command line."""
    from rtk_policy.settings.claude_rules import bash_pattern, read_settings, rules_of

    deny: list[str] = []
    ask: list[str] = []
    allow: list[str] = []
    for option, values in options(argv[1:]):
        if option in _DENY_OPTIONS or option in _ALLOW_OPTIONS:
            into = deny if option in _DENY_OPTIONS else allow
            patterns = (bash_pattern(rule) for value in values for rule in split_tools(value))
            into.extend(p for p in patterns if p is not None)
        elif option == _SETTINGS_OPTION and values:
            settings = _settings_value(values[0], cwd, read_settings)
            found = rules_of(settings)
            deny += found["deny"]
            ask += found["ask"]
            allow += found["allow"]
    return tuple(dict.fromkeys(deny)), tuple(dict.fromkeys(ask)), tuple(dict.fromkeys(allow))


def split_tools(value: str) -> list[str]:
    """The tool rules of one option value: split at commas and blanks outside parentheses
    (`"Bash(git push:*) Edit,Read"` → three rules)."""
    rules: list[str] = []
    current: list[str] = []
    depth = 0
    for char in value:
        if char == "(":
            depth += 1
        elif char == ")" and depth:
            depth -= 1
        if depth == 0 and (char == "," or char.isspace()):
            if current:
                rules.append("".join(current))
            current = []
            continue
        current.append(char)
    if current:
        rules.append("".join(current))
    return rules


def _settings_value(value: str, cwd: str, read_settings: object) -> object:
    """The settings object of a `--settings` value: inline JSON, or a file (relative to `cwd`)."""
    text = value.strip()
    if text.startswith("{"):
        try:
            return json_codec.loads(text)
        except ValueError:
            return None
    path = os.path.join(cwd, environ.expand_user(text)) if cwd else environ.expand_user(text)
    return read_settings(path)  # type: ignore[operator]
