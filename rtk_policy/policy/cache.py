"""The compiled-policy cache: one file per key under `$XDG_CACHE_HOME/rtk-policy/` (hot path).

Key: sha256 over the policy files' digest (`policy_digest`: BLAKE2b-256 of their paths and
bytes), the engine version, the backend name and build, the function table and the variable
schema. A file holds data only, and nothing in reading it runs code (no pickle, no marshal):

    rtk-policy-cache 3\n
    <digest: 64 hex digits> <length of the JSON part>\n
    <JSON: {"key": KEY, "blobs": [length, ...], "data": DOCUMENT}><blob bytes, one after another>

The digest is a BLAKE2b-256 of everything after the header line, keyed with the cache key (which
holds the policy files' digest, the engine version and the backend build), checked before the JSON
is parsed: a file that was damaged, truncated, written for another key or edited by hand is not
read at all. Anything that does not verify is ignored (and rebuilt by the caller), never trusted;
the caller checks the document's shape too (`stored.py`). A digest nobody keys with a secret
cannot stop a writer who recomputes it: such a writer can change what the cache says (as it can
edit the user's policy folder), never make it run code (`/work/notes/threat-model-state.md`).

Writes are atomic (temp file + rename), and a process that finds its key missing compiles it
under `compile_lock`, so parallel hooks after an upgrade or a policy edit compile once between
them. Each write keeps the `KEEP` newest compiled sets and removes older ones (and temp files
left by a writer that died), so editing policies does not fill the disk.
"""

from __future__ import annotations

import os

import rtk_policy
from rtk_policy.config.paths import cache_dir
from rtk_policy.util import json_codec
from rtk_policy.util.hashing import sha256

try:  # CPython's builtin module: `hashlib` would load OpenSSL (~2 ms on a cold hook)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - an interpreter built without it
    from hashlib import blake2b

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_MAGIC = b"rtk-policy-cache 3\n"
_PREFIX = "policies-"
_SUFFIX = ".cache"
#: the longest header line after the magic one: 64 hex digits, a blank and a length
_HEADER = 64 + 1 + 20 + 1


def policy_digest(sources: list[tuple[str, bytes]]) -> str:
    """BLAKE2b-256 over the policy files' paths and bytes, in order (64 hex digits): a
    cryptographic digest, and CPython's builtin one hashes the packs' ~200 KB about three times
    faster than its builtin sha256 (~2 ms of a cold hook otherwise)."""
    digest = blake2b(digest_size=32)
    for path, data in sources:
        digest.update(path.encode() + b"\0" + str(len(data)).encode() + b"\0" + data)
    return digest.hexdigest()


def cache_key(digest: str, backend_name: str, backend_version: str, extra: str) -> str:
    """The cache key of a policy digest compiled by a backend build."""
    parts = [digest, rtk_policy.__version__, backend_name, backend_version, extra]
    return sha256("\0".join(parts).encode()).hexdigest()


def _name(key: str) -> str:
    return f"{_PREFIX}{key}{_SUFFIX}"


def _digest(key: str, body: bytes | memoryview) -> bytes:
    """The digest of a file's body (everything after the header line) for `key` (64 hex digits).

    BLAKE2b keyed with the cache key: a cryptographic digest as sha256 is, keyed by design, and
    CPython's builtin one hashes the ~0.7 MB of the packs' set in ~0.8 ms (its builtin sha256 takes
    ~3.3 ms, OpenSSL's costs ~2 ms of imports on a cold hook)."""
    return blake2b(body, digest_size=32, key=key.encode()[:64]).hexdigest().encode()


