"""The HTTP/1.1 wire format of the http hook server: a connection's buffers, strict request
parsing and answer bytes.

Only what a hook client needs: a request line, header lines, and a body framed by `Content-Length`
(no chunked bodies: 411). Anything ambiguous is refused rather than guessed (request smuggling):
bare CR or LF inside a line, folded headers, repeated `Content-Length`/`Host`, a length that is not
plain decimal digits.
"""

from __future__ import annotations

import time
from typing import Any

MAX_BODY = 1024 * 1024  #: bytes of payload at most (as the command hook's stdin)
MAX_HEAD = 16 * 1024  #: bytes of request line and headers at most
_SINGLE = ("content-length", "host", "transfer-encoding")
_TOKEN = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
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
_CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"


class Connection:
    """One client connection: what arrived and is not answered yet, what is left to send."""

    __slots__ = ("sock", "peer", "inbox", "outbox", "pending", "closing", "since", "events")

    def __init__(self, sock: Any, peer: str) -> None:
        self.sock = sock
        self.peer = peer
        self.inbox = bytearray()
        self.outbox = bytearray()
        self.pending: Any = None  #: the parsed head of a request whose body is still arriving
        self.closing = False  #: close once the outbox is sent
        self.since = time.monotonic()  #: when the current request started, or the last answer
        self.events = 0


class HttpError(Exception):
    """A request that is refused: the answer's status and JSON body."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.body = b'{"error":"' + message.encode() + b'"}'


class Request:
    """One parsed request: method, target, version, headers (lower-case names), body, close."""

    __slots__ = ("method", "target", "version", "headers", "length", "close", "body")

    def __init__(self, method: str, target: str, version: str, headers: dict[str, str]) -> None:
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
        self.length = content_length(headers)
        tokens = [t.strip().lower() for t in headers.get("connection", "").split(",")]
        self.close = version == "HTTP/1.0" or "close" in tokens
        self.body = b""


def content_length(headers: dict[str, str]) -> int:
    """The body's length: 0 without `Content-Length`; 411 when chunked; 413 when bad or too big."""
    if "transfer-encoding" in headers:
        raise HttpError(411, "send the payload with a Content-Length")
    text = headers.get("content-length")
    if text is None:
        return 0
    if not (text.isascii() and text.isdigit()) or len(text) > 8 or int(text) > MAX_BODY:
        raise HttpError(413, "payload too large or no length")
    return int(text)


def parse_head(data: bytes) -> Request:
    """The request line and headers of `data` (without the blank line); HttpError when malformed."""
    lines = data.decode("latin-1").split("\r\n")
    if any("\r" in line or "\n" in line for line in lines):
        raise HttpError(400, "bare CR or LF")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[0] or not _TOKEN.issuperset(parts[0]) or not parts[1]:
        raise HttpError(400, "bad request line")
    method, target, version = parts
    if version not in ("HTTP/1.1", "HTTP/1.0"):
        raise HttpError(505 if version.startswith("HTTP/") else 400, "HTTP/1.1 only")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep or not name or not _TOKEN.issuperset(name):
            raise HttpError(400, "bad header line")
        name, value = name.lower(), value.strip(" \t")
        if name in headers:
            if name in _SINGLE:
                raise HttpError(400, "repeated " + name)
            value = headers[name] + ", " + value
        headers[name] = value
    return Request(method, target, version, headers)


def next_request(connection: Any) -> Request | None:
    """Take the next whole request out of `connection.inbox` (None while incomplete).

    `connection.pending` holds a parsed head whose body is still arriving; a `100 Continue` goes to
    `connection.outbox` when the client asked for one. Raises HttpError for a refused request.
    """
    inbox = connection.inbox
    request = connection.pending
    if request is None:
        while inbox.startswith(b"\r\n"):  # stray line ends between requests are allowed
            del inbox[:2]
        end = inbox.find(b"\r\n\r\n", 0, MAX_HEAD + 4)
        if end < 0:
            if len(inbox) > MAX_HEAD:
                raise HttpError(431, "request head too large")
            return None
        request = parse_head(bytes(inbox[:end]))
        del inbox[: end + 4]
        connection.pending = request
        if (
            request.headers.get("expect", "").lower() == "100-continue"
            and len(inbox) < request.length
        ):
            connection.outbox += _CONTINUE
    if len(inbox) < request.length:
        return None
    request.body = bytes(inbox[: request.length])
    del inbox[: request.length]
    connection.pending = None
    return request


def reply(status: int, body: bytes, close: bool = False, allow: bool = False) -> bytes:
    """The bytes of a whole JSON answer (one write)."""
    head = (
        f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}\r\nContent-Type: application/json\r\n"
    )
    if allow:
        head += "Allow: POST\r\n"
    if close:
        head += "Connection: close\r\n"
    return (head + f"Content-Length: {len(body)}\r\n\r\n").encode() + body
