"""The user's Claude Code `Bash(...)` permission rules (reference rtk-behaviour §4.1).

Read from, and merged as a union: Claude Code's managed settings (`managed-settings.json` and the
`managed-settings.d/*.json` drop-ins in `/etc/claude-code` on Linux, `/Library/Application
Support/ClaudeCode` on macOS, or the folder `$CLAUDE_CODE_MANAGED_SETTINGS_PATH` names; and the
server-managed settings Claude Code keeps in `<config dir>/remote-settings.json`),
`<project>/.claude/settings.json`, `<project>/.claude/settings.local.json`,
`$CLAUDE_CONFIG_DIR/settings.json` (default `~/.claude`) and its `settings.local.json`.
`<project>` is the nearest folder at or above cwd holding `.claude/`, else the git top level. A
missing file is skipped; a malformed one is reported on stderr and skipped. The project files'
allow rules count only in a workspace Claude Code trusts (`claude_trust`). The rules of Claude
Code's command line (`--disallowedTools`, `--settings`) are read by `claude_cli`.
"""

from __future__ import annotations

import os
import sys

from rtk_policy.config.paths import folders_up
from rtk_policy.util import environ, json_codec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import IO, Any

LISTS = ("deny", "ask", "allow")


def claude_config_dir() -> str:
    """`$CLAUDE_CONFIG_DIR`, or `~/.claude`."""
    configured = environ.get("CLAUDE_CONFIG_DIR")
    if configured:
        return environ.expand_user(configured)
    return os.path.join(environ.expand_user("~"), ".claude")


def claude_project_dir(cwd: str | os.PathLike[str] | None = None) -> str | None:
    """The nearest folder at or above `cwd` holding `.claude/` (not the user's own, `~/.claude`:
    that makes no project of the home folder), else the git top level, else None."""
    try:
        folders = folders_up(cwd)
    except OSError:
        return None
    user = os.path.realpath(claude_config_dir())
    for folder in folders:
        marker = os.path.join(folder, ".claude")
        if os.path.isdir(marker) and os.path.realpath(marker) != user:
            return folder
    for folder in folders:
        if os.path.exists(os.path.join(folder, ".git")):
            return folder
    return None


def agent_project_dir(agent: str, cwd: str, find: Callable[[str], str | None] | None = None) -> str:
    """The project folder of a request from `cwd`: `$CLAUDE_PROJECT_DIR` for Claude Code, else
    the Claude project folder of `cwd` (`find`, `claude_project_dir` by default: its `.claude/`
    or git top level), else `cwd` itself; "" without a `cwd`."""
    env = environ.get("CLAUDE_PROJECT_DIR", "") if agent == "claude" else ""
    if env:
        return env
    folder = (find or claude_project_dir)(cwd) if cwd else None
    return str(folder) if folder is not None else cwd


def managed_settings_dir() -> str:
    """The folder of Claude Code's managed settings on this system."""
    configured = environ.get("CLAUDE_CODE_MANAGED_SETTINGS_PATH")
    if configured:
        return configured
    if sys.platform == "darwin":
        return "/Library/Application Support/ClaudeCode"
    return "/etc/claude-code"


def managed_settings_files() -> list[str]:
    """`managed-settings.json`, its drop-ins (`managed-settings.d/*.json`, by name) and the cached
    server-managed settings: the sources an administrator sets (they may not exist)."""
    folder = managed_settings_dir()
    drop_ins = os.path.join(folder, "managed-settings.d")
    try:
        names = sorted(n for n in os.listdir(drop_ins) if n.endswith(".json") and n[:1] != ".")
    except OSError:
        names = []
    files = [os.path.join(folder, "managed-settings.json")]
    files += [os.path.join(drop_ins, name) for name in names]
    files.append(os.path.join(claude_config_dir(), "remote-settings.json"))
    return files


