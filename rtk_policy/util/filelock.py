"""Advisory file locks and positioned writes that work on every platform: `fcntl.flock` and
`os.pwrite` on Linux and macOS, `msvcrt.locking` and seek-then-write on Windows (which has neither).

Windows' locks are mandatory byte-range locks and exclusive only: a shared request takes the
exclusive lock there, which is correct (readers wait for one another too), only less parallel.
"""

from __future__ import annotations

import os

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

#: how many times a blocking lock is retried on Windows (`msvcrt.LK_LOCK` itself retries ~10 s)
_WINDOWS_RETRIES = 30


def lock(fd: int, shared: bool = False) -> None:
    """Block until `fd` holds the lock (shared when `shared`, where the platform has one);
    `unlock` releases it."""
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        return
    import msvcrt

    os.lseek(fd, 0, os.SEEK_SET)
    for _ in range(_WINDOWS_RETRIES):
        try:
            msvcrt.locking(fd, msvcrt.LK_LOCK, 1)  # type: ignore[attr-defined]
            return
        except OSError:  # still held after LK_LOCK's own retries
            continue
    raise TimeoutError("the lock file stayed locked")


def try_lock(fd: int) -> bool:
    """Take the exclusive lock on `fd` without waiting; False when another holds it."""
    if fcntl is not None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True
    import msvcrt

    os.lseek(fd, 0, os.SEEK_SET)
    try:
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
    except OSError:
        return False
    return True


def unlock(fd: int) -> None:
    """Release the lock `fd` holds (before closing it: Windows frees a closed file's locks only
    eventually; elsewhere closing alone would do)."""
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return
    import msvcrt

    os.lseek(fd, 0, os.SEEK_SET)
    msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined]


def write_at(fd: int, data: bytes, offset: int) -> int:
    """Write `data` at `offset` of `fd` (`os.pwrite` where it exists); returns the bytes written."""
    pwrite = getattr(os, "pwrite", None)
    if pwrite is not None:
        return int(pwrite(fd, data, offset))
    os.lseek(fd, offset, os.SEEK_SET)
    return os.write(fd, data)
