"""`Resident`: the hook answerer of the resident engine (`serve.server`, `serve.http_hook`), its
engines loaded once and reloaded when their files change.

Engines are kept per (environment, project folder) and reloaded when a policy or config file
changes: one stat per watched file, at most once per `serve_memo.RECHECK_SECONDS` (10 ms) per
engine. A repeated Claude call is answered from `serve_answers` (and audited on its own).

Calls run at the same time (one thread per connection, issue 18): a long decision (a 250 KiB input,
up to its ~0.75 s budget) never makes another agent's short call wait for it. Nothing a call reads
is process-wide state set for that call:

- its client's forwarded variables (`FORWARDED_ENV`) are this thread's view of the environment
  (`util.environ.use`), which every read of them on the decision path goes through; `os.environ`
  is never changed, so no call can be decided under another client's HOME, XDG_* folders,
  CLAUDE_PROJECT_DIR, PATH or fail mode;
- what one call remembers is its own: its folder facts (`FolderFacts.new_request`), its deferred
  audit records (`audit.defer`), the spellings memo of its evaluation
  (`policy.paths.evaluation_memo`), the tree-sitter parser of its parse (`shell.source`);
  `sys.stdout` is left alone (`answer_payload(shared=True)`);
- what calls share (the engines, the memos of outcomes, answers and folder facts) is changed
  under short locks, never held while deciding; one engine loads at a time (`_loading`), and a
  call whose engine is loaded and current never waits for it.
"""

from __future__ import annotations

import os
import threading
import time
from typing import TYPE_CHECKING, Any

from rtk_policy.agents.hook_input import STDIN_LIMIT, decode_payload
from rtk_policy.audit import log as audit
from rtk_policy.serve import memo as serve_memo
from rtk_policy.serve.answers import AnswerMemo
from rtk_policy.serve.memo import FolderFacts, MemoEngine, env_values, stat_stamp
from rtk_policy.serve.thin_client import FORWARDED_ENV
from rtk_policy.util import environ

if TYPE_CHECKING:
    from rtk_policy.hook.service import Decoded, HookAnswer

_KEEP_ENGINES = 16  #: engines kept (one per environment and project folder); the oldest is dropped


