"""What the resident server remembers between hook calls, each thing checked so that what it
remembers is always what a fresh process would find.

`MemoEngine`: `evaluate(text, context)` is a pure function of its arguments (and of the loaded
policies and config, fixed for one engine), so a repeated command with the same context gets the
same `Outcome` without evaluating the policies again; an agent's rendering of a remembered decision
is remembered too (`rendered`). A remembered outcome is returned with
`eval_us = 0`, so the audit log says no evaluation time was spent. Contexts that cannot be hashed (a
`tool_input` holding lists or objects) are never remembered. Every hook call is still read, rendered
and audited on its own.

`FolderFacts`: the project folders and Claude permission rules of a cwd, which the hook would
otherwise find by walking the folders with pathlib and reading the settings files on every call;
remembered until a stat of one of the paths they depend on differs (checked at most once per
`RECHECK_SECONDS`, see there).
"""

from __future__ import annotations

import io
import os
import stat
import sys
import threading
import time
from _thread import get_ident
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from rtk_policy.policy.shell_paths import depends_on_system
from rtk_policy.util import environ, record

if TYPE_CHECKING:
    from rtk_policy.agents.common import HookRequest
    from rtk_policy.agents.protocol import AgentProtocol
    from rtk_policy.decision import Decision
    from rtk_policy.engine.pipeline import Engine, Outcome
    from rtk_policy.policy.model import Context, ToolCall

#: Outcomes kept per engine; the least recently used one is dropped first.
MEMO_SIZE = 2048


class MemoEngine:
    """Wraps an `Engine`, with the interface the hook uses (`hook.interfaces.HookEngine`)."""

    def __init__(
        self, engine: Engine, size: int = MEMO_SIZE, facts: FolderFacts | None = None
    ) -> None:
        self.engine = engine
        self.folder_facts = facts  #: a `FolderFacts` the hook asks instead of the file system
        self.config = engine.config
        self.size = size
        self.hits = 0
        self._memo: OrderedDict[tuple[str, Any], list[Any]] = OrderedDict()
        self._rendered: OrderedDict[tuple, tuple[Any, str | None]] = OrderedDict()
        self._lock = threading.Lock()  #: held while the memos change (the server's threads)

    def context(self, **fields: Any) -> Context:
        """The wrapped engine's `Context`."""
        return self.engine.context(**fields)

    def evaluate(self, text: str, context: Context) -> Outcome:
        """The wrapped engine's `Outcome`, remembered by (text, context)."""
        key = (text, context)
        try:
            with self._lock:
                found = self._memo.get(key)
                if found is not None:
                    self._memo.move_to_end(key)
                    self.hits += 1
        except TypeError:  # unhashable context
            return self.engine.evaluate(text, context)
        if found is not None:
            if found[1] is None:  # made on the first repeat: most commands are never repeated
                found[1] = unevaluated(found[0])
            return found[1]
        outcome = self.engine.evaluate(text, context)
        if depends_on_system(outcome.command_line):
            return outcome  # a symlink, a glob's files or a process may change meanwhile
        with self._lock:
            self._memo[key] = [outcome, None]
            if len(self._memo) > self.size:
                self._memo.popitem(last=False)
        return outcome

    def evaluate_tool(self, call: ToolCall, context: Context) -> Outcome:
        """The wrapped engine's `Outcome` for a tool call, never remembered: its facts (symlinks,
        files a glob matches) are read from the file system on every call."""
        return self.engine.evaluate_tool(call, context)

    def decide(self, text: str, context: Context) -> Decision:
        """The `Decision` for `text`."""
        return self.evaluate(text, context).decision

    def rendered(
        self, module: AgentProtocol, decision: Decision, request: HookRequest
    ) -> str | None:
        """`module.render(decision, request)`, remembered for a remembered `decision`.

        An agent's `render` reads the decision and these request fields only: agent, command,
        tool_name, tool_input, cwd, permission_mode and variant (never the ids, the transcript path
        or the raw payload; a test holds every agent to it). A request whose tool_input holds
        lists or objects is rendered every time.
        """
        try:
            key = (
                module.NAME,
                id(decision),
                request.agent,
                request.command,
                request.tool_name,
                request.cwd,
                request.permission_mode,
                request.variant,
                tuple(request.tool_input.items()),
            )
            found = self._rendered.get(key)
        except (TypeError, AttributeError):  # unhashable tool_input
            return module.render(decision, request)
        if found is not None and found[0] is decision:
            return found[1]
        line = module.render(decision, request)
        with self._lock:
            self._rendered[key] = (decision, line)  # holding the decision keeps its id unique
            if len(self._rendered) > self.size:
                self._rendered.popitem(last=False)
        return line


