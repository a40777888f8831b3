"""The agent process above the hook, read from `/proc`: its arguments and folder.

An agent matches its own permission rules against the command a hook hands back, so a rewrite
(`git push` → `rtk git push`) slips past any rule the hook never saw. Some of those rules live only
on the agent's command line (Claude Code's `--disallowedTools`, Gemini CLI's `--policy`, Copilot
CLI's `--deny-tool`). This module finds the nearest ancestor process that is the agent and hands
its argv to the agent's reader (`claude_cli`, `gemini_cli`, `copilot_cli`). Where that process
cannot be found or read (no `/proc`, another host, an http hook) the reader says so (`seen`
False), and rewrites stay off unless the user accepts the risk (`rewrite_unapproved = true`;
`engine/gating.py`).
"""

from __future__ import annotations

import os

from rtk_policy.util import environ, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

MAX_DEPTH = 6  #: ancestors looked at (hook → shell → agent, with room for wrappers)


@record.frozen
class CliRules:
    """The shell patterns of an agent's command line, and whether that command line was read."""

    seen: bool = False  #: True when the agent's process was found and its arguments read
    deny: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    allow: tuple[str, ...] = ()
    why: str = ""  #: where the rules came from, or why they could not be read
    keep: tuple[str, ...] = ()  #: `exclude_commands` entries: commands never rewritten


def agent_process(
    start_pid: int, is_agent: Callable[[list[str]], bool]
) -> tuple[int, list[str], str] | None:
    """(pid, argv, cwd) of the nearest ancestor of `start_pid` whose argv `is_agent` accepts."""
    pid = start_pid
    for _ in range(MAX_DEPTH):
        pid = parent_pid(pid)
        if pid <= 1:
            return None
        argv = process_argv(pid)
        if argv is None:
            return None
        if is_agent(argv):
            try:
                cwd = os.readlink(f"/proc/{pid}/cwd")
            except OSError:
                cwd = ""
            return pid, argv, cwd
    return None


def host_argv(
    start_pid: int | None, is_agent: Callable[[list[str]], bool], name: str
) -> tuple[int, list[str], str] | CliRules:
    """The agent process above `start_pid` (None: this process; 0: unknown), or the unseen
    `CliRules` saying why it could not be read. `name` names the agent in that reason."""
    if start_pid == 0:
        return CliRules(why="the process that asked is not known (e.g. an http hook)")
    found = agent_process(os.getpid() if start_pid is None else start_pid, is_agent)
    if found is None:
        return CliRules(why=f"no {name} process found above the hook")
    return found


def program_names(argv: list[str], depth: int = 2) -> list[str]:
    """The basenames of the first `depth` words (the program, or an interpreter and its script)."""
    return [os.path.basename(word) for word in argv[:depth]]


def options(args: list[str]) -> list[tuple[str, list[str]]]:
    """(option, values) pairs: `--opt=value`, or `--opt` and the words after it up to the next
    option (variadic options read that way; a reader of a one-value option takes the first)."""
    found: list[tuple[str, list[str]]] = []
    for word in args:
        if word == "--":
            break
        if word.startswith("--"):
            option, sep, value = word.partition("=")
            found.append((option, [value] if sep else []))
        elif word.startswith("-") and word != "-":
            found.append((word, []))
        elif found:
            found[-1][1].append(word)
    return found


def resolve(path: str, cwd: str) -> str:
    """`path` of the agent's command line as the agent opens it: `~` expanded, relative to the
    agent's folder `cwd`."""
    path = environ.expand_user(path)
    return os.path.normpath(os.path.join(cwd, path)) if cwd else path


def parent_pid(pid: int) -> int:
    """The parent pid of `pid` from `/proc/PID/stat` (0 when unreadable)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
    except OSError:
        return 0
    fields = data[data.rfind(b")") + 2 :].split()
    try:
        return int(fields[1])
    except (IndexError, ValueError):
        return 0


def process_argv(pid: int) -> list[str] | None:
    """The argv of `pid` from `/proc/PID/cmdline` (None when unreadable or empty)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    return [part.decode("utf-8", "surrogateescape") for part in data.split(b"\0")[:-1]] or None
