"""The audit log file: hash-chained, locked appends and size rotation (DESIGN §8).

Every append happens under an exclusive `flock` on a sibling lock file (`audit.jsonl.lock`, never
rotated), so the steps "read the last hash → maybe rotate → write one line" are atomic across
processes. The line goes out in a single `os.write` on an `O_APPEND` descriptor, so readers never
see a torn line.

A process remembers, per log path, the hash it wrote last together with the file's (device, inode,
size, mtime) right after its write. Under the lock, when one `fstat` still shows exactly that file,
nobody has written to it since (every writer appends, so the size would differ; a rotation changes
the inode), and the remembered hash is the last one: the tail is not read again. Otherwise (another
process appended, the file was rotated, replaced or truncated) the tail is read as before.
"""

from __future__ import annotations

import fcntl
import json
import json.encoder
import os
from collections.abc import Callable, Iterator

from rtk_policy.util.hashing import sha256  # not hashlib: spares the hook the OpenSSL load

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~4 ms on a cold hook)
if TYPE_CHECKING:
    from typing import Any

#: How many rotated files (`audit.jsonl.1` … `.N`) are kept; older ones are deleted.
KEEP_ROTATED = 5
#: `prev` of the very first record of a log.
GENESIS = ""
_TAIL_CHUNK = 8192


def json_encoder(
    default: Callable[[Any], Any],
    sort_keys: bool = False,
    compact: bool = False,
    ensure_ascii: bool = True,
) -> Callable[[Any], str]:
    """`lambda obj: json.dumps(obj, default=default, sort_keys=sort_keys, ensure_ascii=ensure_ascii,
    separators=(",", ":") if compact else None)`, with the encoder built once instead of per call.

    No check for circular containers (the records are fresh trees of plain values).
    """
    item, key = (",", ":") if compact else (", ", ": ")
    make = json.encoder.c_make_encoder
    if make is None:  # pragma: no cover - an interpreter without the C accelerator
        return json.JSONEncoder(
            default=default, sort_keys=sort_keys, ensure_ascii=ensure_ascii, separators=(item, key)
        ).encode
    quote = json.encoder.encode_basestring_ascii if ensure_ascii else json.encoder.encode_basestring
    chunks = make(None, default, quote, None, key, item, sort_keys, False, True)
    return lambda obj: "".join(chunks(obj, 0))


_canonical_json = json_encoder(str, sort_keys=True, compact=True, ensure_ascii=False)


def canonical_hash(record: dict[str, object]) -> str:
    """sha256 hex of the canonical JSON (sorted keys, no spaces) of `record` without its `hash`."""
    body = record if "hash" not in record else {k: v for k, v in record.items() if k != "hash"}
    return sha256(_canonical_json(body).encode("utf-8")).hexdigest()


def rotated_path(path: str, number: int) -> str:
    """The name of the `number`-th rotated file of `path` (`audit.jsonl.1` is the newest)."""
    return f"{path}.{number}"


def log_files(path: str) -> list[str]:
    """The existing files of the log at `path`, oldest first: `.N` … `.1`, then `path` itself."""
    files = [rotated_path(path, n) for n in range(KEEP_ROTATED, 0, -1)]
    files.append(path)
    return [name for name in files if os.path.exists(name)]


def last_line(fd: int, size: int) -> bytes:
    """The last complete, non-empty line of the open file `fd` of `size` bytes (b"" when none).

    Reads backwards from the end in growing chunks, so a long log costs a few small reads.
    """
    chunk = _TAIL_CHUNK
    while True:
        start = max(0, size - chunk)
        data = os.pread(fd, size - start, start)
        stripped = data.rstrip(b"\n")
        cut = stripped.rfind(b"\n")
        if cut >= 0:
            return stripped[cut + 1 :]
        if start == 0:
            return stripped
        chunk *= 4


def last_hash(fd: int, size: int) -> str:
    """The `hash` of the last record in the open file `fd` (GENESIS when the file is empty).

    A last line that is not a JSON record (a torn tail) chains from its sha256; `verify` reports it.
    """
    line = last_line(fd, size)
    if not line:
        return GENESIS
    try:
        value = json.loads(line).get("hash")
        if isinstance(value, str):
            return value
    except (ValueError, AttributeError):
        pass
    return sha256(line).hexdigest()


#: log path -> ((device, inode, size, mtime) of the file right after our last append, its last hash)
_written: dict[str, tuple[tuple[int, int, int, int], str]] = {}


def _identity(info: os.stat_result) -> tuple[int, int, int, int]:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


def append(path: str, build: Callable[[str], tuple[str, str]], max_bytes: int) -> None:
    """Append the lines `build(prev_hash)` to the log at `path`, rotating it first when too big.

    `build` receives the hash of the previous record and returns the whole text (lines with their
    newlines) and the hash of its last record. Raises OSError on I/O failure; the caller decides
    what to do with it.
    """
    try:
        lock_fd = os.open(path + ".lock", os.O_WRONLY | os.O_CREAT, 0o600)
    except FileNotFoundError:  # the folder does not exist yet
        folder = os.path.dirname(path)
        if folder:
            os.makedirs(folder, mode=0o700, exist_ok=True)
        lock_fd = os.open(path + ".lock", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX)
        _append_locked(path, build, max_bytes)
    finally:
        os.close(lock_fd)  # closing releases the lock


def _append_locked(path: str, build: Callable[[str], tuple[str, str]], max_bytes: int) -> None:
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        info = os.fstat(fd)
        size = info.st_size
        known = _written.get(path)
        ours = known is not None and known[0] == _identity(info)  # nobody wrote since we did
        if ours:
            prev = known[1]  # type: ignore[index]
        else:
            prev = last_hash(fd, size) if size else _rotated_last_hash(path)
        text, last = build(prev)
        data = text.encode("utf-8")
        if size and max_bytes > 0 and size + len(data) > max_bytes:
            os.close(fd)
            fd = -1
            rotate(path)
            fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        elif size and not ours and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data  # never glue a record onto a torn last line
        _written.pop(path, None)  # until the write is known to be whole
        written = os.write(fd, data)
        while written < len(data):  # a regular file takes it whole; be safe anyway
            written += os.write(fd, data[written:])
        if data.endswith(b"\n"):
            _written[path] = (_identity(os.fstat(fd)), last)
    finally:
        if fd >= 0:
            os.close(fd)


def _rotated_last_hash(path: str) -> str:
    """The last hash of `audit.jsonl.1`, for a fresh current file after a rotation."""
    try:
        fd = os.open(rotated_path(path, 1), os.O_RDONLY)
    except OSError:
        return GENESIS
    try:
        return last_hash(fd, os.fstat(fd).st_size)
    finally:
        os.close(fd)


def rotate(path: str) -> None:
    """Shift `path.N-1` → `path.N` … `path` → `path.1`, dropping the oldest. Call under the lock."""
    oldest = rotated_path(path, KEEP_ROTATED)
    if os.path.exists(oldest):
        os.unlink(oldest)
    for number in range(KEEP_ROTATED - 1, 0, -1):
        source = rotated_path(path, number)
        if os.path.exists(source):
            os.replace(source, rotated_path(path, number + 1))
    os.replace(path, rotated_path(path, 1))


def read_lines(path: str) -> Iterator[tuple[int, bytes]]:
    """(1-based line number, raw line without its newline) for every line of the file at `path`."""
    with open(path, "rb") as handle:
        for number, line in enumerate(handle, 1):
            yield number, line.rstrip(b"\n")