def unevaluated(outcome: Outcome) -> Outcome:
    """`outcome` as a remembered one is given again: the same decision, `eval_us` 0 (the audit log
    then says that no evaluation time was spent)."""
    if outcome.evaluation.eval_us == 0:
        return outcome
    return record.evolve(outcome, evaluation=record.evolve(outcome.evaluation, eval_us=0))


#: Environment variables that move another host's rule files (`FolderFacts.agent_rules`).
AGENT_RULE_ENV = (
    "HOME",
    "XDG_CONFIG_HOME",
    "GEMINI_CLI_HOME",
    "GEMINI_CLI_SYSTEM_SETTINGS_PATH",
    "GEMINI_CLI_TRUSTED_FOLDERS_PATH",
    "GEMINI_CLI_TRUST_WORKSPACE",
    "CODEX_HOME",
)

#: Seconds during which a stat check that found nothing changed stands: a change to a watched file
#: (a policy, a config, a Claude settings file, a project marker) is seen by every request that
#: starts more than this long after the change was written; a request within that window may still
#: get the answer of the files as they were. Under load this turns ~30 stats per request into one
#: round of stats per interval.
RECHECK_SECONDS = 0.01

#: Probed paths whose mtime is this close to the moment they were read are not trusted yet: a change
#: within the same timestamp tick, keeping size and inode, would otherwise go unseen.
RACY_NS = 50_000_000


def stat_stamp(paths: tuple[str, ...], folders_by_identity: bool = False) -> tuple:
    """(mode, inode, mtime, size) of each path (following symlinks), None for a missing one;
    with `folders_by_identity`, a folder's entry is its (mode, inode) only."""
    stamp: list[tuple[int, ...] | None] = []
    for path in paths:
        try:
            info = os.stat(path)
        except (OSError, ValueError):
            stamp.append(None)
            continue
        if folders_by_identity and stat.S_ISDIR(info.st_mode):
            stamp.append((info.st_mode, info.st_ino))
        else:
            stamp.append((info.st_mode, info.st_ino, info.st_mtime_ns, info.st_size))
    return tuple(stamp)


_ENVIRON_DATA = getattr(os.environ, "_data", None)  #: CPython's bytes dict behind `os.environ`


def env_values(names: tuple[str, ...]) -> tuple[str, ...]:
    """`environ.get(name, "")` for each of `names` ("" for unset ones), read in one go.

    Reads CPython's encoded mapping behind `os.environ` directly when it is there (a tenth of the
    cost of `os.environ.get`, which encodes the name and decodes the value on every call).
    """
    data = _ENVIRON_DATA
    if environ.current() is not None:  # a server's call: its client's forwarded variables
        return environ.values(names)
    if type(data) is not dict or os.name != "posix":
        return tuple(os.environ.get(name, "") for name in names)
    encoded = _ENCODED.get(names)
    if encoded is None:
        encoded = _ENCODED[names] = tuple(os.fsencode(name) for name in names)
    return tuple(
        "" if value is None else value.decode(_FS_ENCODING, "surrogateescape")
        for value in map(data.get, encoded)
    )


_ENCODED: dict[tuple[str, ...], tuple[bytes, ...]] = {}
_FS_ENCODING = sys.getfilesystemencoding()


