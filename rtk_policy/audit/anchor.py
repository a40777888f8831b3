"""The audit anchor: what the log must still hold, kept in a file of its own (DESIGN §8, §13).

The hash chain shows an edited, inserted or deleted record, but not records cut from its end, an
emptied or deleted log, deleted rotated files, or a log re-chained after a deletion. The anchor
(`audit.anchor` beside `audit.jsonl`) names them: the chain's head hash and record count, and for
the current file and each rotated one (index 0 is the log itself, N is `audit.jsonl.N`) its record
count, first and last hash and size; the records rotation expired (files, records, the last hash,
which the oldest file left must link to). `audit verify` checks the log against it.

It is rewritten after every append, under the log's lock, in place: one `pwrite` of the JSON
padded with spaces to a whole page (4 KiB; an anchor is 0.3-2 KiB), which a reader holding the lock
shared sees whole. Not a temporary file and a rename: on ext4 a rename over the old file forces the
new one's blocks out (auto_da_alloc), ~70 µs a record here against ~3 µs, and the resident server
writes a record per answer. A writer that stops between the log's write and the anchor's leaves
records after the anchored head; the next append takes them in when they chain from it. The agent's
user can rewrite the anchor too: forwarding to syslog and the keyed chain cover that (see the
threat model).

```json
{"version": 1, "records": 12, "head": "…", "keyed": false,
 "files": [{"count": 2, "first": "…", "last": "…", "size": 1840}, …],
 "expired": {"files": 0, "records": 0, "last": ""},
 "adopted": {"records": 10, "reason": "missing"}, "syslog": {"sent": 2, "failed": 0, "error": ""}}
```
"""

from __future__ import annotations

import os

from rtk_policy.util import json_codec
from rtk_policy.util.filelock import write_at

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

VERSION = 1
PAGE = 4096  #: the anchor is written as whole pages of this size
ERROR_CHARS = 200  #: the syslog error kept in the anchor is cut to this length
_encode = json_codec.encoder(compact=True)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def anchor_path(log_path: str) -> str:
    """The anchor of the log at `log_path`: `audit.jsonl` → `audit.anchor`, else `PATH.anchor`."""
    if log_path.endswith(".jsonl"):
        return log_path[: -len(".jsonl")] + ".anchor"
    return log_path + ".anchor"


def new(expired_last: str = "") -> dict[str, Any]:
    """The anchor of a log with no record yet, whose first record links to `expired_last`."""
    return {
        "version": VERSION,
        "records": 0,
        "head": expired_last,
        "keyed": False,
        "files": [file_entry()],
        "expired": {"files": 0, "records": 0, "last": expired_last},
    }


def file_entry(count: int = 0, first: str = "", last: str = "", size: int = 0) -> dict[str, Any]:
    """What the anchor holds about one log file."""
    return {"count": count, "first": first, "last": last, "size": size}


def load(path: str) -> tuple[dict[str, Any] | None, str]:
    """(the anchor at `path`, "") or (None, why not: "missing" or "unreadable: …")."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None, "missing"
    except OSError as error:
        return None, f"unreadable: {error.strerror}"
    try:
        data = os.read(fd, 1 << 16)
    finally:
        os.close(fd)
    try:
        anchor = json_codec.loads(data)
    except ValueError:
        return None, "unreadable: not JSON"
    if not _well_formed(anchor):
        return None, "unreadable: not an anchor"
    return anchor, ""


def _well_formed(anchor: Any) -> bool:
    """True for a dict with the fields an anchor of this version has, of the right types."""
    if not isinstance(anchor, dict) or anchor.get("version") != VERSION:
        return False
    files, expired = anchor.get("files"), anchor.get("expired")
    if not isinstance(files, list) or not files or not isinstance(expired, dict):
        return False
    if not isinstance(anchor.get("records"), int) or not isinstance(anchor.get("head"), str):
        return False
    return all(
        isinstance(entry, dict)
        and isinstance(entry.get("count"), int)
        and isinstance(entry.get("last"), str)
        and isinstance(entry.get("size"), int)
        for entry in files
    )


def save(path: str, anchor: dict[str, Any]) -> None:
    """Rewrite the anchor at `path` in place, one write of whole pages (under the log's lock)."""
    data = _encode(anchor).encode("ascii")
    data += b" " * (-len(data) % PAGE)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | _NOFOLLOW, 0o600)
    try:
        write_at(fd, data, 0)
        if os.fstat(fd).st_size > len(data):  # an older, longer anchor: drop its tail
            os.ftruncate(fd, len(data))
    finally:
        os.close(fd)


def appended(anchor: dict[str, Any], hashes: list[str], size: int) -> None:
    """Count the records of `hashes` (in order) appended to the current file, now `size` bytes."""
    if not hashes:
        return
    current = anchor["files"][0]
    if not current["count"]:
        current["first"] = hashes[0]
    current["count"] += len(hashes)
    current["last"] = anchor["head"] = hashes[-1]
    current["size"] = size
    anchor["records"] += len(hashes)


def rotated(anchor: dict[str, Any], keep: int) -> None:
    """The current file became `.1` (and so on); the file beyond the `keep` rotated ones expired."""
    files = anchor["files"]
    files.insert(0, file_entry())
    while len(files) > keep + 1:
        gone = files.pop()
        expired = anchor["expired"]
        expired["files"] += 1
        expired["records"] += gone["count"]
        if gone["count"]:
            expired["last"] = gone["last"]


def forwarded(anchor: dict[str, Any], count: int, error: str) -> None:
    """Count `count` records sent to syslog, or not sent when `error` says why."""
    state = anchor.setdefault("syslog", {"sent": 0, "failed": 0, "error": ""})
    if error:
        state["failed"] += count
        state["error"] = error[:ERROR_CHARS]
    else:
        state["sent"] += count


def unsent(anchor: dict[str, Any]) -> int:
    """How many records could not be forwarded to syslog so far."""
    state = anchor.get("syslog")
    return int(state.get("failed", 0)) if isinstance(state, dict) else 0
