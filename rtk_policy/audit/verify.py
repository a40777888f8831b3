"""`rtk-policy audit verify`: checking the hash chain across rotated files, oldest first.

Each record's `hash` must be the sha256 of its canonical JSON, and its `prev` the `hash` of the
record before it (the last record of the previous file for a file's first line). So an edited record
fails its own hash; a deleted, inserted or moved one breaks the `prev` link of the line where it
happened; a torn last line is not valid JSON. Dropping records from the *end* leaves a valid chain:
only an outside copy of the last hash can show that.
"""

from __future__ import annotations

import json
import os

import attrs

from rtk_policy.audit import store as audit_store


@attrs.frozen
class VerifyResult:
    """The outcome of checking a log: how many records were good, and the first problem if any."""

    ok: bool
    records: int  #: records checked and found good (up to the first problem)
    problem: str = ""  #: "FILE:LINE: what is wrong", "" when ok
    notes: tuple[str, ...] = ()  #: facts worth telling that are not failures


def verify(path: str) -> VerifyResult:
    """Check the log at `path` and its rotated files; stop at the first bad line."""
    files = audit_store.log_files(path)
    if not files:
        return VerifyResult(ok=True, records=0, notes=(f"{path}: no audit log",))
    notes: list[str] = []
    expected: str | None = audit_store.GENESIS
    if files[0] == audit_store.rotated_path(path, audit_store.KEEP_ROTATED):
        expected = None  # older files were rotated away: the first link cannot be checked
    count = 0
    for name in files:
        problem, checked, expected = _verify_file(name, expected, notes)
        count += checked
        if problem:
            return VerifyResult(ok=False, records=count, problem=problem, notes=tuple(notes))
    return VerifyResult(ok=True, records=count, notes=tuple(notes))


def _verify_file(name: str, expected: str | None, notes: list[str]) -> tuple[str, int, str | None]:
    """(first problem or "", good records, hash the next record must link to) for one file."""
    checked = 0
    for number, line in audit_store.read_lines(name):
        where = f"{name}:{number}"
        record, problem = _parse(line)
        if problem:
            return f"{where}: {problem}", checked, expected
        if record.get("hash") != audit_store.canonical_hash(record):
            return f"{where}: hash mismatch: the record was edited", checked, expected
        prev = record.get("prev")
        if expected is None:
            notes.append(f"{where}: chain starts here (older rotated files were removed)")
        elif prev != expected:
            return f"{where}: {_link_problem(number, checked, expected)}", checked, expected
        expected = record["hash"]
        checked += 1
    if not _ends_with_newline(name):
        return f"{name}:{checked + 1}: truncated last line (no newline)", checked, expected
    return "", checked, expected


def _parse(line: bytes) -> tuple[dict[str, object], str]:
    """The record on `line`, or an explanation of why it is not one."""
    if not line.strip():
        return {}, "blank line where a record should be"
    try:
        record = json.loads(line)
    except ValueError:
        return {}, "not valid JSON (a torn, truncated or hand-edited line)"
    if not isinstance(record, dict) or "hash" not in record or "prev" not in record:
        return {}, "not an audit record (no hash/prev fields)"
    return record, ""


def _link_problem(number: int, checked: int, expected: str) -> str:
    """Why a `prev` link is broken, worded for where it happened."""
    if checked == 0 and expected == audit_store.GENESIS:
        return "first record links to a record that is not there (records deleted before it)"
    if checked == 0:
        return "prev does not match the last record of the previous file (records deleted or moved)"
    return (
        f"prev does not match the hash of line {number - 1}: "
        "a record was deleted, inserted or moved here"
    )


def _ends_with_newline(name: str) -> bool:
    """True when the file is empty or its last byte is a newline."""
    with open(name, "rb") as handle:
        handle.seek(0, os.SEEK_END)
        if handle.tell() == 0:
            return True
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) == b"\n"