class Resident:
    """A hook answerer that keeps its engines loaded and reloads them when their files change."""

    def __init__(self) -> None:
        self._counting = threading.Lock()  #: held while `requests` counts a call
        self._loading = threading.Lock()  #: held while an engine loads and `_engines` changes
        #: (forwarded environment, project) -> [watched paths, their stamp, engine, checked at]
        self._engines: dict[tuple[Any, ...], list[Any]] = {}
        self.facts = FolderFacts()  #: project folders and Claude rules per cwd, checked per request
        self.answers = AnswerMemo()  #: whole answers of repeated Claude calls
        self.last_request = time.monotonic()
        self.requests = 0
        self.rss_kib = 0  #: resident memory, sampled every 1000 requests
        self.rss_limit_kib = int(os.environ.get("RTK_POLICY_SERVE_MAX_RSS_MB") or 256) * 1024

    def worn_out(self) -> bool:
        """True when memory grew past the limit: the server exits and the next call starts a fresh
        one.

        (cel-expr-python leaks ~0.2 KiB per custom-function call; a long-lived server recycles.)
        """
        return self.rss_kib > self.rss_limit_kib

    def answer(
        self,
        agent: str,
        payload: bytes,
        env: dict[str, str] | None = None,
        records: list | None = None,
        host_pid: int = 0,
    ) -> tuple[str, str]:
        """The hook's (stdout, stderr) for one payload, under the client's forwarded `env`;
        `host_pid` is the client's pid (0: unknown), below the agent's process (`HookOptions`).

        With `records`, the call's audit record is added to that list instead of being written: the
        caller must hand the list to `audit.write_records` (before or right after answering).
        """
        started = time.perf_counter_ns()
        self.last_request = time.monotonic()
        if env is not None:
            environ.use(environ.forwarded_view(env, FORWARDED_ENV))
        if records is not None:
            audit.defer(records)
        try:
            self.facts.new_request()
            decoded = decode_payload(payload) if len(payload) <= STDIN_LIMIT else None
            data = decoded[0] if decoded else None
            engine = self.engine_for(_payload_cwd(data))
            answer = self._answer(payload, agent, data, decoded, engine, started, host_pid)
        finally:
            self.facts.end_request()
            if records is not None:
                audit.defer(None)
            if env is not None:
                environ.use(None)
        with self._counting:
            self.requests += 1
            sample = self.requests % 1000 == 0
        if sample:
            self.rss_kib = rss_kib()
        self.last_request = time.monotonic()
        return answer.stdout, answer.stderr

    def _answer(
        self,
        payload: bytes,
        agent: str,
        data: Any,
        decoded: Decoded | None,
        engine: MemoEngine | None,
        started: int,
        host_pid: int = 0,
    ) -> HookAnswer:
        """The hook's answer, replayed from `self.answers` when a Claude call repeats."""
        from rtk_policy.hook.service import answer_payload

        key = facts = None
        if agent == "claude" and engine is not None and type(data) is dict:
            cwd = data.get("cwd")
            facts = self.facts.facts_of(cwd if type(cwd) is str and cwd else None)
            key = self.answers.key(agent, len(payload), data, engine, facts)
            if key is not None:
                found = self.answers.replay(key, data, engine, facts, started)
                if found is not None:
                    return found
        answer = answer_payload(
            payload, agent or None, engine=engine, decoded=decoded, host_pid=host_pid, shared=True
        )
        if key is not None:
            self.answers.remember(key, data, engine, facts, answer)
        return answer

    def engine_for(self, cwd: str | None) -> MemoEngine | None:
        """The engine for `cwd`'s project under the current environment, (re)loaded when stale.

        Stale: a stat of one of its `watched_paths` differs from when it was loaded. That is checked
        at most once per `serve_memo.RECHECK_SECONDS`: a file written at time t is in force for
        every request that starts after t + RECHECK_SECONDS. None when loading fails: the hook then
        loads it itself and applies its fail mode.
        """
        project = self.facts.project_dir(cwd)
        key = (env_values(FORWARDED_ENV), str(project or ""))
        cached = self._engines.get(key)
        if cached is not None and self._current(cached):
            return cached[2]
        with self._loading:
            again = self._engines.get(key)
            if again is not None and again is not cached and self._current(again):
                return again[2]  # another thread loaded it meanwhile
            return self._load(key, cwd)

    @staticmethod
    def _current(cached: list[Any]) -> bool:
        """Whether the engine `_engines` keeps in `cached` is still the one its files make (a
        stat of them at most once per `RECHECK_SECONDS`)."""
        now = time.monotonic()
        if now - cached[3] < serve_memo.RECHECK_SECONDS:
            return True
        if stat_stamp(cached[0]) == cached[1]:
            cached[3] = now
            return True
        return False

    def _load(self, key: tuple[Any, ...], cwd: str | None) -> MemoEngine | None:
        """Load the engine of `key` for `cwd` and keep it (`_loading` held)."""
        from rtk_policy.engine.pipeline import load_engine

        checked = time.monotonic()
        watched = watched_paths(cwd)
        stamp = stat_stamp(watched)
        try:
            engine = MemoEngine(load_engine(cwd=cwd), facts=self.facts)
        except Exception:  # noqa: BLE001 - the hook reloads and answers with its fail mode
            return None
        self._engines.pop(key, None)
        self._engines[key] = [watched, stamp, engine, checked]
        while len(self._engines) > _KEEP_ENGINES:
            self._engines.pop(next(iter(self._engines)))
        return engine


def rss_kib() -> int:
    """This process's resident memory in KiB (0 when /proc is not available)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)
    except (OSError, ValueError, IndexError):
        return 0


def _payload_cwd(data: Any) -> str | None:
    """The decoded payload's `cwd` when it names a folder (as the hook itself decides), else
    None."""
    cwd = data.get("cwd") if isinstance(data, dict) else None
    return cwd if isinstance(cwd, str) and cwd and os.path.isdir(cwd) else None


def watched_paths(cwd: str | None = None) -> tuple[str, ...]:
    """Every file and folder whose change means the engine for `cwd` must be reloaded.

    Folders are watched too (their mtime changes when a file is added, removed or renamed), and the
    locations that do not exist yet (a layer's config, a `.rtk-policy/` in any folder above `cwd`,
    the trust records), so that creating one is noticed.
    """
    from rtk_policy.config import paths as where
    from rtk_policy.policy import policy_search_path
    from rtk_policy.policy.load import expand_paths

    layers = [where.managed_dir(), where.user_config_dir()]
    layers += [os.path.join(folder, where.PROJECT_FOLDER) for folder in where.folders_up(cwd)]
    paths = [where.trust_file()]
    for layer in layers:
        paths += [layer, where.config_file(layer), where.policies_dir(layer)]
    for entry in policy_search_path(cwd=cwd):
        paths.append(entry)  # its mtime changes when a file is added, removed or renamed
        paths.extend(expand_paths([entry]))  # the policy files the engine loads from it
    return tuple(dict.fromkeys(paths))
