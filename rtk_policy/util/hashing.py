"""`sha256` without `hashlib` on the hook's path, and HMAC-SHA256 over it.

`import hashlib` loads OpenSSL's `_hashlib` (~2.5 ms of a cold hook process); CPython's builtin
sha256 gives the same digests and imports in microseconds. It is slower per byte, so only small
inputs (cache keys, policy digests, audit records) use it. `hmac_sha256` is RFC 2104 built on the
same builtin (no `hmac` import either): the keyed audit chain uses it.
"""

from __future__ import annotations

try:
    from _sha256 import sha256  # CPython <= 3.11
except ImportError:  # pragma: no cover - depends on the interpreter
    try:
        from _sha2 import sha256  # CPython >= 3.12
    except ImportError:
        from hashlib import sha256

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~4 ms on a cold hook)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["hmac_sha256", "sha256"]

_BLOCK = 64  #: sha256's block size in bytes
_INNER = bytes(b ^ 0x36 for b in range(256))
_OUTER = bytes(b ^ 0x5C for b in range(256))


def hmac_sha256(key: bytes) -> Callable[[bytes], Any]:
    """A function `digest(data)` that returns the HMAC-SHA256 of `data` under `key` as a finished
    sha256 object (read it with `.hexdigest()` or `.digest()`), as `sha256(data)` would be used.

    The key's padded inner and outer blocks are hashed once; each call copies those states.
    """
    if len(key) > _BLOCK:
        key = sha256(key).digest()
    key = key.ljust(_BLOCK, b"\0")
    inner = sha256(key.translate(_INNER))
    outer = sha256(key.translate(_OUTER))

    def digest(data: bytes) -> Any:
        keyed = inner.copy()
        keyed.update(data)
        result = outer.copy()
        result.update(keyed.digest())
        return result

    return digest
