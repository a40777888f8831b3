"""Where each agent keeps its hooks, and the shape of our entry there (reference agent-hooks §1.1,
§1.8)."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

from rtk_policy.settings.claude_rules import claude_config_dir
from rtk_policy.settings.hook_command import guarded
from rtk_policy.util import record


@record.frozen
class Target:
    """One agent's hook settings: the file, the event list, and how a handler names its command."""

    agent: str
    path: Path
    event: str  #: key under "hooks"
    matcher: str | None  #: the matcher of our group; None = the event holds handlers directly
    command_key: str  #: the handler field holding the command line
    handler_extra: tuple[tuple[str, object], ...] = ()  #: other fields of our handler, in order
    top_defaults: tuple[tuple[str, object], ...] = ()  #: keys a new file starts with (e.g. version)
    #: the handler's timeout field and the value `init` writes (in the agent's own unit)
    timeout: tuple[str, int] | None = None
    #: the handler field that makes the agent block when the hook fails, and its blocking value
    block_on_failure: tuple[str, object] | None = None
    tool: str | None = None  #: a tool our group must run on (default: the matcher itself)

    @property
    def covers(self) -> str | None:
        """The tool whose hooks ours is among (None: the event holds handlers directly)."""
        return self.tool or self.matcher


#: Per agent, the matcher of the entry for its file-writing tools, next to the shell entry in the
#: same file. Copilot: none needed, its entry has no matcher and sees every tool. Cursor: none,
#: `afterFileEdit` cannot block and its `preToolUse` tool names are not confirmed (README).
FILE_TOOL_MATCHERS = {
    "claude": "Write|Edit|MultiEdit|NotebookEdit",
    "codex": "apply_patch",
    "gemini": "write_file|replace",
}


def with_file_tools(shell: Target) -> tuple[Target, ...]:
    """The shell target and, where the agent has one, the entry for its file tools."""
    matcher = FILE_TOOL_MATCHERS.get(shell.agent)
    if matcher is None:
        return (shell,)
    files = record.evolve(shell, matcher=matcher, tool=matcher.split("|", 1)[0])
    return (shell, files)


def targets(agent: str, global_: bool, cwd: str | None = None) -> tuple[Target, ...]:
    """Every entry of ours in `agent`'s settings: the shell one, then its file tools'."""
    return with_file_tools(target(agent, global_, cwd))


def older_targets(agent: str, global_: bool, cwd: str | None = None) -> tuple[Target, ...]:
    """Where older versions of `init` wrote `agent`'s entry instead of `target` (Claude Code's
    project install: the committed `.claude/settings.json`); () when nowhere else."""
    if agent != "claude" or global_:
        return ()
    shell = target(agent, global_, cwd)
    return (record.evolve(shell, path=shell.path.with_name("settings.json")),)


def installed_targets(agent: str, global_: bool, cwd: str | None = None) -> tuple[Target, ...]:
    """Every file where an entry of ours for `agent` may be (the shell target of each): the
    current one, then the older ones (`older_targets`)."""
    return (target(agent, global_, cwd), *older_targets(agent, global_, cwd))


#: Seconds an agent waits for our hook before giving up on it (their defaults: 30 to 600 s). The
#: hook itself gives up on a stdin that never closes after 5 s and on the server after 10 s.
TIMEOUT_SECONDS = 30


def hook_command(agent: str, fail_mode: str = "open") -> str:
    """The in-process hook: `<python> -P <abs path of rtk_policy/__main__.py> hook AGENT`, guarded
    so that a broken install answers per `fail_mode` (`hook_command.guarded`).

    Not the console script: the one pip writes imports `re` (and `enum`) to tidy its `argv[0]`,
    ~7 ms of a cold hook that otherwise needs neither; nor `python -m rtk_policy`, whose `runpy`
    costs ~4.7 ms (`benchmarks/RESULTS.md`, session 18). `-P` keeps the package's own folder off
    `sys.path`, where its modules would shadow top-level ones.
    """
    main = str(Path(__file__).resolve().parent.parent / "__main__.py")
    words = [sys.executable, "-P", main, "hook", agent]
    return guarded(words, [("-x", sys.executable), ("-f", main)], agent, fail_mode)