def folder_stamp(paths: tuple[str, ...]) -> tuple:
    """`stat_stamp` for the `FolderFacts`: a folder counts by its (mode, inode) only.

    What the facts read from a folder is whether it exists (or which entries exist, each probed as
    a path of its own), never its listing: so a file created in the cwd (a build, an editor's
    backup) does not make the facts be read again.
    """
    return stat_stamp(paths, folders_by_identity=True)


def newest_mtime(stamp: tuple) -> int:
    """The latest mtime in a `stat_stamp` or `folder_stamp` (0 when it holds none)."""
    return max((entry[2] for entry in stamp if entry is not None and len(entry) > 2), default=0)


class FolderFacts:
    """What a hook call learns from the file system about its cwd, remembered per (cwd, HOME,
    CLAUDE_CONFIG_DIR) until one of the paths it depends on changes (one stat per path, at most once
    per `recheck` seconds, see `folder_stamp`; within one request the facts of a cwd never change).

    The facts: the rtk-policy project folder (`config.project_dir`), the Claude project folder
    (`claude_project_dir`) and the merged Claude `Bash(...)` rules (`load_claude_rules`, whose
    stderr warnings are repeated on every call, as the hook would print them). The paths probed are
    the cwd as given and resolved (a moved folder, a re-pointed symlink), the `.claude`, `.git` and
    `.rtk-policy` entries of it and of each parent (which decide both project folders), and the four
    Claude settings files of that project and of the user.
    """

    def __init__(self, size: int = 256, recheck: float | None = None) -> None:
        self.size = size
        self.recheck = RECHECK_SECONDS if recheck is None else recheck
        #: key -> [paths, stamp, trusted_after (ns), facts, monotonic time of the last stat check]
        self._known: OrderedDict[tuple[str, ...], list] = OrderedDict()
        #: thread id -> (the keys already checked for its request, [(cwd, facts) it last read])
        self._requests: dict[int, tuple[set[tuple[str, ...]], list]] = {}
        #: (agent, cwd, env) -> [paths, stamp, rules, warnings, trusted_after (ns)], other hosts
        self._agent_rules: dict[tuple[str, ...], list] = {}
        self._lock = threading.Lock()  #: held while `_known` and `_agent_rules` change

    def new_request(self) -> None:
        """Start of a hook call in this thread: the facts are checked again (once) before they
        are used."""
        self._requests[get_ident()] = (set(), [None])

    def end_request(self) -> None:
        """End of this thread's hook call."""
        self._requests.pop(get_ident(), None)

    def _request(self) -> tuple[set[tuple[str, ...]], list]:
        """This thread's request state (a request of its own when `new_request` was not called)."""
        found = self._requests.get(get_ident())
        if found is None:
            found = self._requests[get_ident()] = (set(), [None])
        return found

    def project_dir(self, cwd: str | None) -> Any:
        """`rtk_policy.config.paths.project_dir(cwd)`."""
        return self._facts(cwd)[0]

    def claude_project_dir(self, cwd: str | None) -> Any:
        """`rtk_policy.settings.claude_rules.claude_project_dir(cwd)`."""
        return self._facts(cwd)[1]

    def claude_rules(self, cwd: str | None, stderr: Any = None) -> tuple:
        """`load_claude_rules(cwd, stderr)`: (deny, ask, allow); its warnings go to `stderr`."""
        _, _, rules, warnings = self._facts(cwd)
        if warnings and stderr is not None:
            stderr.write(warnings)
        return rules

    def agent_rules(self, agent: str, cwd: str | None, stderr: Any = None) -> tuple:
        """`load_agent_rules(agent, cwd, stderr)`: Claude Code's rules are `claude_rules`; another
        host's own rule files (`own_rules`; Codex has both) are remembered until a stat of one of
        their paths (`agent_rules.rule_paths`) differs, checked on every call; their warnings are
        repeated on every call."""
        from rtk_policy.settings.agent_rules import (
            CLAUDE_RULE_AGENTS,
            OWN_RULE_AGENTS,
            merge_rules,
            own_rules,
            rule_paths,
        )

        claude = (*self.claude_rules(cwd, stderr), ()) if agent in CLAUDE_RULE_AGENTS else None
        if agent not in OWN_RULE_AGENTS:
            return claude if claude is not None else (*self.claude_rules(cwd, stderr), ())
        where = cwd or os.getcwd()
        key = (agent, where, *env_values(AGENT_RULE_ENV))
        known = self._agent_rules.get(key)
        if known is None or stat_stamp(known[0]) != known[1] or time.time_ns() <= known[4]:
            paths = rule_paths(agent, where)
            stamp = stat_stamp(paths)
            warnings = io.StringIO()
            rules = own_rules(agent, where, warnings)
            trusted_after = newest_mtime(stamp) + RACY_NS
            known = [paths, stamp, rules, warnings.getvalue(), trusted_after]
            with self._lock:
                self._agent_rules[key] = known
                while len(self._agent_rules) > self.size:
                    self._agent_rules.pop(next(iter(self._agent_rules)))
        if known[3] and stderr is not None:
            stderr.write(known[3])
        return known[2] if claude is None else merge_rules(claude, known[2])

    def facts_of(self, cwd: str | None) -> tuple:
        """The facts of `cwd` as one object, a new one whenever they are read again (compare it
        by identity to know that nothing they depend on changed)."""
        return self._facts(cwd)

    def _facts(self, cwd: str | None) -> tuple:
        checked, last = self._request()
        if last[0] is not None and last[0][0] == cwd:
            return last[0][1]
        facts = self._check(cwd, checked)
        last[0] = (cwd, facts)
        return facts

    def _check(self, cwd: str | None, checked_now: set[tuple[str, ...]]) -> tuple:
        """The facts of `cwd`, read again unless remembered and still current; `checked_now`: the
        keys this request checked already."""
        where = cwd or os.getcwd()
        key = (where, *env_values(("HOME", "CLAUDE_CONFIG_DIR")))
        known = self._known.get(key)
        now = time.monotonic()
        if known is not None:
            if key in checked_now:
                return known[3]
            paths, stamp, trusted_after, facts, checked = known
            if time.time_ns() > trusted_after and (
                now - checked < self.recheck or folder_stamp(paths) == stamp
            ):
                if now - checked >= self.recheck:
                    known[4] = now
                with self._lock:
                    if key in self._known:
                        self._known.move_to_end(key)
                checked_now.add(key)
                return facts
        paths = probed_paths(where)
        stamp = folder_stamp(paths)  # before reading: a change while reading shows next time
        facts = _read_facts(where)
        with self._lock:
            self._known[key] = [paths, stamp, newest_mtime(stamp) + RACY_NS, facts, now]
            self._known.move_to_end(key)
            while len(self._known) > self.size:
                self._known.popitem(last=False)
        checked_now.add(key)
        return facts


