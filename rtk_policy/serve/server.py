"""The resident engine: policies loaded and compiled once, answering hooks over a Unix socket (and,
optionally, Claude Code `type: "http"` hooks on loopback, see `rtk_policy.serve.http_hook`).

Wire protocol on the socket: the client sends a header line `AGENT NUL NAME=VALUE NUL ... \\n` (the
environment variables of `client.FORWARDED_ENV` it has), then the payload bytes, and shuts down its
write side; the server answers `stdout NUL stderr NUL \\n`. An answer without that trailer means
the server died: the client decides in-process. The answers come from a `resident.Resident`: engines
kept per (environment, project folder) and reloaded when a policy or config file changes (one stat
per watched file, at most once per `serve_memo.RECHECK_SECONDS`, 10 ms, per engine, so a change is
seen by every request that starts more than 10 ms after it was written). Each connection is answered
in a thread of its own, at the same time as the others (`resident`: a long call never makes a
short one wait). The server exits after
`idle` seconds without a request, removing its socket. Its socket lives in the runtime folder
(`runtime.py`: created 0700, refused when it is not this user's private folder), and it answers
only clients that run as its own user (checked on every connection, `runtime.peer_problem`).
"""

from __future__ import annotations

import fcntl
import os
import signal
import socket
import sys
import threading
import time

from rtk_policy.audit import log as audit
from rtk_policy.serve import runtime
from rtk_policy.serve.resident import Resident, rss_kib, watched_paths
from rtk_policy.serve.thin_client import FORWARDED_ENV

__all__ = ["Resident", "rss_kib", "serve", "serve_socket", "watched_paths"]

MAX_REQUEST = 1024 * 1024 + 4096  #: bytes read from one connection at most


def parse_header(line: bytes) -> tuple[str, dict[str, str]]:
    """(agent, forwarded environment) of a request's header line."""
    fields = line.decode("utf-8", "replace").split("\0")
    env = {}
    for field in fields[1:]:
        name, sep, value = field.partition("=")
        if sep and name in FORWARDED_ENV:
            env[name] = value
    return fields[0].strip(), env


def serve_socket(resident: Resident, path: str, idle: float) -> int:
    """Accept connections on `path` until idle for `idle` seconds; 0, or 1 when another server
    runs or the socket's folder is not this user's private folder (the reason on stderr)."""
    folder = os.path.dirname(path)
    try:
        runtime.make_private(folder)
    except runtime.Untrusted as error:
        sys.stderr.write(f"rtk-policy serve: refusing the runtime folder: {error}\n")
        return 1
    flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
    lock = os.fdopen(os.open(os.path.join(folder, runtime.LOCK), flags, 0o600), "a")
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
    """Load the default engine and the modules a hook call uses, and run one evaluation (no
    audit)."""
    import importlib

    for name in ("rtk_policy.hook.service", "rtk_policy.agents.claude", "rtk_policy.audit.log"):
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
            if runtime.peer_problem(conn) is not None:
                return  # another user's process (or one that cannot be told): not answered
            conn.settimeout(10.0)
            data = _receive(conn)
            header, newline, payload = data.partition(b"\n")
            if not newline:
                return  # not a client (a probe, or a client killed before it sent anything)
            agent, env = parse_header(header)
            out, err = resident.answer(agent, payload, env, host_pid=peer_pid(conn))
            conn.sendall(out.encode() + b"\0" + err.encode() + b"\0\n")
        except Exception:  # noqa: BLE001 - no trailer: the client decides in-process
            return


def peer_pid(conn: socket.socket) -> int:
    """The pid of the process at the other end of a Unix socket (0 when the system cannot say)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return 0
    import struct

    try:
        return int(struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, option, 12))[0])
    except (OSError, struct.error):
        return 0


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
        from rtk_policy.serve.http_hook import start_http

        httpd = start_http(resident, http_port)
    try:
        return serve_socket(resident, path or runtime.socket_path(), idle)
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
