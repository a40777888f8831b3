"""Changing a JSON settings file safely (DESIGN §10): refuse a file that is not JSON, keep key order
and the file's indentation, write only when the bytes change, back up first, write atomically."""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from rtk_policy.util import record


class SettingsError(Exception):
    """A settings file we must not touch (not JSON, not an object, unreadable)."""


@record.frozen
class JsonFile:
    """A settings file as read: its bytes (None when absent) and its parsed object ({} when
    absent)."""

    path: Path
    original: bytes | None
    data: Any


def read_json(path: Path) -> JsonFile:
    """Read `path`; raise `SettingsError` when it exists but is not a JSON object."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return JsonFile(path, None, {})
    except OSError as error:
        raise SettingsError(f"{path}: cannot read: {error.strerror}") from error
    if not raw.strip():
        return JsonFile(path, raw, {})
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as error:
        raise SettingsError(
            f"{path}: not UTF-8 text ({error.reason} at byte {error.start})"
        ) from error
    except json.JSONDecodeError as error:
        raise SettingsError(
            f"{path}: not valid JSON (line {error.lineno}, column {error.colno}: {error.msg})"
        ) from error
    if not isinstance(data, dict):
        raise SettingsError(f"{path}: the top level is a {type(data).__name__}, not a JSON object")
    return JsonFile(path, raw, data)


def _indent_of(raw: bytes | None) -> int | str:
    """The indentation the file uses (2 spaces when unknown)."""
    if raw:
        match = re.search(rb"\n([ \t]+)\S", raw)
        if match:
            unit = match.group(1).decode()
            return "\t" if unit.startswith("\t") else len(unit)
    return 2


def render_json(data: Any, like: bytes | None) -> bytes:
    """`data` as JSON text formatted like the file `like` was (indent, final newline)."""
    text = json.dumps(data, indent=_indent_of(like), ensure_ascii=False)
    if like is None or like.endswith(b"\n") or not like.strip():
        text += "\n"
    return text.encode("utf-8")


def backup_path(path: Path) -> Path:
    """Where the backup of `path` goes: `settings.json` → `settings.json.bak`."""
    return path.with_name(path.name + ".bak")


def write_atomic(path: Path, data: bytes) -> None:
    """Write `data` to `path` through a temp file in the same folder and a rename; keep the mode."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o7777 if path.exists() else None
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise


def save(current: JsonFile, data: bytes | None) -> bool:
    """Replace the file's content with `data` (None: delete it); back it up first. False: no
    change."""
    if data == current.original:
        return False
    if current.original is not None:
        write_atomic(backup_path(current.path), current.original)
    if data is None:
        current.path.unlink()
    else:
        write_atomic(current.path, data)
    return True
