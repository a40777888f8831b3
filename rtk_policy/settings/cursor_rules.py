"""Cursor's own shell permission rules, as Claude Code `Bash(…)` patterns (deny, allow; Cursor has
no ask list).

Cursor's CLI reads `permissions.allow` and `permissions.deny` from `~/.cursor/cli-config.json`
(`$XDG_CONFIG_HOME/cursor/cli-config.json` when that variable is set, on Linux) and from every
`.cursor/cli.json` between the git top level and the working folder (its documented behaviour:
https://docs.cursor.com/en/cli/reference/permissions; no offline CLI to check it against). A shell
entry is `Shell(COMMAND)`, COMMAND being the first word of the command line (`Shell(git)` allows
`git` and every git subcommand): what a Claude pattern without `*` means, so it is taken as it is;
`Shell(*)` and `Shell(**)` cover every command. Deny rules win over allow rules, as in Cursor.
"""

from __future__ import annotations

import os

from rtk_policy.config.paths import folders_up
from rtk_policy.settings.claude_rules import read_settings
from rtk_policy.util import environ

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Any

LISTS = ("deny", "allow")


def user_config() -> str:
    """The user's `cli-config.json`."""
    xdg = environ.get("XDG_CONFIG_HOME")
    if xdg and os.path.isfile(os.path.join(xdg, "cursor", "cli-config.json")):
        return os.path.join(xdg, "cursor", "cli-config.json")
    return os.path.join(environ.expand_user("~"), ".cursor", "cli-config.json")


def folders_from_top(cwd: str) -> list[str]:
    """The folders from the git top level above `cwd` (or `cwd` alone) down to `cwd`."""
    try:
        folders = folders_up(cwd)
    except OSError:
        return []
    top = next(
        (i for i, folder in enumerate(folders) if os.path.exists(os.path.join(folder, ".git"))), 0
    )
    return list(reversed(folders[: top + 1]))


def project_configs(cwd: str) -> list[str]:
    """The `.cursor/cli.json` candidates from the git top level (or `cwd` alone) down to `cwd`."""
    return [os.path.join(folder, ".cursor", "cli.json") for folder in folders_from_top(cwd)]


def rule_paths(cwd: str) -> tuple[str, ...]:
    """Every path whose content decides the rules for `cwd` (for a stat check of a memo)."""
    markers = [os.path.join(folder, ".git") for folder in folders_up(cwd)]
    return (user_config(), *project_configs(cwd), *markers)


def shell_pattern(entry: Any) -> str | None:
    """`Shell(x)` → x; `Shell(*)`, `Shell(**)` and a bare `Shell` → `*`; None for other tools."""
    if entry == "Shell":
        return "*"
    if not isinstance(entry, str) or not entry.startswith("Shell(") or not entry.endswith(")"):
        return None
    inner = entry[len("Shell(") : -1].strip()
    return "*" if inner in ("", "*", "**") else inner


def load_cursor_rules(cwd: str, stderr: IO[str] | None = None) -> dict[str, list[str]]:
    """The merged deny and allow patterns of the user's and the project's Cursor configs."""
    merged: dict[str, list[str]] = {"deny": [], "ask": [], "allow": [], "keep": []}
    seen: set[str] = set()
    for path in (user_config(), *project_configs(cwd)):
        key = os.path.realpath(path)
        if key in seen:
            continue
        seen.add(key)
        settings = read_settings(path, stderr)
        permissions = settings.get("permissions") if isinstance(settings, dict) else None
        for name in LISTS:
            entries = permissions.get(name) if isinstance(permissions, dict) else None
            for entry in entries if isinstance(entries, list) else ():
                pattern = shell_pattern(entry)
                if pattern is not None and pattern not in merged[name]:
                    merged[name].append(pattern)
    return merged