def probed_paths(cwd: str) -> tuple[str, ...]:
    """The paths whose state decides the `FolderFacts` of `cwd` (see there)."""
    from pathlib import Path

    from rtk_policy.settings.claude_rules import managed_settings_dir, settings_files
    from rtk_policy.settings.claude_trust import global_config_path

    try:
        here = Path(cwd).resolve()
    except (OSError, RuntimeError):
        here = Path(cwd)
    paths = [cwd, str(here)]  # a moved folder or a re-pointed symlink changes one of these
    for folder in (here, *here.parents):
        paths += [os.path.join(folder, name) for name in (".claude", ".git", ".rtk-policy")]
    paths += [str(path) for path in settings_files(cwd)]
    paths.append(global_config_path())  # its trust records decide the project's allow rules
    paths.append(os.path.join(managed_settings_dir(), "managed-settings.d"))  # a new drop-in
    return tuple(dict.fromkeys(paths))


def _read_facts(cwd: str) -> tuple:
    import io

    from rtk_policy.config.paths import project_dir
    from rtk_policy.settings.claude_rules import claude_project_dir, load_claude_rules

    warnings = io.StringIO()
    rules = load_claude_rules(cwd, warnings)
    return project_dir(cwd), claude_project_dir(cwd), rules, warnings.getvalue()
