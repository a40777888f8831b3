"""Claude Code `type: "http"` hooks answered by the resident engine, on loopback only.

POST the hook payload to `http://127.0.0.1:PORT/hook/claude` (the last path part names the agent); the
body of the answer is the hook JSON (`{}` for no opinion). Requests from another address, with an
`Origin` header (a browser page) or with a Host that is not a loopback name (DNS rebinding) get 403.
Claude Code treats an http hook whose server is down as "no opinion": the command hook is the safer
default, this is an option.
"""

from __future__ import annotations

import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from rtk_policy.agents import AGENTS

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]", "::1")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128


def http_server(resident: Any, port: int, host: str = "127.0.0.1") -> ThreadingHTTPServer:
    """A loopback http server answering hooks with `resident.answer` (not started)."""
    if host not in LOOPBACK_HOSTS:
        raise ValueError("the http hook listens on loopback only")

    class HookHandler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            # headers and body are two writes: without this, Nagle and delayed ACKs add ~40 ms
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            if not local_request(self.client_address[0], self.headers):
                self._reply(403, b'{"error":"loopback only"}')
                return
            try:
                length = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                length = -1
            if not 0 <= length <= 1024 * 1024:
                self._reply(413, b'{"error":"payload too large or no length"}')
                return
            agent = self.path.rstrip("/").rsplit("/", 1)[-1]
            out, _ = resident.answer(
                agent if agent in AGENTS else "claude", self.rfile.read(length)
            )
            self._reply(200, (out.strip() or "{}").encode())

        def do_GET(self) -> None:  # noqa: N802
            self._reply(405, b'{"error":"POST the hook payload"}')

        def _reply(self, status: int, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            return

    return _Server((host, port), HookHandler)


def local_request(peer: str, headers: Any) -> bool:
    """Loopback peers only, no browser `Origin`, and a loopback `Host` (against DNS rebinding)."""
    if peer not in ("127.0.0.1", "::1"):
        return False
    if headers.get("Origin"):
        return False
    host = (headers.get("Host") or "").strip().lower()
    if host.startswith("["):
        host = host.split("]", 1)[0] + "]"
    else:
        host = host.rsplit(":", 1)[0]
    return host in LOOPBACK_HOSTS


def start_http(resident: Any, port: int) -> ThreadingHTTPServer:
    """Serve http hooks on 127.0.0.1:`port` in a background thread; return the server."""
    httpd = http_server(resident, port)
    threading.Thread(target=httpd.serve_forever, name="rtk-policy-http", daemon=True).start()
    return httpd
