"""The resident engine: policies loaded and compiled once, answering hooks over a Unix socket (and,
optionally, Claude Code `type: "http"` hooks on loopback).

Wire protocol on the socket: the client sends `AGENT\\n` then the payload bytes and shuts down its write
side; the server answers `stdout NUL stderr NUL \\n`. Policies and config are reloaded when their files
change (one stat per file per request). The server exits after `idle` seconds without a request.
"""

from __future__ import annotations

import fcntl
import os
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from rtk_policy.client import socket_path

_MAX_REQUEST = 1024 * 1024 + 4096


class Resident:
    """A hook answerer that keeps its engine loaded and reloads it when policy or config files change."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._engine: object | None = None
        self._stamp: tuple = ()
        self.last_request = time.monotonic()

    def answer(self, agent: str, payload: bytes) -> tuple[str, str]:
        """The hook's (stdout, stderr) for one payload."""
        from rtk_policy.commands.hook import answer_payload

        self.last_request = time.monotonic()
        with self._lock:
            engine = self._current_engine()
            answer = answer_payload(payload, agent or None, engine=engine)
        return answer.stdout, answer.stderr

    def _current_engine(self) -> object | None:
        stamp = _files_stamp()
        if self._engine is None or stamp != self._stamp:
            from rtk_policy.engine import load_engine

            try:
                self._engine = load_engine()
            except Exception:  # noqa: BLE001 - the hook answers with its fail mode instead
                self._engine = None
            self._stamp = stamp
        return self._engine


def _files_stamp() -> tuple:
    """(path, mtime, size) of every policy and config file in the search path."""
    from rtk_policy.config import config_files
    from rtk_policy.policy import policy_search_path

    paths = [str(p) for p in config_files()]
    for entry in policy_search_path():
        if os.path.isdir(entry):
            paths.extend(os.path.join(entry, n) for n in sorted(os.listdir(entry)))
        else:
            paths.append(entry)
    stamp = []
    for path in paths:
        try:
            info = os.stat(path)
        except OSError:
            continue
        stamp.append((path, info.st_mtime_ns, info.st_size))
    return tuple(stamp)


def serve_socket(resident: Resident, path: str, idle: float) -> int:
    """Accept connections on `path` until idle for `idle` seconds; 0, or 1 when another server runs."""
    folder = os.path.dirname(path)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    os.chmod(folder, 0o700)
    lock = open(os.path.join(folder, "engine.lock"), "w")  # noqa: SIM115 - held for the process's life
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return 1  # another server owns the socket
    if os.path.exists(path):
        os.unlink(path)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    os.chmod(path, 0o600)
    server.listen(64)
    server.settimeout(1.0)
    try:
        while time.monotonic() - resident.last_request < idle:
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            threading.Thread(target=_handle, args=(resident, conn), daemon=True).start()
    finally:
        server.close()
        if os.path.exists(path):
            os.unlink(path)
    return 0


def _handle(resident: Resident, conn: socket.socket) -> None:
    with conn:
        conn.settimeout(10.0)
        data = _receive(conn)
        agent, _, payload = data.partition(b"\n")
        out, err = resident.answer(agent.decode("ascii", "replace").strip(), payload)
        conn.sendall(out.encode() + b"\0" + err.encode() + b"\0\n")


def _receive(conn: socket.socket) -> bytes:
    chunks, size = [], 0
    while size < _MAX_REQUEST:
        chunk = conn.recv(65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def http_server(resident: Resident, port: int) -> ThreadingHTTPServer:
    """A loopback-only server answering Claude Code http hooks: POST the payload, get the hook JSON."""

    class HookHandler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            if not _local_request(self):
                self.send_error(403, "loopback only")
                return
            length = int(self.headers.get("Content-Length") or 0)
            if length > _MAX_REQUEST:
                self.send_error(413, "payload too large")
                return
            agent = self.path.strip("/").split("/")[-1] if self.path.strip("/") else "claude"
            out, _ = resident.answer(agent, self.rfile.read(length))
            body = (out.strip() or "{}").encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            return

    return ThreadingHTTPServer(("127.0.0.1", port), HookHandler)


def _local_request(handler: BaseHTTPRequestHandler) -> bool:
    """Loopback peers only, no browser origin, and a loopback Host (against DNS rebinding)."""
    if handler.client_address[0] not in ("127.0.0.1", "::1"):
        return False
    if handler.headers.get("Origin"):
        return False
    host = (handler.headers.get("Host") or "").rsplit(":", 1)[0]
    return host in ("127.0.0.1", "localhost", "[::1]")


def serve(idle: float = 900.0, http_port: int | None = None, path: str | None = None) -> int:
    """Run the resident engine until it has been idle for `idle` seconds."""
    resident = Resident()
    if http_port is not None:
        httpd = http_server(resident, http_port)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return serve_socket(resident, path or socket_path(), idle)
