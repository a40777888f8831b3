"""The compiled-policy cache: one file per key under `$XDG_CACHE_HOME/rtk-policy/` (hot path, no yaml).

Key: sha256 over the policy files (paths and bytes), the engine version, the backend name and build, the
function table and the variable schema. A file holds a magic line, the CRC-32 of its payload and the
pickled payload; anything that does not verify is ignored (and rebuilt by the caller), never trusted.
The CRC guards against damage (files are written by rename, so a torn write never shows); no
checksum can guard against a writer of the cache folder, who could write a matching one of any kind.
CRC-32 costs ~0.1 ms on the hook's path, sha256 ~2 ms (builtin) or the ~2.5 ms OpenSSL import.
Each write keeps the `KEEP` newest compiled sets and removes older ones (and temp files left by a writer
that died), so editing policies does not fill the disk.
"""

from __future__ import annotations

import os
from binascii import crc32

import rtk_policy
from rtk_policy.config.paths import cache_dir
from rtk_policy.util.hashing import sha256

try:  # the C unpickler alone: `import pickle` (its Python half) costs the hook ~1.5 ms
    from _pickle import loads as _loads
except ImportError:  # pragma: no cover - an interpreter without the accelerator
    from pickle import loads as _loads

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~4 ms on a cold hook)
if TYPE_CHECKING:
    from typing import Any

_MAGIC = b"rtk-policy-cache 2\n"
_CHECK = 8  #: hex digits of the CRC-32 after the magic line


def policy_digest(sources: list[tuple[str, bytes]]) -> str:
    """sha256 over the policy files' paths and bytes, in order."""
    digest = sha256()
    for path, data in sources:
        digest.update(path.encode() + b"\0" + str(len(data)).encode() + b"\0" + data)
    return digest.hexdigest()


def cache_key(digest: str, backend_name: str, backend_version: str, extra: str) -> str:
    """The cache key of a policy digest compiled by a backend build."""
    parts = [digest, rtk_policy.__version__, backend_name, backend_version, extra]
    return sha256("\0".join(parts).encode()).hexdigest()


def _checksum(body: bytes) -> bytes:
    return b"%08x" % crc32(body)


def _name(key: str) -> str:
    return f"policies-{key}.pickle"


def read_cache(key: str, folder: str | None = None) -> dict[str, Any] | None:
    """The payload stored under `key` (in `folder`, default `cache_dir()`), or None when missing,
    unreadable, corrupt or for another key."""
    try:
        with open(os.path.join(folder or cache_dir(), _name(key)), "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    header = len(_MAGIC) + _CHECK
    if not data.startswith(_MAGIC) or len(data) <= header:
        return None
    checksum, body = data[len(_MAGIC) : header], data[header:]
    if _checksum(body) != checksum:
        return None
    try:
        payload = _loads(body)
    except Exception:  # noqa: BLE001 - a payload that does not unpickle is not trusted
        return None
    if not isinstance(payload, dict) or payload.get("key") != key:
        return None
    return payload


def write_cache(key: str, payload: dict[str, Any], folder: str | None = None) -> bool:
    """Store `payload` under `key` (in `folder`, default `cache_dir()`) atomically (temp file +
    rename); False when the folder is unwritable."""
    body = _dumps({**payload, "key": key})
    data = _MAGIC + _checksum(body) + body
    folder = folder or cache_dir()
    try:
        os.makedirs(folder, exist_ok=True)
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


def _dumps(payload: dict[str, Any]) -> bytes:
    """`payload` pickled. Its values are records (`rtk_policy.util.record`), which pickle as a call of
    their class with the field values: unpickling them is one constructor call each."""
    import pickle

    return pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)


#: compiled sets kept in the cache folder (each policy edit makes a new one, ~0.5 MB for the packs)
KEEP = 32
#: a temp file this old was left by a writer that died
_STALE_TEMP_SECONDS = 3600


def prune(keep: str = "", limit: int | None = None, folder: str | None = None) -> int:
    """Remove all but the `limit` (default `KEEP`) newest compiled sets (never `keep`) and stale temp
    files; returns how many were removed. Errors (a file removed meanwhile, a read-only folder) are
    ignored."""
    import time

    try:
        entries = list(os.scandir(folder or cache_dir()))
    except OSError:
        return 0
    sets, removed, now = [], 0, time.time()
    for entry in entries:
        try:
            modified = entry.stat().st_mtime
        except OSError:
            continue
        if entry.name.startswith("policies-") and entry.name.endswith(".pickle"):
            sets.append((modified, entry.name, entry.path))
        elif entry.name.startswith(".tmp-") and now - modified > _STALE_TEMP_SECONDS:
            removed += _remove(entry.path)
    sets.sort(reverse=True)
    for _, name, path in sets[KEEP if limit is None else limit :]:
        if name != keep:
            removed += _remove(path)
    return removed


def _remove(path: str) -> int:
    try:
        os.unlink(path)
    except OSError:
        return 0
    return 1
