"""`Resident`: the hook answerer of the resident engine (`serve.server`, `serve.http_hook`), its
engines loaded once and reloaded when their files change.

Engines are kept per (environment, project folder) and reloaded when a policy or config file
changes: one stat per watched file, at most once per `serve_memo.RECHECK_SECONDS` (10 ms) per
engine. A repeated Claude call is answered from `serve_answers` (and audited on its own).
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

if TYPE_CHECKING:
    from rtk_policy.hook.service import Decoded, HookAnswer

_KEEP_ENGINES = 16  #: engines kept (one per environment and project folder); the oldest is dropped


class Resident:
    """A hook answerer that keeps its engines loaded and reloads them when their files change."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        #: key -> [watched paths, their stamp, engine, monotonic time of the last stat check]
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
        with self._lock:
            saved = _apply_env(env) if env is not None else None
            if records is not None:
                audit.defer(records)
            try:
                self.facts.new_request()
                decoded = decode_payload(payload) if len(payload) <= STDIN_LIMIT else None
                data = decoded[0] if decoded else None
                engine = self.engine_for(_payload_cwd(data))
                answer = self._answer(payload, agent, data, decoded, engine, started, host_pid)
            finally:
                if records is not None:
                    audit.defer(None)
                if saved is not None:
                    _apply_env(saved)
            self.requests += 1
            if self.requests % 1000 == 0:
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
            payload, agent or None, engine=engine, decoded=decoded, host_pid=host_pid
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
        if cached is not None:
            now = time.monotonic()
            if now - cached[3] < serve_memo.RECHECK_SECONDS:
                return cached[2]
            if stat_stamp(cached[0]) == cached[1]:
                cached[3] = now
                return cached[2]
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


def _apply_env(env: dict[str, str]) -> dict[str, str]:
    """Set the forwarded variables to `env` (absent ones unset); return the previous values."""
    saved = {name: os.environ.get(name, "") for name in FORWARDED_ENV}
    for name in FORWARDED_ENV:
        value = env.get(name, "")
        if value:
            os.environ[name] = value
        else:
            os.environ.pop(name, None)
    return saved


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
