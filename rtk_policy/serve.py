"""The resident engine: policies loaded and compiled once, answering hooks over a Unix socket (and,
optionally, Claude Code `type: "http"` hooks on loopback, see `rtk_policy.serve_http`).

Wire protocol on the socket: the client sends a header line `AGENT NUL NAME=VALUE NUL ... \\n` (the
environment variables of `client.FORWARDED_ENV` it has), then the payload bytes, and shuts down its
write side; the server answers `stdout NUL stderr NUL \\n`. An answer without that trailer means
the server died: the client decides in-process. Engines are kept per (environment, project folder) and
reloaded when a policy or config file changes: one stat per watched file, at most once per
`serve_memo.RECHECK_SECONDS` (10 ms) per engine, so a change is seen by every request that starts
more than 10 ms after it was written. A repeated Claude call is answered from `serve_answers` (and
audited on its own). The server exits after `idle` seconds without a request, removing its socket.
"""

from __future__ import annotations

import fcntl
import os
import signal
import socket
import threading
import time
from typing import Any

from rtk_policy import audit, serve_memo
from rtk_policy.agents.hook_input import STDIN_LIMIT, decode_payload
from rtk_policy.client import FORWARDED_ENV, socket_path
from rtk_policy.serve_answers import AnswerMemo
from rtk_policy.serve_memo import FolderFacts, MemoEngine, env_values, stat_stamp

MAX_REQUEST = 1024 * 1024 + 4096  #: bytes read from one connection at most
_KEEP_ENGINES = 16  #: engines kept (one per environment and project folder); the oldest is dropped


class Resident:
    """A hook answerer that keeps its engines loaded and reloads them when their files change."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        #: key -> [watched paths, their stamp, engine, monotonic time of the last stat check]
        self._engines: dict[tuple, list] = {}
        self.facts = FolderFacts()  #: project folders and Claude rules per cwd, checked per request
        self.answers = AnswerMemo()  #: whole answers of repeated Claude calls
        self.last_request = time.monotonic()
        self.requests = 0
        self.rss_kib = 0  #: resident memory, sampled every 1000 requests
        self.rss_limit_kib = int(os.environ.get("RTK_POLICY_SERVE_MAX_RSS_MB") or 256) * 1024

    def worn_out(self) -> bool:
        """True when memory grew past the limit: the server exits and the next call starts a fresh one.

        (cel-expr-python leaks ~0.2 KiB per custom-function call; a long-lived server recycles.)
        """
        return self.rss_kib > self.rss_limit_kib

    def answer(
        self,
        agent: str,
        payload: bytes,
        env: dict[str, str] | None = None,
        records: list | None = None,
    ) -> tuple[str, str]:
        """The hook's (stdout, stderr) for one payload, under the client's forwarded `env`.

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
                answer = self._answer(payload, agent, data, decoded, engine, started)
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
        self, payload: bytes, agent: str, data: Any, decoded: Any, engine: Any, started: int
    ) -> Any:
        """The hook's answer, replayed from `self.answers` when a Claude call repeats."""
        from rtk_policy.commands.hook import answer_payload

        key = facts = None
        if agent == "claude" and engine is not None and type(data) is dict:
            cwd = data.get("cwd")
            facts = self.facts.facts_of(cwd if type(cwd) is str and cwd else None)
            key = self.answers.key(agent, len(payload), data, engine, facts)
            if key is not None:
                found = self.answers.replay(key, data, engine, facts, started)
                if found is not None:
                    return found
        answer = answer_payload(payload, agent or None, engine=engine, decoded=decoded)
        if key is not None:
            self.answers.remember(key, data, engine, facts, answer)
        return answer

    def engine_for(self, cwd: str | None) -> Any:
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
        from rtk_policy.engine import load_engine

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
    """The decoded payload's `cwd` when it names a folder (as the hook itself decides), else None."""
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
    config locations that do not exist yet, so that creating one is noticed.
    """
    from rtk_policy.config import project_dir, user_config_dir
    from rtk_policy.policy import policy_search_path
    from rtk_policy.policy.load import expand_paths

    user = user_config_dir()
    paths = [str(user), str(user / "config.toml"), str(user / "policies")]
    project = project_dir(cwd)
    if project is not None:
        local = project / ".rtk-policy"
        paths += [str(local), str(local / "config.toml"), str(local / "policies")]
    for entry in policy_search_path(cwd=cwd):
        paths.append(entry)  # its mtime changes when a file is added, removed or renamed
        paths.extend(expand_paths([entry]))  # the policy files the engine loads from it
    return tuple(dict.fromkeys(paths))


def parse_header(line: bytes) -> tuple[str, dict[str, str]]:
    """(agent, forwarded environment) of a request's header line."""
    fields = line.decode("utf-8", "replace").split("\0")
    env = {}
    for field in fields[1:]:
        name, sep, value = field.partition("=")
        if sep and name in FORWARDED_ENV:
            env[name] = value
    return fields[0].strip(), env


