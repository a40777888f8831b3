"""`rtk-policy audit verify`: the hash chain across rotated files, oldest first, and the anchor.

Each record's `hash` must be the sha256 (with a key: the HMAC-SHA256) of its canonical JSON, and its
`prev` the `hash` of the record before it (the last record of the previous file for a file's first
line). So an edited record fails its own hash; a deleted, inserted or moved one breaks the `prev`
link of the line where it happened; a torn last line is not valid JSON.

The chain alone cannot show records dropped from the end, an emptied or deleted log, deleted
rotated files, or a log re-chained after a deletion: the anchor (`audit/anchor.py`) can. Every file
it names must be there, holding as many records as it counts, ending with the hash it names (a
rotated file also keeps its size); the oldest must link to the last record rotation expired; the
current log may hold more records than anchored (a writer stopped between its two writes), noted.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

import attrs

from rtk_policy.audit import anchor as audit_anchor
from rtk_policy.audit import store as audit_store

#: a record's hash function: plain sha256, or `hmac_sha256(key)`
Digest = Callable[[bytes], Any]


@attrs.frozen
class VerifyResult:
    """The outcome of checking a log: how many records were good, and the first problem if any."""

    ok: bool
    records: int  #: records checked and found good (up to the first problem)
    problem: str = ""  #: "FILE:LINE: what is wrong", "" when ok
    notes: tuple[str, ...] = ()  #: facts worth telling that are not failures
    expired: int = 0  #: older records the anchor says rotation expired (not checked: gone)


def verify(path: str, key: Digest | None = None) -> VerifyResult:
    """Check the log at `path`, its rotated files and its anchor; stop at the first problem.

    `key` is the HMAC-SHA256 function of a keyed log (`log.keyed_digest`); without it a log the
    anchor marks keyed has its links and counts checked, not its hashes.
    """
    anchor_file = audit_anchor.anchor_path(path)
    anchor, why = audit_store.read_anchor(path)
    files = audit_store.log_files(path)
    if anchor is None:
        if not files and why == "missing":
            return VerifyResult(ok=True, records=0, notes=(f"{path}: no audit log",))
        result = _verify_unanchored(path, files, key or audit_store.sha256, key is None)
        if not result.ok:
            return result
        return attrs.evolve(
            result,
            ok=False,
            problem=f"{anchor_file}: anchor {why}: it was deleted or damaged, or nothing was "
            "logged since an upgrade (records cut from the end or deleted files cannot be seen)",
        )
    return _verify_anchored(path, anchor, key)


def _verify_unanchored(path: str, files: list[str], digest: Digest, keyless: bool) -> VerifyResult:
    """The chain alone, as logs before anchors were checked."""
    notes: list[str] = []
    expected: str | None = audit_store.GENESIS
    if files and files[0] == audit_store.rotated_path(path, audit_store.KEEP_ROTATED):
        expected = None  # older files were rotated away: the first link cannot be checked
    count = 0
    for name in files:
        problem, hashes, expected = _verify_file(name, expected, notes, digest, keyless)
        count += len(hashes)
        if problem:
            return VerifyResult(ok=False, records=count, problem=problem, notes=tuple(notes))
    return VerifyResult(ok=True, records=count, notes=tuple(notes))


def _verify_anchored(path: str, anchor: dict[str, Any], key: Digest | None) -> VerifyResult:
    """The chain, file by file as the anchor names them, and each file against its entry."""
    notes = _anchor_notes(anchor, key)
    entries, expired = anchor["files"], anchor["expired"]
    for number in range(len(entries), audit_store.KEEP_ROTATED + 1):
        stray = audit_store.rotated_path(path, number)
        if os.path.exists(stray):
            notes.append(f"{stray}: not named by the anchor, not checked")
    expired_records = int(expired.get("records", 0))
    counted = expired_records + sum(entry["count"] for entry in entries)
    if counted != anchor["records"]:
        return VerifyResult(
            ok=False,
            records=0,
            problem=f"{audit_anchor.anchor_path(path)}: inconsistent: its files and expired "
            f"records add up to {counted}, it counts {anchor['records']} (the anchor was edited)",
        )
    digest = key or audit_store.sha256
    skip_hashes = key is None and bool(anchor.get("keyed"))
    expected: str | None = str(expired.get("last", audit_store.GENESIS))
    count = 0
    for number in range(len(entries) - 1, -1, -1):
        entry = entries[number]
        name = audit_store.rotated_path(path, number) if number else path
        if not os.path.exists(name):
            if entry["count"]:
                problem = f"{name}: missing: the anchor counts {entry['count']} records in it"
                return _failed(problem + " (the file was deleted or moved)", count, notes)
            continue
        problem, hashes, expected = _verify_file(name, expected, notes, digest, not skip_hashes)
        count += len(hashes)
        problem = problem or _against_entry(name, entry, hashes, current=number == 0)
        if problem:
            return _failed(problem, count, notes)
    return VerifyResult(ok=True, records=count, notes=tuple(notes), expired=expired_records)


def _failed(problem: str, count: int, notes: list[str]) -> VerifyResult:
    return VerifyResult(ok=False, records=count, problem=problem, notes=tuple(notes))


def _anchor_notes(anchor: dict[str, Any], key: Digest | None) -> list[str]:
    """What the anchor says that is worth telling: adoption, keying, syslog failures."""
    notes = []
    adopted = anchor.get("adopted")
    if isinstance(adopted, dict):
        notes.append(
            f"the anchor was started on a log of {adopted.get('records')} records "
            f"(its anchor was {adopted.get('reason')}): what happened to it before is not known"
        )
    if anchor.get("keyed") and key is None:
        notes.append("the records are keyed (HMAC-SHA256): their hashes were not checked (--key)")
    forwarded = anchor.get("syslog")
    if isinstance(forwarded, dict) and forwarded.get("failed"):
        notes.append(
            f"syslog: {forwarded['failed']} records were not forwarded "
            f"(last error: {forwarded.get('error')})"
        )
    return notes


def _against_entry(name: str, entry: dict[str, Any], hashes: list[str], current: bool) -> str:
    """What is wrong with the file `name`, whose good records have `hashes`, against its anchor
    `entry` ("" when nothing)."""
    held, counted = len(hashes), entry["count"]
    if held < counted:
        if not held:
            return f"{name}: emptied: the anchor counts {counted} records in it"
        return (
            f"{name}: {counted - held} records missing from its end: the anchor counts "
            f"{counted}, the file holds {held} (records deleted, or the tail cut off)"
        )
    if counted and hashes[counted - 1] != entry["last"]:
        return (
            f"{name}:{counted}: not the record the anchor names as its last: records were "
            "deleted, replaced or re-chained"
        )
    if current:
        return ""
    if held > counted:
        return f"{name}: holds {held} records, the anchor counts {counted} (rotated files stay)"
    if entry.get("size") and os.path.getsize(name) != entry["size"]:
        return f"{name}: {os.path.getsize(name)} bytes, the anchor says {entry['size']}"
    return ""


def _verify_file(
    name: str, expected: str | None, notes: list[str], digest: Digest, check_hashes: bool = True
) -> tuple[str, list[str], str | None]:
    """(first problem or "", hashes of the good records, hash the next record must link to)."""
    hashes: list[str] = []
    for number, line in audit_store.read_lines(name):
        where = f"{name}:{number}"
        record, problem = _parse(line)
        if problem:
            return f"{where}: {problem}", hashes, expected
        if check_hashes and record.get("hash") != audit_store.canonical_hash(record, digest):
            why = "the record was edited" + (
                " (or the log is keyed: --key)"
                if digest is audit_store.sha256
                else ", or the key is not the one it was written with"
            )
            return f"{where}: hash mismatch: {why}", hashes, expected
        prev = record.get("prev")
        if expected is None:
            notes.append(f"{where}: chain starts here (older rotated files were removed)")
        elif prev != expected:
            return f"{where}: {_link_problem(number, len(hashes), expected)}", hashes, expected
        expected = str(record["hash"])
        hashes.append(expected)
    if not _ends_with_newline(name):
        return f"{name}:{len(hashes) + 1}: truncated last line (no newline)", hashes, expected
    return "", hashes, expected


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
