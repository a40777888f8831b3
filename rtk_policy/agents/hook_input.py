"""Reading a hook's stdin defensively: a size limit, a time limit, BOMs, UTF-8 and JSON checks.

Every problem comes back as a one-line message (never an exception) so the hook can answer with its
fail mode and exit 0.
"""

from __future__ import annotations

import os
import select
import time

from rtk_policy.util import json_codec

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Any

STDIN_LIMIT = 1024 * 1024  #: bytes; more is refused (as RTK does)
STDIN_TIMEOUT = 5.0  #: seconds to wait for the host to close stdin
#: the shortest wait `$RTK_POLICY_STDIN_TIMEOUT` may set: a shorter one would cut off the payload of
#: a host writing it at once, and a cut-off payload gets the fail mode's answer (open: no opinion)
STDIN_TIMEOUT_MIN = 0.5
_BOM = b"\xef\xbb\xbf"


def stdin_timeout() -> float:
    """The time limit: `$RTK_POLICY_STDIN_TIMEOUT` seconds when set and valid (at least
    `STDIN_TIMEOUT_MIN`), else 5."""
    try:
        value = float(os.environ.get("RTK_POLICY_STDIN_TIMEOUT", ""))
    except ValueError:
        return STDIN_TIMEOUT
    return max(value, STDIN_TIMEOUT_MIN) if value > 0 else STDIN_TIMEOUT


def _fileno(stream: Any) -> int | None:
    try:
        return int(stream.fileno())
    except (AttributeError, OSError, ValueError):
        return None


def _read_fd(fd: int, limit: int, timeout: float) -> tuple[bytes, bool]:
    """Up to `limit + 1` bytes from `fd`; the flag is True when the time ran out first.

    Waits with `select` (no thread: `threading` costs a cold hook ~2 ms of imports); a descriptor
    `select` cannot wait on is read by a helper thread instead."""
    chunks: list[bytes] = []
    size, deadline = 0, time.monotonic() + timeout
    try:
        while size <= limit:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                return b"".join(chunks), True
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except (ValueError, OSError):  # e.g. a descriptor above FD_SETSIZE, or one select refuses
        if chunks:
            return b"".join(chunks), False  # a read failed midway: what was read, as before
        return _read_fd_threaded(fd, limit, max(deadline - time.monotonic(), 0.0))
    return b"".join(chunks), False


def _read_fd_threaded(fd: int, limit: int, timeout: float) -> tuple[bytes, bool]:
    """`_read_fd` with a reading thread and a timed wait on it."""
    import threading

    chunks: list[bytes] = []
    done = threading.Event()

    def pump() -> None:
        size = 0
        try:
            while size <= limit:
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
        except OSError:
            pass
        finally:
            done.set()

    threading.Thread(target=pump, name="rtk-policy-stdin", daemon=True).start()
    finished = done.wait(timeout)
    return b"".join(list(chunks)), not finished


def read_stdin(
    stdin: IO[Any] | None, limit: int = STDIN_LIMIT, timeout: float | None = None
) -> tuple[bytes, str]:
    """The bytes of stdin and a problem message ("" when none)."""
    if stdin is None:
        return b"", ""
    fd = _fileno(stdin)
    timeout = stdin_timeout() if timeout is None else timeout
    if fd is not None:
        data, timed_out = _read_fd(fd, limit, timeout)
    else:
        source = getattr(stdin, "buffer", stdin)
        data = source.read(limit + 1)
        if isinstance(data, str):
            data = data.encode("utf-8", "surrogateescape")
        timed_out = False
    if len(data) > limit:
        return b"", f"stdin exceeds the {limit}-byte limit"
    if timed_out:
        return data, f"stdin was not closed within {timeout:g} s"
    return data, ""


def decode_payload(data: bytes) -> tuple[dict[str, Any] | None, str]:
    """The JSON object in `data` (BOMs and surrounding whitespace removed), or None and a
    message."""
    while data.startswith(_BOM):
        data = data[len(_BOM) :]
    data = data.strip()
    if not data:
        return None, "empty stdin: expected the hook's JSON payload"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        return None, f"stdin is not valid UTF-8 (byte {error.start}: {error.reason})"
    try:
        payload = json_codec.loads(text)
    except RecursionError:
        return None, "stdin JSON is nested too deeply"
    except ValueError as error:  # a json.JSONDecodeError
        msg, line, column = (getattr(error, name, "?") for name in ("msg", "lineno", "colno"))
        return None, f"stdin is not valid JSON: {msg} (line {line}, column {column})"
    if not isinstance(payload, dict):
        return None, f"stdin JSON is a {type(payload).__name__}, not an object"
    return payload, ""