def private_folder(path: str) -> str:
    """Create the socket's folder owner-only (0700) and check it is ours; return it."""
    folder = os.path.dirname(path)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    info = os.lstat(folder)
    if info.st_uid != os.getuid() or not os.path.isdir(folder) or os.path.islink(folder):
        raise PermissionError(f"{folder} is not a folder owned by this user")
    os.chmod(folder, 0o700)
    return folder


def serve_socket(resident: Resident, path: str, idle: float) -> int:
    """Accept connections on `path` until idle for `idle` seconds; 0, or 1 when another server runs."""
    folder = private_folder(path)
    lock = open(os.path.join(folder, "engine.lock"), "a")  # noqa: SIM115 - held for the process's life
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return 1  # another server owns the socket
    lock.truncate(0)
    lock.write(f"{os.getpid()}\n")  # who owns the socket, for `kill` and the tests
    lock.flush()
    warm_up(resident)  # load before listening: clients decide in-process meanwhile
    if os.path.lexists(path):
        os.unlink(path)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_umask = os.umask(0o177)
    try:
        server.bind(path)
    finally:
        os.umask(old_umask)
    os.chmod(path, 0o600)
    server.listen(128)
    server.settimeout(min(1.0, max(idle / 4, 0.05)))
    resident.last_request = time.monotonic()
    try:
        handlers: list[threading.Thread] = []
        while time.monotonic() - resident.last_request < idle and not resident.worn_out():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            handler = threading.Thread(target=_handle, args=(resident, conn), daemon=True)
            handler.start()
            handlers = [h for h in handlers if h.is_alive()] + [handler]
    finally:
        server.close()
        if os.path.lexists(path):
            os.unlink(path)
        lock.close()
    for handler in handlers:  # let the calls in flight finish (new ones decide in-process)
        handler.join(15)
    return 0


def warm_up(resident: Resident) -> None:
    """Load the default engine and the modules a hook call uses, and run one evaluation (no audit)."""
    import importlib

    for name in ("rtk_policy.commands.hook", "rtk_policy.agents.claude", "rtk_policy.audit"):
        importlib.import_module(name)
    engine = resident.engine_for(None)
    try:
        if engine is not None:
            engine.evaluate("git status && ls -la | head", engine.context(agent="claude"))
    except Exception:  # noqa: BLE001 - a broken policy shows on the first real request instead
        pass


def _handle(resident: Resident, conn: socket.socket) -> None:
    with conn:
        try:
            conn.settimeout(10.0)
            data = _receive(conn)
            header, newline, payload = data.partition(b"\n")
            if not newline:
                return  # not a client (a probe, or a client killed before it sent anything)
            agent, env = parse_header(header)
            out, err = resident.answer(agent, payload, env)
            conn.sendall(out.encode() + b"\0" + err.encode() + b"\0\n")
        except Exception:  # noqa: BLE001 - no trailer: the client decides in-process
            return


def _receive(conn: socket.socket) -> bytes:
    chunks, size = [], 0
    while size < MAX_REQUEST:
        chunk = conn.recv(65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _stop(signum: int, frame: object) -> None:
    raise SystemExit(0)


def serve(idle: float = 900.0, http_port: int | None = None, path: str | None = None) -> int:
    """Run the resident engine until it has been idle for `idle` seconds (or SIGTERM/SIGINT)."""
    signal.signal(signal.SIGTERM, _stop)
    audit.use_structlog() if _has_structlog() else None
    resident = Resident()
    httpd = None
    if http_port is not None:
        from rtk_policy.serve_http import start_http

        httpd = start_http(resident, http_port)
    try:
        return serve_socket(resident, path or socket_path(), idle)
    finally:
        if httpd is not None:  # the answers in progress finish, with their audit records
            httpd.shutdown()
            httpd.server_close()


def _has_structlog() -> bool:
    try:
        import structlog  # noqa: F401
    except ImportError:
        return False
    return True