def settings_files(cwd: str | os.PathLike[str] | None = None) -> list[str]:
    """Every candidate settings file, managed ones first (they may not exist)."""
    return [path for path, _ in scoped_settings_files(cwd)]


def scoped_settings_files(cwd: str | os.PathLike[str] | None = None) -> list[tuple[str, bool]]:
    """(path, project-scoped) of every candidate settings file, managed ones first. A project
    file that is one of the user's own (Claude Code started in the home folder) is left out: the
    user's entry stands for it."""
    user = claude_config_dir()
    user_files = [os.path.join(user, "settings.json"), os.path.join(user, "settings.local.json")]
    files = [(path, False) for path in managed_settings_files()]
    project = claude_project_dir(cwd)
    if project is not None:
        claude = os.path.join(project, ".claude")
        mine = {os.path.realpath(path) for path in user_files}
        for name in ("settings.json", "settings.local.json"):
            path = os.path.join(claude, name)
            if os.path.realpath(path) not in mine:
                files.append((path, True))
    return files + [(path, False) for path in user_files]


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


def read_settings(path: str | os.PathLike[str], stderr: IO[str] | None = None) -> Any:
    """The parsed JSON of `path`; None when missing or malformed (malformed: a warning on
    stderr)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return None
    except OSError as error:
        _warn(stderr, f"cannot read {path}: {error.strerror}")
        return None
    try:
        return json_codec.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError) as error:
        _warn(stderr, f"ignoring malformed settings {path}: {error}")
        return None


#: The largest agent rule file read (a bigger one is not a rule file a person wrote).
RULE_FILE_LIMIT = 1 << 20


def read_rule_file(path: str, limit: int = RULE_FILE_LIMIT) -> bytes:
    """The bytes of the rule file `path` (a symlink is followed, as the agent follows it).
    Raises OSError: FileNotFoundError when missing, and also for something that is not a regular
    file (a FIFO would block the hook) or a file larger than `limit`."""
    import stat

    with open(path, "rb", opener=_nonblocking) as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path} is not a regular file")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise OSError(f"{path} is larger than {limit} bytes")
    return data


def _nonblocking(path: str, flags: int) -> int:
    return os.open(path, flags | getattr(os, "O_NONBLOCK", 0))


def load_claude_rules(
    cwd: str | os.PathLike[str] | None = None, stderr: IO[str] | None = None
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """The merged `(deny, ask, allow)` Bash patterns of every Claude settings file, duplicates
    removed. The allow patterns of the project's files count only in a workspace Claude Code
    trusts (`claude_trust`), as Claude Code drops them otherwise; their deny and ask always do."""
    merged: dict[str, list[str]] = {name: [] for name in LISTS}
    seen: set[str] = set()
    for path, project_scoped in scoped_settings_files(cwd):
        key = os.path.realpath(path) if os.path.exists(path) else path
        if key in seen:
            continue
        seen.add(key)
        found = rules_of(read_settings(path, stderr))
        if project_scoped and found["allow"] and not _trusted(path):
            found["allow"] = []
        for name, patterns in found.items():
            merged[name] += [p for p in patterns if p not in merged[name]]
    return tuple(merged["deny"]), tuple(merged["ask"]), tuple(merged["allow"])


def _trusted(settings_path: str) -> bool:
    """Whether Claude Code trusts the workspace of a project's `.claude/<settings file>`."""
    from rtk_policy.settings.claude_trust import workspace_trusted

    return workspace_trusted(os.path.dirname(os.path.dirname(settings_path)))


def warn(stderr: IO[str] | None, message: str) -> None:
    """One `rtk-policy: warning:` line on `stderr` (default: sys.stderr); never raises."""
    _warn(stderr, message)


def _warn(stderr: IO[str] | None, message: str) -> None:
    stream = stderr if stderr is not None else sys.stderr
    try:
        stream.write(f"rtk-policy: warning: {message}\n")
    except (OSError, ValueError):
        pass