def thin_client_command(agent: str, fail_mode: str = "open") -> str:
    """`<python> -S -I <abs path of rtk_policy/serve/client.py> AGENT`, the resident engine's thin
    client, guarded so that a broken install answers per `fail_mode` (`hook_command.guarded`)."""
    client = str(client_path())
    words = [sys.executable, "-S", "-I", client, agent]
    body = str(client_path().with_name("thin_client.py"))  # the client's code (`client.py` runs it)
    return guarded(words, [("-x", sys.executable), ("-f", client), ("-f", body)], agent, fail_mode)


def client_path() -> Path:
    """The absolute path of the thin client, `rtk_policy/serve/client.py` of this install."""
    return Path(__file__).resolve().parent.parent / "serve" / "client.py"


def thin_client_unavailable() -> str:
    """Why the thin client cannot be this install's hook ("" when it can).

    It needs Unix sockets and `posix_spawn`, and runs with `-I`, which hides the user site-packages:
    an install whose dependencies live there could not decide in-process when no server answers.
    """
    import site
    import socket

    import tree_sitter  # a dependency the in-process hook imports

    if os.name != "posix" or not hasattr(socket, "AF_UNIX") or not hasattr(os, "posix_spawn"):
        return "this system has no Unix sockets or posix_spawn"
    if not client_path().is_file():
        return f"{client_path()} is missing"
    user_site = site.getusersitepackages() if site.ENABLE_USER_SITE else ""
    dependency = str(Path(tree_sitter.__file__).resolve())
    if user_site and dependency.startswith(str(Path(user_site).resolve())):
        return "its dependencies are in the user site-packages, which `python -I` does not read"
    return ""


def _quote(word: str) -> str:
    return word if os.name == "nt" and " " not in word else shlex.quote(word)


def _home(env: str, default: str) -> Path:
    value = os.environ.get(env)
    return Path(value).expanduser() if value else Path.home() / default


def target(agent: str, global_: bool, cwd: str | None = None) -> Target:
    """The settings target of `agent`, user-wide (`global_`) or for the project in `cwd`."""
    here = Path(cwd or os.getcwd())
    if agent == "claude":
        # a project's: the per-user file Claude Code keeps out of git, not the team's settings.json
        # (the entry holds this machine's absolute paths)
        path = (
            Path(claude_config_dir()) / "settings.json"
            if global_
            else here / ".claude" / "settings.local.json"
        )
        return Target(
            agent,
            path,
            "PreToolUse",
            "Bash",
            "command",
            (("type", "command"),),
            timeout=("timeout", TIMEOUT_SECONDS),
            block_on_failure=("onFailure", "block"),
        )
    if agent == "codex":
        base = _home("CODEX_HOME", ".codex") if global_ else here / ".codex"
        return Target(
            agent,
            base / "hooks.json",
            "PreToolUse",
            "Bash",
            "command",
            (("type", "command"),),
            timeout=("timeout", TIMEOUT_SECONDS),
        )
    if agent == "gemini":
        base = _home("GEMINI_CLI_HOME", "") / ".gemini" if global_ else here / ".gemini"
        extra: tuple[tuple[str, object], ...] = (("type", "command"), ("name", "rtk-policy"))
        return Target(
            agent,
            base / "settings.json",
            "BeforeTool",
            "run_shell_command",
            "command",
            extra,
            timeout=("timeout", TIMEOUT_SECONDS * 1000),  # milliseconds
        )
    if agent == "cursor":
        base = Path.home() / ".cursor" if global_ else here / ".cursor"
        return Target(
            agent,
            base / "hooks.json",
            "beforeShellExecution",
            None,
            "command",
            (),
            (("version", 1),),
            timeout=("timeout", TIMEOUT_SECONDS),
            block_on_failure=("failClosed", True),
        )
    if agent == "copilot":
        base = Path.home() / ".copilot" / "hooks" if global_ else here / ".github" / "hooks"
        extra = (("type", "command"),)
        return Target(
            agent,
            base / "rtk-policy.json",
            "preToolUse",
            None,
            "bash",
            extra,
            (("version", 1),),
            timeout=("timeoutSec", TIMEOUT_SECONDS),
        )
    raise ValueError(f"unknown agent {agent!r}")
