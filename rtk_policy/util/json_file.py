"""Small JSON files of the cache folder, read as data only and written atomically.

What the hook keeps between calls to skip work it did before (`engine/rtk_probe.py`: RTK's
version; `config/parsed.py`: a config file's keys) is JSON: reading it never runs code, and a file
that is missing, damaged or too large reads as None, so the caller does the work again.
"""

from __future__ import annotations

import os

from rtk_policy.util import json_codec  # the C codec: no `json`, `re` or `enum` on a cold path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: the largest file `read_json` reads (these files hold a few hundred bytes)
MAX_BYTES = 1 << 20


def read_json(path: str) -> Any:
    """The JSON value in `path`, or None when it cannot be read or parsed."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except OSError:
        return None
    if len(data) > MAX_BYTES:
        return None
    try:
        return json_codec.loads(data)
    except ValueError:
        return None


def write_json(path: str, value: Any) -> bool:
    """Write `value` to `path` through a temp file and a rename (folder made owner-only when
    missing); False when the folder cannot be written or `value` is not JSON."""
    try:
        text = json_codec.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False
    folder = os.path.dirname(path)
    temp = os.path.join(folder, f".tmp-{os.path.basename(path)}-{os.getpid()}")
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        with open(temp, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temp, path)
    except OSError:
        try:
            os.unlink(temp)
        except OSError:
            pass
        return False
    return True