def stored_version(key: str, folder: str | None = None) -> tuple[object, ...] | None:
    """What identifies the file stored under `key` (in `folder`, default `cache_dir()`) as it is
    now (path, device, inode, size, mtime): a write replaces the file (a new inode), so a process
    that decoded the file it saw with this version need not read it again; None when there is
    none."""
    path = os.path.join(folder or cache_dir(), _name(key))
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (path, info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


def read_cache(key: str, folder: str | None = None) -> tuple[Any, list[bytes]] | None:
    """(document, blobs) stored under `key` (in `folder`, default `cache_dir()`); None when
    missing, unreadable, damaged, forged or written for another key. The document is plain JSON
    data: its shape is the caller's to check."""
    try:
        with open(os.path.join(folder or cache_dir(), _name(key)), "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    end = data.find(b"\n", len(_MAGIC), len(_MAGIC) + _HEADER)
    if not data.startswith(_MAGIC) or end < 0:
        return None
    digest, _, length = data[len(_MAGIC) : end].partition(b" ")
    body = memoryview(data)[end + 1 :]
    if not length.isdigit() or _digest(key, body) != digest:
        return None
    start, end = end + 1, len(data)
    split = start + int(length)
    try:
        wrapper = json_codec.loads(data[start:split])
        blobs, at = [], split
        for size in wrapper["blobs"]:
            if type(size) is not int or size < 0 or at + size > end:
                return None
            blobs.append(data[at : at + size])
            at += size
        if at != end or wrapper["key"] != key:
            return None
        return wrapper["data"], blobs
    except (ValueError, TypeError, KeyError, RecursionError):  # not the JSON we write
        return None


def write_cache(key: str, document: Any, blobs: list[bytes], folder: str | None = None) -> bool:
    """Store `document` (plain JSON data) and `blobs` under `key` (in `folder`, default
    `cache_dir()`) atomically (temp file + rename); False when the folder is unwritable or the
    document is not JSON data."""
    try:
        wrapper = {"key": key, "blobs": [len(b) for b in blobs], "data": document}
        text = json_codec.dumps(wrapper, compact=True, allow_nan=False).encode()
    except (TypeError, ValueError):
        return False
    body = text + b"".join(blobs)
    data = _MAGIC + _digest(key, body) + b" %d\n" % len(text) + body
    folder = folder or cache_dir()
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        import tempfile  # only when writing: it pulls in shutil, bz2 and lzma

        handle, temp = tempfile.mkstemp(prefix=".tmp-", dir=folder)
        try:
            with os.fdopen(handle, "wb") as stream:
                stream.write(data)
            os.replace(temp, os.path.join(folder, _name(key)))
        except BaseException:
            os.unlink(temp)
            raise
    except OSError:
        return False
    prune(keep=_name(key), folder=folder)
    return True


#: compiled sets kept in the cache folder (each policy edit makes a new one, ~0.7 MB for the packs)
KEEP = 32
#: a temp file or lock file this old was left by a writer that died
_STALE_TEMP_SECONDS = 3600


def prune(keep: str = "", limit: int | None = None, folder: str | None = None) -> int:
    """Remove all but the `limit` (default `KEEP`) newest compiled sets (never `keep`), stale temp
    files, and stale lock files of sets not kept; returns how many were removed. Errors (a file
    removed meanwhile, a read-only folder) are ignored."""
    import time

    try:
        entries = list(os.scandir(folder or cache_dir()))
    except OSError:
        return 0
    sets, locks, removed, now = [], [], 0, time.time()
    for entry in entries:
        try:
            modified = entry.stat().st_mtime
        except OSError:
            continue
        if entry.name.startswith(_PREFIX) and entry.name.endswith((_SUFFIX, ".pickle")):
            sets.append((modified, entry.name, entry.path))
        elif entry.name.startswith(".tmp-") and now - modified > _STALE_TEMP_SECONDS:
            removed += _remove(entry.path)
        elif entry.name.startswith(_LOCK) and now - modified > _STALE_TEMP_SECONDS:
            locks.append((entry.name[len(_LOCK) :], entry.path))
    sets.sort(reverse=True)
    kept = {name for _, name, _ in sets[: KEEP if limit is None else limit]} | {keep}
    for _, name, path in sets:
        if name not in kept:
            removed += _remove(path)
    for lock_key, path in locks:  # an hour old, for a set gone: nobody waits on it
        if _name(lock_key) not in kept:
            removed += _remove(path)
    return removed


def written_here(name: str) -> bool:
    """Whether a file called `name` in a cache folder is one this module writes (a compiled
    set, a temp file or a lock)."""
    return name.startswith((_PREFIX, ".tmp-", _LOCK))


def _remove(path: str) -> int:
    try:
        os.unlink(path)
    except OSError:
        return 0
    return 1


_LOCK = ".lock-"
#: seconds a process waits for another compiling the same set before it compiles it itself: longer
#: than a compile takes on a loaded machine (~7 s seen on 2 busy cores; ~1 s quiet), which a
#: waiter that gave up would only slow down, and short of the agents' hook timeouts (60 s)
COMPILE_WAIT = 20.0
_POLL = 0.01


class compile_lock:  # noqa: N801 - used as a function: `with compile_lock(key) as waited:`
    """`with compile_lock(key, folder) as waited:` holds the exclusive lock on compiling `key`'s
    set in the cache `folder` (default `cache_dir()`; `waited`: True when another process held it
    first, so the set may be in the cache now).

    The lock is an `flock` on `.lock-KEY` in the cache folder, released when its holder exits or
    dies. A process waits at most `COMPILE_WAIT` seconds, then goes on without the lock (it
    compiles for itself: a decision never waits for ever); so does one whose cache folder is
    unwritable.
    """

    def __init__(self, key: str, folder: str | None = None, wait: float | None = None) -> None:
        self.key = key
        self.folder = folder
        self.wait = COMPILE_WAIT if wait is None else wait
        self._fd = -1

    def __enter__(self) -> bool:
        import time

        from rtk_policy.util.filelock import try_lock

        folder = self.folder or cache_dir()
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
            extra = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
            flags = os.O_RDWR | os.O_CREAT | extra
            self._fd = os.open(os.path.join(folder, _LOCK + self.key), flags, 0o600)
        except OSError:
            return False
        deadline, waited = time.monotonic() + self.wait, False
        while True:
            if try_lock(self._fd):
                return waited
            waited = True
            if time.monotonic() >= deadline:
                os.close(self._fd)
                self._fd = -1
                return True
            time.sleep(_POLL)

    def __exit__(self, *exc: object) -> None:
        if self._fd >= 0:
            from rtk_policy.util.filelock import unlock

            unlock(self._fd)
            os.close(self._fd)
            self._fd = -1
