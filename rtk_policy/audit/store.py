"""The audit log file: hash-chained, locked appends, size rotation and the anchor (DESIGN §8).

Every append happens under an exclusive `flock` on a sibling lock file (`audit.jsonl.lock`, never
rotated), so the steps "read the anchor → maybe rotate → write the lines → forward them → write
the anchor" are atomic across processes. The lines go out in a single `os.write` on an `O_APPEND`
descriptor, so readers never see a torn line.

The chain continues from the anchor's head (`audit.anchor`, see `audit/anchor.py`), not from
whatever the log ends with: a log cut short, emptied or re-chained behind the anchor's back gets its
next record linked to the hash that is no longer there, and `verify` shows the gap. Records after
the anchored size that chain from its head (a writer that stopped between its two writes) are taken
in. A log without an anchor (written before anchors, or the anchor deleted) is adopted: counted as
it stands, the anchor noting it.

A process remembers, per log path, the anchor it wrote last together with the log's (device, inode,
size, mtime) right after its write. Under the lock, when one `fstat` still shows exactly that file,
nobody has written to it since (every writer appends, so the size would differ; a rotation changes
the inode), and the remembered anchor is the current one: it is not read again.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator

from rtk_policy.audit import anchor as audit_anchor
from rtk_policy.util import json_codec
from rtk_policy.util.filelock import lock, unlock
from rtk_policy.util.hashing import sha256  # not hashlib: spares the hook the OpenSSL load

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: How many rotated files (`audit.jsonl.1` … `.N`) are kept; older ones are deleted.
KEEP_ROTATED = 5
#: `prev` of the very first record of a log.
GENESIS = ""
#: at most this many bytes past the anchored size are read to take records in (see `_take_in`)
_TAKE_IN_LIMIT = 1 << 20


_canonical_json = json_codec.encoder(str, sort_keys=True, compact=True, ensure_ascii=False)


def canonical_hash(record: dict[str, object], digest: Callable[[bytes], Any] = sha256) -> str:
    """sha256 hex (or `digest`'s, e.g. a keyed `hmac_sha256`) of the canonical JSON (sorted keys,
    no spaces) of `record` without its `hash`."""
    body = record if "hash" not in record else {k: v for k, v in record.items() if k != "hash"}
    return digest(_canonical_json(body).encode("utf-8")).hexdigest()


def rotated_path(path: str, number: int) -> str:
    """The name of the `number`-th rotated file of `path` (`audit.jsonl.1` is the newest)."""
    return f"{path}.{number}"


def log_files(path: str) -> list[str]:
    """The existing files of the log at `path`, oldest first: `.N` … `.1`, then `path` itself."""
    files = [rotated_path(path, n) for n in range(KEEP_ROTATED, 0, -1)]
    files.append(path)
    return [name for name in files if os.path.exists(name)]


#: log path -> ((device, inode, size, mtime) of the file right after our last append, its anchor)
_written: dict[str, tuple[tuple[int, int, int, int], dict[str, Any]]] = {}
#: `sink(text, anchor)`: forwards the lines just written, returns "" or why it could not
Sink = Callable[[str, "dict[str, Any]"], str]


def _identity(info: os.stat_result) -> tuple[int, int, int, int]:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


def read_anchor(path: str) -> tuple[dict[str, Any] | None, str]:
    """The anchor of the log at `path` (`audit_anchor.load`'s answer), read under the log's lock
    held shared, so that an append in progress is not seen half-written."""
    try:
        lock_fd = os.open(path + ".lock", os.O_RDONLY)
    except OSError:  # no lock file: nothing was ever appended (or it was deleted)
        return audit_anchor.load(audit_anchor.anchor_path(path))
    try:
        lock(lock_fd, shared=True)
        try:
            return audit_anchor.load(audit_anchor.anchor_path(path))
        finally:
            unlock(lock_fd)
    finally:
        os.close(lock_fd)


def append(
    path: str,
    build: Callable[[str], tuple[str, list[str]]],
    max_bytes: int,
    sink: Sink | None = None,
    keyed: bool = False,
) -> None:
    """Append the lines `build(prev_hash)` to the log at `path`, rotating it first when too big,
    then hand them to `sink` (syslog) and update the anchor.

    `build` receives the hash of the previous record and returns the whole text (lines with their
    newlines) and the hashes of its records, in order; `keyed` says they are HMACs. Raises OSError
    when the log cannot be written; the caller decides what to do with it. An anchor that cannot
    be written costs one line on stderr (the next append takes the records in).
    """
    try:
        lock_fd = os.open(path + ".lock", os.O_WRONLY | os.O_CREAT, 0o600)
    except FileNotFoundError:  # the folder does not exist yet
        folder = os.path.dirname(path)
        if folder:
            os.makedirs(folder, mode=0o700, exist_ok=True)
        lock_fd = os.open(path + ".lock", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        lock(lock_fd)
        try:
            _append_locked(path, build, max_bytes, sink, keyed)
        finally:
            unlock(lock_fd)
    finally:
        os.close(lock_fd)


def _append_locked(
    path: str,
    build: Callable[[str], tuple[str, list[str]]],
    max_bytes: int,
    sink: Sink | None,
    keyed: bool,
) -> None:
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        info = os.fstat(fd)
        size = info.st_size
        known = _written.get(path)
        if known is not None and known[0] == _identity(info):  # nobody wrote since we did
            anchor, torn = known[1], False
        else:
            anchor = _current_anchor(path, fd, size)
            torn = size > 0 and os.pread(fd, 1, size - 1) != b"\n"
        text, hashes = build(anchor["head"])
        data = text.encode("utf-8")
        if size and max_bytes > 0 and size + len(data) > max_bytes:
            os.close(fd)
            fd = -1
            rotate(path)
            audit_anchor.rotated(anchor, KEEP_ROTATED)
            fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        elif torn:
            data = b"\n" + data  # never glue a record onto a torn last line
        _written.pop(path, None)  # until the write is known to be whole
        written = os.write(fd, data)
        while written < len(data):  # a regular file takes it whole; be safe anyway
            written += os.write(fd, data[written:])
        info = os.fstat(fd)
        audit_anchor.appended(anchor, hashes, info.st_size)
        anchor["keyed"] = keyed
        if sink is not None:
            audit_anchor.forwarded(anchor, len(hashes), sink(text, anchor))
        if _save_anchor(path, anchor) and data.endswith(b"\n"):
            _written[path] = (_identity(info), anchor)
    finally:
        if fd >= 0:
            os.close(fd)


def _save_anchor(path: str, anchor: dict[str, Any]) -> bool:
    """Write the anchor of the log at `path`; False (after a line on stderr) when it failed."""
    try:
        audit_anchor.save(audit_anchor.anchor_path(path), anchor)
        return True
    except OSError as failure:
        sys.stderr.write(f"rtk-policy: audit anchor not written: {failure}\n")
        return False


def _current_anchor(path: str, fd: int, size: int) -> dict[str, Any]:
    """The anchor of the log at `path` (open as `fd`, `size` bytes) as of now: read, with the
    records past its size that chain from its head taken in; adopted when there is none."""
    anchor, why = audit_anchor.load(audit_anchor.anchor_path(path))
    if anchor is None:
        return adopt(path, why)
    anchored = anchor["files"][0]["size"]
    if size > anchored:
        _take_in(anchor, os.pread(fd, min(size - anchored, _TAKE_IN_LIMIT), anchored))
    return anchor


def _take_in(anchor: dict[str, Any], data: bytes) -> None:
    """Count the whole lines of `data` (what follows the anchored size) that chain from the head,
    up to the first that does not; the next record then links to the last one taken in."""
    taken: list[str] = []
    head = anchor["head"]
    consumed = 0
    for line in data.split(b"\n")[:-1]:
        link = _links(line)
        if link is None or link[0] != head:
            break
        head = link[1]
        taken.append(head)
        consumed += len(line) + 1
    if taken:
        audit_anchor.appended(anchor, taken, anchor["files"][0]["size"] + consumed)


def _links(line: bytes) -> tuple[str, str] | None:
    """(prev, hash) of the record on `line`, None when it is not a record."""
    try:
        record = json_codec.loads(line)
    except ValueError:
        return None
    if not isinstance(record, dict):
        return None
    prev, digest = record.get("prev"), record.get("hash")
    if isinstance(prev, str) and isinstance(digest, str):
        return prev, digest
    return None


def adopt(path: str, why: str) -> dict[str, Any]:
    """A new anchor for the log at `path` as it stands (`why`: what became of the old anchor).

    Each existing file is counted; the chain starts where its oldest record links to. A log with
    records is marked adopted: what happened to it before cannot be checked any more.
    """
    entries: list[dict[str, Any]] = []
    start = None
    for number in range(KEEP_ROTATED, -1, -1):
        name = rotated_path(path, number) if number else path
        entry, first_prev = _count_file(name)
        entries.insert(0, entry)
        if start is None and entry["count"]:
            start = first_prev
    anchor = audit_anchor.new(start or GENESIS)
    while len(entries) > 1 and not os.path.exists(rotated_path(path, len(entries) - 1)):
        entries.pop()  # no rotated file that far back
    anchor["files"] = entries
    anchor["records"] = sum(entry["count"] for entry in entries)
    for entry in entries:
        if entry["count"]:
            anchor["head"] = entry["last"]
            break
    if anchor["records"]:
        anchor["adopted"] = {"records": anchor["records"], "reason": why}
    return anchor


def _count_file(name: str) -> tuple[dict[str, Any], str]:
    """(the anchor entry of the log file `name` as it stands, the `prev` of its first record)."""
    if not os.path.exists(name):
        return audit_anchor.file_entry(), GENESIS
    count, first, last, first_prev = 0, "", "", GENESIS
    for _number, line in read_lines(name):
        link = _links(line)
        if link is None:
            continue
        if not count:
            first_prev, first = link
        count += 1
        last = link[1]
    return audit_anchor.file_entry(count, first, last, os.path.getsize(name)), first_prev


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
