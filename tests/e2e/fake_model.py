"""A scripted fake model server on 127.0.0.1 that speaks one agent CLI's model API.

The script is always the same: the first turn asks for ONE shell command (the test's command), the
next request carries what the agent's tool answered — recorded in `tool_results`, the text the model
saw — and the model then ends the turn with a short text. Requests that offer no shell tool (titles,
routing, summaries) get a plain text answer. Every request is kept in `requests` for debugging.

The wire formats live in `tests/e2e/wires.py`; this module owns the HTTP server and the record.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from . import wires


class FakeModel:
    """One model server, started in a daemon thread on a random port of 127.0.0.1.

    `api` names the wire (a key of `wires.WIRES`); `command` is the shell command the model asks
    for, `tool_args` more arguments of that call (e.g. Gemini's `dir_path`). Use as a context
    manager, or call `start` / `stop`.
    """

    def __init__(self, api: str, command: str, **tool_args: Any) -> None:
        self.wire = wires.WIRES[api]
        self.command = command
        self.tool_args = tool_args
        self.requests: list[dict[str, Any]] = []
        self.tool_calls: list[dict[str, Any]] = []  #: the tool calls the model made
        self.tool_results: list[str] = []  #: what came back for each of them
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        """The port the server listens on."""
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        """`http://127.0.0.1:PORT` (no trailing slash)."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> FakeModel:
        """Start serving in the background."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeModel:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def answer(self, path: str, body: dict[str, Any]) -> tuple[str, bytes]:
        """The (content type, bytes) answering one request, recording what it carried."""
        with self._lock:
            self.requests.append({"path": path, "body": body})
            results = self.wire.tool_results(body)
            if results:
                self.tool_results.extend(r for r in results if r not in self.tool_results)
                return self.wire.text(path, body, "The command finished. Done.")
            if self.wire.offers_shell(body) and not self.tool_calls:
                call = self.wire.shell_call(self.command, self.tool_args)
                self.tool_calls.append(call)
                return self.wire.tool_call(path, body, call)
            return self.wire.text(path, body, "Done.")

    def describe(self) -> str:
        """A short account of the exchange, for assertion messages."""
        paths = [r["path"] for r in self.requests]
        return f"requests={paths} tool_calls={self.tool_calls} tool_results={self.tool_results}"


def _handler_for(model: FakeModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:  # keep test output clean
            pass

        def do_GET(self) -> None:  # noqa: N802 - model lists and health probes
            self._send(200, "application/json", json.dumps(model.wire.models()).encode())

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = {"_raw": raw.decode("utf-8", "replace")}
            content_type, data = model.answer(self.path, body)
            self._send(200, content_type, data)

        def _send(self, status: int, content_type: str, data: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler
