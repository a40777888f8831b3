"""The HTTP/1.1 wire format of the http hook server, on h11: a connection's buffers and state
machine, its requests, and the answers' bytes.

h11 (the HTTP/1.1 state machine httpx and uvicorn are built on) parses each request's head,
frames its body, writes the answers and says when a connection must close (HTTP/1.0,
`Connection: close`). Only `serve --http` imports this module, so the command hook never loads h11.

The server is stricter than h11 where a hook client never needs leniency, against request
smuggling: a head is checked before h11 reads it (no bare CR or LF, no folded header line, which
h11 accepts as RFC 9112 lets a recipient), and a request is refused unless it is HTTP/1.0 or 1.1
(505), its body is framed by a `Content-Length` (a `Transfer-Encoding` gets 411: h11 would read a
chunked body) of at most 1 MiB (413), and its head has at most 16 KiB (431). h11 refuses a bad or
conflicting `Content-Length`, a missing or repeated `Host`, a bad request or header line (400).
Every refusal closes the connection. h11 is fed one request at a time, so the next head of a
pipelined connection is checked here before h11 reads it.
"""

from __future__ import annotations

import time
from typing import Any

import h11

MAX_BODY = 1024 * 1024  #: bytes of payload at most (as the command hook's stdin)
MAX_HEAD = 16 * 1024  #: bytes of request line and headers at most
_REASONS = {
    100: "Continue",
    200: "OK",
    400: "Bad Request",
    403: "Forbidden",
    405: "Method Not Allowed",
    408: "Request Timeout",
    411: "Length Required",
    413: "Content Too Large",
    431: "Request Header Fields Too Large",
    500: "Internal Server Error",
    505: "HTTP Version Not Supported",
}


class Connection:
    """One client connection: what arrived and is not parsed yet, what is left to send, and its
    h11 state machine."""

    __slots__ = (
        "sock", "peer", "inbox", "outbox", "wire", "pending", "closing", "since", "events",
        "request_close",
    )  # fmt: skip

    def __init__(self, sock: Any, peer: str) -> None:
        self.sock = sock
        self.peer = peer
        self.inbox = bytearray()  #: bytes received and not given to h11 yet
        self.outbox = bytearray()
        self.wire = new_wire()
        self.pending: Any = None  #: the parsed head of a request whose body is still arriving
        self.closing = False  #: close once the outbox is sent
        self.since = time.monotonic()  #: when the current request started, or the last answer
        self.events = 0
        self.request_close = False  #: the request just taken asked to close the connection


class HttpError(Exception):
    """A request that is refused: the answer's status and JSON body."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.body = b'{"error":"' + message.encode() + b'"}'


class Request:
    """One parsed request: method, target, version, headers (lower-case names), body, close."""

    __slots__ = ("method", "target", "version", "headers", "length", "close", "body")

    def __init__(self, event: Any) -> None:
        self.method = event.method.decode("latin-1")
        self.target = event.target.decode("latin-1")
        self.version = "HTTP/" + event.http_version.decode("latin-1")
        headers: dict[str, str] = {}
        for name, value in event.headers.raw_items():  # as sent (iterating lower-cases them,
            key, text = name.decode("latin-1").lower(), value.decode("latin-1")  # but slowly)
            headers[key] = headers[key] + ", " + text if key in headers else text
        self.headers = headers
        self.length = content_length(headers)
        tokens = [t.strip().lower() for t in headers.get("connection", "").split(",")]
        self.close = self.version == "HTTP/1.0" or "close" in tokens
        self.body = b""


def content_length(headers: dict[str, str]) -> int:
    """The body's length (h11 checked its form): 0 without one; 411 when a Transfer-Encoding
    frames the body; 413 when it is too large."""
    if "transfer-encoding" in headers:
        raise HttpError(411, "send the payload with a Content-Length")
    length = int(headers.get("content-length", "0"))
    if length > MAX_BODY:
        raise HttpError(413, "payload too large")
    return length


def strict_head(head: bytes) -> None:
    """Refuse what h11 would accept and a hook client never sends: a bare CR or LF inside the
    head, a folded (continued) header line."""
    lines = head.split(b"\r\n")
    if any(b"\r" in line or b"\n" in line for line in lines):
        raise HttpError(400, "bare CR or LF")
    if any(line[:1] in (b" ", b"\t") for line in lines[1:]):
        raise HttpError(400, "folded header line")


def next_request(connection: Any) -> Request | None:
    """Take the next whole request out of `connection.inbox` (None while incomplete).

    `connection.pending` holds a parsed head whose body is still arriving; a `100 Continue` goes
    to `connection.outbox` when the client waits for one. Raises HttpError for a refused request.
    """
    inbox, wire = connection.inbox, connection.wire
    request = connection.pending
    if request is None:
        while inbox.startswith(b"\r\n"):  # stray line ends between requests are allowed
            del inbox[:2]
        end = inbox.find(b"\r\n\r\n", 0, MAX_HEAD + 4)
        if end < 0:
            if len(inbox) > MAX_HEAD:
                raise HttpError(431, "request head too large")
            return None
        strict_head(bytes(inbox[:end]))
        request = connection.pending = _read_head(wire, bytes(inbox[: end + 4]))
        del inbox[: end + 4]
        if wire.they_are_waiting_for_100_continue and len(inbox) < request.length:
            connection.outbox += wire.send(
                h11.InformationalResponse(status_code=100, headers=[], reason=b"Continue")
            )
    if len(inbox) < request.length:
        return None
    request.body = _read_body(wire, bytes(inbox[: request.length]))
    del inbox[: request.length]
    connection.pending = None
    connection.request_close = request.close
    return request


def _read_head(wire: Any, head: bytes) -> Request:
    """h11's reading of one whole head; HttpError when it or this server refuses it."""
    wire.receive_data(head)
    try:
        event = wire.next_event()
    except h11.RemoteProtocolError as error:
        raise _refused(error) from None
    if type(event) is not h11.Request:  # a whole head is always a request or an error
        raise HttpError(400, "bad request")
    if event.http_version not in (b"1.1", b"1.0"):
        raise HttpError(505, "HTTP/1.1 only")
    return Request(event)


def _refused(error: Any) -> HttpError:
    """The refusal of a request h11 finds malformed (its status is h11's hint)."""
    status = error.error_status_hint
    return HttpError(status, _REASONS.get(status, "refused").lower())


def _read_body(wire: Any, body: bytes) -> bytes:
    """The body h11 reads out of the `Content-Length` bytes of the request."""
    wire.receive_data(body)
    parts = []
    while True:
        try:
            event = wire.next_event()
        except h11.RemoteProtocolError as error:
            raise _refused(error) from None
        if type(event) is h11.Data:
            parts.append(bytes(event.data))
        elif type(event) is h11.EndOfMessage:
            return b"".join(parts)
        else:  # the body was given whole: nothing else can come
            raise HttpError(400, "bad body")


def answer(connection: Any, body: bytes) -> bytes:
    """The bytes of a 200 JSON answer to the request just taken (h11 read it whole: both sides of
    the cycle are done); `connection.closing` is set when the request asked to close (HTTP/1.0,
    `Connection: close`), else the connection's next request cycle starts.

    The answer's bytes are the ones h11 writes for this response (`tests/test_serve_http.py`
    compares them), written here: sending an answer through h11's state machine (three events,
    their header checks, the next cycle) cost ~60 % of a request's wire time, for an answer whose
    form never varies. A fresh h11 connection then reads the next request, as `start_next_cycle`
    would have let the old one (nothing of a finished cycle carries over to the next)."""
    if connection.request_close:
        connection.closing = True
        end = b"\r\nConnection: close\r\n\r\n"
    else:
        connection.wire = new_wire()
        end = b"\r\n\r\n"
    return _HEAD + str(len(body)).encode() + end + body


def new_wire() -> Any:
    """The h11 state machine that reads one connection's next request."""
    return h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD + 4)


#: how h11 writes a 200 JSON answer's head, up to its length (then `Connection: close` if closing)
_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "


def refusal(status: int, body: bytes, allow: bool = False) -> bytes:
    """The bytes of a refusal (the connection closes after it, whatever state h11 is in)."""
    head = (
        f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}\r\nContent-Type: application/json\r\n"
    )
    if allow:
        head += "Allow: POST\r\n"
    return (head + f"Connection: close\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body
