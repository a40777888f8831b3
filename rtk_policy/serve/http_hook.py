"""Claude Code `type: "http"` hooks answered by the resident engine, on loopback only.

POST the hook payload to `http://127.0.0.1:PORT/hook/claude` (the last path part names the
agent); the body of the answer is the hook JSON (`{}` for no opinion). Requests from another
address, with an `Origin` header (a browser page) or with a Host that is not a loopback name (DNS
rebinding) get 403. Claude Code treats an http hook whose server is down as "no opinion": the
command hook is the safer default, this is an option.

The server is one thread running a `selectors` loop over non-blocking sockets: HTTP/1.1 keep-alive
and pipelining (the wire format is h11's, `http_wire.py`), bodies framed by `Content-Length` only
(at most 1 MiB), heads at most 16 KiB. Every error answer (400, 403, 405, 408, 411, 413, 431,
505) closes the connection. Each turn of the loop
answers every complete request that arrived (and those arriving meanwhile, up to `BATCH`), writes
their audit records with one locked append, and only then sends the answers, so an answered decision
always has its record; `shutdown` lets the turn in progress finish.
"""

from __future__ import annotations

import selectors
import socket
import threading
import time
from typing import Any

from rtk_policy.agents import AGENTS
from rtk_policy.audit import log as audit
from rtk_policy.serve.http_wire import (
    Connection,
    HttpError,
    Request,
    answer,
    next_request,
    refusal,
)

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]", "::1")
LOOPBACK_PEERS = ("127.0.0.1", "::1")
MAX_CONNECTIONS = 256  #: more simultaneous connections are closed at once
REQUEST_TIMEOUT = 10.0  #: seconds a started request may take to arrive whole (else 408)
IDLE_TIMEOUT = 120.0  #: seconds a keep-alive connection may wait for its next request
BATCH = 32  #: audit records written by one append at most (a turn stops taking requests then)
_READ_SIZE = 65536
_BUFFER_LIMIT = 2 * 1024 * 1024  #: unanswered bytes held per connection before it stops reading


class HttpHookServer:
    """The http hook server: `serve_forever`, `shutdown`, `server_close`, `server_address`."""

    def __init__(self, resident: Any, host: str, port: int) -> None:
        family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
        self.resident = resident
        self.socket = socket.socket(family, socket.SOCK_STREAM)
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.socket.bind((host.strip("[]"), port))
        self.socket.listen(128)
        self.socket.setblocking(False)
        self.server_address = self.socket.getsockname()
        self._selector = selectors.DefaultSelector()
        self._selector.register(self.socket, selectors.EVENT_READ, None)
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._selector.register(self._wake_r, selectors.EVENT_READ, "wake")
        self._connections: dict[int, Connection] = {}
        self._stalled: dict[int, Connection] = {}  #: connections with requests left unanswered
        self._stopping = False
        self._running = threading.Event()
        self._stopped = threading.Event()
        self._stopped.set()

    # -- the loop ---------------------------------------------------------------------------------

    def serve_forever(self, poll_interval: float = 0.5) -> None:
        """Answer requests until `shutdown` (the turn in progress, audit included, completes).

        One turn: wait for something to arrive; answer every complete request; look again without
        waiting and answer what arrived meanwhile (up to `BATCH` records), so that one locked append
        writes the audit records of several decisions; write them; send the answers.
        """
        self._stopped.clear()
        self._running.set()
        checked = time.monotonic()
        try:
            while not self._stopping:
                touched: dict[int, Connection] = {}
                records: list[Any] = []
                stalled = [c for c in self._stalled.values() if len(c.outbox) < _BUFFER_LIMIT]
                if self._poll(0 if stalled else poll_interval, touched, records) or stalled:
                    for connection in stalled:  # requests that waited for room in the outbox
                        if connection.sock.fileno() >= 0:
                            touched[id(connection)] = connection
                            self._take_requests(connection, records)
                    while len(records) < BATCH and self._poll(0, touched, records):
                        pass
                if records:
                    audit.write_records(records)
                for connection in touched.values():
                    if connection.sock.fileno() >= 0:
                        self._send(connection)
                now = time.monotonic()
                if now - checked > 1.0:
                    checked = now
                    self._expire(now)
        finally:
            self._running.clear()
            self._stopped.set()

    def _poll(self, timeout: float, touched: dict[int, Connection], records: list[Any]) -> bool:
        """One look at the sockets: accept, read, and answer the complete requests (the answers wait
        in their outboxes until the turn's audit records are written). True when anything happened.
        """
        events = self._selector.select(timeout)
        for key, mask in events:
            connection = key.data
            if connection is None:
                self._accept()
            elif connection == "wake":
                self._wake_r.recv(4096)
            else:
                try:
                    if mask & selectors.EVENT_WRITE and id(connection) not in touched:
                        self._send(connection)  # answers of earlier turns only: they are audited
                    if mask & selectors.EVENT_READ and self._receive(connection):
                        touched[id(connection)] = connection
                        self._take_requests(connection, records)
                except Exception:  # noqa: BLE001 - one bad connection must not stop the server
                    if connection.sock.fileno() >= 0:
                        self._close(connection)
        return bool(events)

    def shutdown(self) -> None:
        """Stop `serve_forever` and wait until it has returned."""
        self._stopping = True
        if self._running.is_set():
            self._wake_w.send(b"x")
            self._stopped.wait()

    def server_close(self) -> None:
        """Close the listening socket and every connection."""
        for connection in list(self._connections.values()):
            self._close(connection)
        self._selector.close()
        self.socket.close()
        self._wake_r.close()
        self._wake_w.close()

    # -- connections ------------------------------------------------------------------------------

    def _accept(self) -> None:
        while True:
            try:
                sock, address = self.socket.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return
            if len(self._connections) >= MAX_CONNECTIONS:
                sock.close()
                continue
            sock.setblocking(False)
            # an answer is one write, but a client's head and body may be two: no Nagle delays
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            connection = Connection(sock, address[0])
            self._connections[sock.fileno()] = connection
            self._watch(connection)

    def _receive(self, connection: Connection) -> bool:
        """Read what arrived; True when there may be a request to answer."""
        try:
            chunk = connection.sock.recv(_READ_SIZE)
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            chunk = b""
        if not chunk:  # the peer closed (or reset): a partial request is dropped unanswered
            self._close(connection)
            return False
        if not connection.inbox and connection.pending is None:
            connection.since = time.monotonic()
        connection.inbox += chunk
        return not connection.closing

    def _take_requests(self, connection: Connection, records: list[Any]) -> None:
        """Answer every complete request in the connection's inbox, into its outbox (when the
        outbox is full, the rest wait in `_stalled` until the client has read enough)."""
        self._stalled.pop(id(connection), None)
        while not connection.closing:
            if len(connection.outbox) >= _BUFFER_LIMIT:
                self._stalled[id(connection)] = connection
                return
            try:
                request = next_request(connection)
            except HttpError as error:
                connection.outbox += refusal(error.status, error.body)
                connection.closing = True
                return
            if request is None:
                return
            connection.outbox += self._respond(connection, request, records)
            connection.since = time.monotonic()

    def _respond(self, connection: Connection, request: Request, records: list[Any]) -> bytes:
        """The answer to one complete request (the hook's JSON, or a refusal)."""
        if not local_request(connection.peer, request.headers):
            connection.closing = True
            return refusal(403, b'{"error":"loopback only"}')
        if request.method != "POST":
            connection.closing = True
            return refusal(405, b'{"error":"POST the hook payload"}', allow=True)
        agent = request.target.rstrip("/").rsplit("/", 1)[-1]
        try:
            out, _ = self.resident.answer(
                agent if agent in AGENTS else "claude", request.body, records=records
            )
        except Exception:  # noqa: BLE001 - the hook answers itself; this is a last resort
            connection.closing = True
            return refusal(500, b'{"error":"internal error"}')
        return answer(connection, (out.strip() or "{}").encode())

    def _send(self, connection: Connection) -> None:
        if connection.outbox:
            try:
                sent = connection.sock.send(connection.outbox)
            except (BlockingIOError, InterruptedError):
                sent = 0
            except OSError:
                self._close(connection)
                return
            del connection.outbox[:sent]
        if not connection.outbox and connection.closing:
            self._close(connection)
            return
        self._watch(connection)

    def _watch(self, connection: Connection) -> None:
        """Register the events the connection waits for: reading while it has room, writing while
        it has something left to send."""
        events = 0
        if not connection.closing and len(connection.inbox) < _BUFFER_LIMIT:
            events |= selectors.EVENT_READ
        if connection.outbox:
            events |= selectors.EVENT_WRITE
        if events == connection.events:
            return
        if connection.events == 0:
            self._selector.register(connection.sock, events, connection)
        elif events == 0:
            self._selector.unregister(connection.sock)
        else:
            self._selector.modify(connection.sock, events, connection)
        connection.events = events

    def _expire(self, now: float) -> None:
        """Answer 408 to requests that take too long to arrive; close long-idle connections and
        those whose client does not read its answers."""
        for connection in list(self._connections.values()):
            started = bool(connection.inbox) or connection.pending is not None
            if connection.outbox:
                if now - connection.since > IDLE_TIMEOUT:
                    self._close(connection)
            elif started and now - connection.since > REQUEST_TIMEOUT:
                connection.outbox += refusal(408, b'{"error":"request timeout"}')
                connection.closing = True
                self._send(connection)
            elif not started and now - connection.since > IDLE_TIMEOUT:
                self._close(connection)

    def _close(self, connection: Connection) -> None:
        self._connections.pop(connection.sock.fileno(), None)
        self._stalled.pop(id(connection), None)
        if connection.events:
            self._selector.unregister(connection.sock)
            connection.events = 0
        connection.sock.close()


def http_server(resident: Any, port: int, host: str = "127.0.0.1") -> HttpHookServer:
    """A loopback http server answering hooks with `resident.answer` (not started)."""
    if host not in LOOPBACK_HOSTS:
        raise ValueError("the http hook listens on loopback only")
    return HttpHookServer(resident, host, port)


def local_request(peer: str, headers: Any) -> bool:
    """Loopback peers only, no browser `Origin`, and a loopback `Host` (against DNS rebinding).

    `headers` maps lower-case header names to values.
    """
    if peer not in LOOPBACK_PEERS:
        return False
    if headers.get("origin") is not None:
        return False
    host = (headers.get("host") or "").strip().lower()
    if host.startswith("["):
        host = host.split("]", 1)[0] + "]"
    else:
        host = host.rsplit(":", 1)[0]
    return host in LOOPBACK_HOSTS


def start_http(resident: Any, port: int) -> HttpHookServer:
    """Serve http hooks on 127.0.0.1:`port` in a background thread; return the server."""
    httpd = http_server(resident, port)
    threading.Thread(target=httpd.serve_forever, name="rtk-policy-http", daemon=True).start()
    httpd._running.wait(5)
    return httpd
