"""The user's Claude Code `Bash(...)` permission rules (reference rtk-behaviour §4.1).

Read from, and merged as a union: `<project>/.claude/settings.json`, `<project>/.claude/settings.local.json`,
`$CLAUDE_CONFIG_DIR/settings.json` (default `~/.claude`) and its `settings.local.json`. `<project>` is the
nearest folder at or above cwd holding `.claude/`, else the git top level. A missing file is skipped; a
malformed one is reported on stderr and skipped.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import IO, Any

LISTS = ("deny", "ask", "allow")


def claude_config_dir() -> Path:
    """`$CLAUDE_CONFIG_DIR`, or `~/.claude`."""
    configured = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(configured).expanduser() if configured else Path.home() / ".claude"


def claude_project_dir(cwd: str | os.PathLike[str] | None = None) -> Path | None:
    """The nearest folder at or above `cwd` holding `.claude/`, else the git top level, else None."""
    try:
        here = Path(cwd or os.getcwd()).resolve()
    except OSError:
        return None
    folders = (here, *here.parents)
    for folder in folders:
        if (folder / ".claude").is_dir():
            return folder
    for folder in folders:
        if (folder / ".git").exists():
            return folder
    return None


def settings_files(cwd: str | os.PathLike[str] | None = None) -> list[Path]:
    """The four candidate settings files, in order (they may not exist)."""
    files: list[Path] = []
    project = claude_project_dir(cwd)
    if project is not None:
        files += [
            project / ".claude" / "settings.json",
            project / ".claude" / "settings.local.json",
        ]
    user = claude_config_dir()
    files += [user / "settings.json", user / "settings.local.json"]
    return files


def bash_pattern(rule: Any) -> str | None:
    """The text inside `Bash(...)`, or None when `rule` is not a Bash rule."""
    if not isinstance(rule, str) or not rule.startswith("Bash(") or not rule.endswith(")"):
        return None
    return rule[len("Bash(") : -1]


def rules_of(settings: Any) -> dict[str, list[str]]:
    """The Bash patterns of one parsed settings object, per list."""
    found: dict[str, list[str]] = {name: [] for name in LISTS}
    permissions = settings.get("permissions") if isinstance(settings, dict) else None
    if not isinstance(permissions, dict):
        return found
    for name in LISTS:
        entries = permissions.get(name)
        if isinstance(entries, list):
            found[name] = [p for p in map(bash_pattern, entries) if p is not None]
    return found


def read_settings(path: Path, stderr: IO[str] | None = None) -> Any:
    """The parsed JSON of `path`; None when missing or malformed (malformed: a warning on stderr)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as error:
        _warn(stderr, f"cannot read {path}: {error.strerror}")
        return None
    try:
        return json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError) as error:
        _warn(stderr, f"ignoring malformed Claude settings {path}: {error}")
        return None


def load_claude_rules(
    cwd: str | os.PathLike[str] | None = None, stderr: IO[str] | None = None
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """The merged `(deny, ask, allow)` Bash patterns of every Claude settings file, duplicates removed."""
    merged: dict[str, list[str]] = {name: [] for name in LISTS}
    seen: set[Path] = set()
    for path in settings_files(cwd):
        key = path.resolve() if path.exists() else path
        if key in seen:
            continue
        seen.add(key)
        for name, patterns in rules_of(read_settings(path, stderr)).items():
            merged[name] += [p for p in patterns if p not in merged[name]]
    return tuple(merged["deny"]), tuple(merged["ask"]), tuple(merged["allow"])


def _warn(stderr: IO[str] | None, message: str) -> None:
    stream = stderr if stderr is not None else sys.stderr
    try:
        stream.write(f"rtk-policy: warning: {message}\n")
    except (OSError, ValueError):
        pass
