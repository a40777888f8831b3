"""`sha256` without `hashlib` on the hook's path.

`import hashlib` loads OpenSSL's `_hashlib` (~2.5 ms of a cold hook process); CPython's builtin
sha256 gives the same digests and imports in microseconds. It is slower per byte, so only small
inputs (cache keys, policy digests, audit records) use it.
"""

from __future__ import annotations

try:
    from _sha256 import sha256  # CPython <= 3.11
except ImportError:  # pragma: no cover - depends on the interpreter
    try:
        from _sha2 import sha256  # CPython >= 3.12
    except ImportError:
        from hashlib import sha256

__all__ = ["sha256"]
