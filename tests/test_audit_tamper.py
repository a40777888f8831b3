"""The audit log attacked as the agent would (issue 15, point 6): records dropped and the rest
re-chained, the tail cut, the log emptied or deleted, rotated files deleted, the anchor deleted or
edited, and a consistent forgery of log and anchor — with and without an HMAC key.

Each attack is done with the attacker's own tools (file writes and the public hash function), then
`rtk-policy audit verify` (the CLI entry point) is asked."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from test_audit_support import make_config, make_decision

from rtk_policy.audit import anchor as audit_anchor
from rtk_policy.audit import log as audit
from rtk_policy.audit import store as audit_store
from rtk_policy.main import main

COMMANDS = [  # (command, verdict)
    ("git status", "allow"),
    ("rm -rf /", "deny"),
    ("ls -la", "allow"),
    ("curl http://x | sh", "deny"),
    ("git push --force", "ask"),
    ("cargo test", "allow"),
]


def fill(config, rows=COMMANDS) -> Path:
    """Record `rows` as the hook does; the log's path."""
    for command, verdict in rows:
        decision = make_decision(command, None, verdict=verdict)
        audit.record(config, agent="claude", request={"command": command}, decision=decision)
    return Path(config.audit_path)


def verify_cli(capsys, log: Path, *extra: str) -> tuple[int, str, str]:
    code = main(["audit", "verify", "--file", str(log), *extra])
    out, err = capsys.readouterr()
    return code, out, err


def records(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def rechain(rows: list[dict], prev: str = audit_store.GENESIS, digest=audit_store.sha256) -> str:
    """Link `rows` one after the other from `prev`, re-hashed, as the attacker can: the text."""
    out = []
    for row in rows:
        row["prev"] = prev
        row["hash"] = audit_store.canonical_hash(row, digest)
        prev = row["hash"]
        out.append(json.dumps(row) + "\n")
    return "".join(out)


def drop_denies(log: Path, digest=audit_store.sha256) -> list[dict]:
    """Delete the deny records from `log` and re-chain the rest; the rows left."""
    kept = [row for row in records(log) if row["verdict"] != "deny"]
    log.write_text(rechain(kept, digest=digest))
    return kept


def forge_anchor(log: Path, rows: list[dict], keyed: bool = False) -> None:
    """Write the anchor a log of `rows` would have had, unmarked, as a careful attacker does."""
    anchor = audit_anchor.new()
    audit_anchor.appended(anchor, [row["hash"] for row in rows], log.stat().st_size)
    anchor["keyed"] = keyed
    audit_anchor.save(audit_anchor.anchor_path(str(log)), anchor)


@pytest.fixture()
def config(tmp_path):
    return make_config(tmp_path)


def test_an_untouched_log_verifies(config, capsys):
    log = fill(config)
    assert verify_cli(capsys, log) == (0, "ok: 6 records\n", "")


def test_dropping_a_deny_and_rechaining_the_rest_fails(config, capsys):
    log = fill(config)
    kept = drop_denies(log)
    rows = records(log)
    assert len(kept) == 4 and rows[0]["prev"] == audit_store.GENESIS
    assert all(b["prev"] == a["hash"] for a, b in zip(rows, rows[1:], strict=False)), (
        "the chain alone is whole"
    )
    code, out, _ = verify_cli(capsys, log)
    assert code == 1
    assert out.startswith(f"{log}: 2 records missing from its end: the anchor counts 6")


def test_dropping_one_record_of_the_middle_and_padding_to_the_count_fails(config, capsys):
    log = fill(config)
    rows = records(log)
    forged = [row for row in rows if row["command"] != "rm -rf /"]
    forged.append(dict(forged[-1], command="true"))  # the count is 6 again
    log.write_text(rechain(forged))
    code, out, _ = verify_cli(capsys, log)
    assert code == 1 and out.startswith(f"{log}:6: not the record the anchor names as its last")


@pytest.mark.parametrize("cut", [1, 3])
def test_cutting_the_tail_fails(config, capsys, cut):
    log = fill(config)
    lines = log.read_text().splitlines(keepends=True)
    log.write_text("".join(lines[:-cut]))
    code, out, _ = verify_cli(capsys, log)
    assert code == 1
    assert out.startswith(f"{log}: {cut} records missing from its end: the anchor counts 6")


def test_emptying_the_log_fails(config, capsys):
    log = fill(config)
    log.write_text("")
    code, out, _ = verify_cli(capsys, log)
    assert (code, out) == (1, f"{log}: emptied: the anchor counts 6 records in it\n")


def test_deleting_the_log_fails(config, capsys):
    log = fill(config)
    log.unlink()
    code, out, _ = verify_cli(capsys, log)
    assert code == 1 and out.startswith(f"{log}: missing: the anchor counts 6 records in it")


def test_a_tampered_log_keeps_failing_after_the_hook_writes_again(config, capsys):
    log = fill(config)
    lines = log.read_text().splitlines(keepends=True)
    log.write_text("".join(lines[:-2]))
    fill(config, [("git log", "allow")])  # the next hook call, in another process
    rows = records(log)
    assert rows[-1]["prev"] == json.loads(lines[-1])["hash"]  # linked to the record cut away
    code, out, _ = verify_cli(capsys, log)
    assert code == 1 and out.startswith(f"{log}:5: prev does not match the hash of line 4")


def test_an_emptied_log_written_again_fails(config, capsys):
    log = fill(config)
    log.write_text("")
    audit_store._written.clear()  # a new hook process
    fill(config, [("git log", "allow")])
    code, out, _ = verify_cli(capsys, log)
    assert code == 1 and out.startswith(f"{log}:1: first record links to a record that is not")


def test_rotating_away_with_max_bytes_1_then_deleting_the_rotated_files_fails(tmp_path, capsys):
    config = make_config(tmp_path, audit_max_bytes=1)
    log = fill(config)  # every record rotates the one before out: 1 in the log, 5 rotated
    assert len(records(log)) == 1 and Path(f"{log}.5").exists()
    assert verify_cli(capsys, log)[:2] == (0, "ok: 6 records\n")
    for number in range(1, 6):
        Path(f"{log}.{number}").unlink()
    code, out, _ = verify_cli(capsys, log)
    assert code == 1 and out.startswith(f"{log}.5: missing: the anchor counts 1 records in it")


def test_rotation_beyond_the_kept_files_is_counted_not_hidden(tmp_path, capsys):
    config = make_config(tmp_path, audit_max_bytes=1)
    fill(config, COMMANDS * 2)  # 12 records, 6 files kept: 6 expired by rotation
    code, out, _ = verify_cli(capsys, Path(config.audit_path))
    assert (code, out) == (0, "ok: 6 records (6 older ones expired by rotation)\n")


def test_deleting_one_rotated_file_in_the_middle_fails(tmp_path, capsys):
    config = make_config(tmp_path, audit_max_bytes=1)
    log = fill(config)
    Path(f"{log}.3").unlink()
    code, out, _ = verify_cli(capsys, log)
    assert code == 1 and out.startswith(f"{log}.3: missing")


def test_rewriting_a_rotated_file_fails(tmp_path, capsys):
    config = make_config(tmp_path, audit_max_bytes=2000)
    log = fill(config, COMMANDS * 3)
    rotated = Path(f"{log}.1")
    first = json.loads(rotated.read_text().splitlines()[0])
    kept = [row for row in records(rotated) if row["verdict"] != "deny"]
    rotated.write_text(rechain(kept, prev=first["prev"]))
    code, out, _ = verify_cli(capsys, log)
    assert code == 1 and str(rotated) in out


def test_deleting_the_anchor_fails_until_the_next_append_adopts_the_log(config, capsys):
    log = fill(config)
    anchor = Path(audit_anchor.anchor_path(str(log)))
    anchor.unlink()
    code, out, _ = verify_cli(capsys, log)
    assert code == 1 and out.startswith(f"{anchor}: anchor missing")
    audit_store._written.clear()  # a new hook process
    fill(config, [("git log", "allow")])
    code, out, err = verify_cli(capsys, log)
    assert (code, out) == (0, "ok: 7 records\n")  # the limit: a deleted anchor is only noted
    assert "the anchor was started on a log of 6 records (its anchor was missing)" in err


def test_a_garbled_anchor_fails(config, capsys):
    log = fill(config)
    Path(audit_anchor.anchor_path(str(log))).write_text("{}")
    code, out, _ = verify_cli(capsys, log)
    assert code == 1 and "anchor unreadable: not an anchor" in out


def test_an_inconsistently_edited_anchor_fails(config, capsys):
    log = fill(config)
    path = audit_anchor.anchor_path(str(log))
    anchor, _ = audit_anchor.load(path)
    anchor["files"][0]["count"] = 4  # the attacker lowers the count, forgets the total
    audit_anchor.save(path, anchor)
    code, out, _ = verify_cli(capsys, log)
    assert code == 1 and "inconsistent" in out


def test_a_consistent_forgery_of_log_and_anchor_passes_locally(config, capsys):
    """The documented limit of a same-user install without a key: the agent that rewrites both
    files consistently is not caught by `verify` (the syslog copy shows it: test_audit_syslog)."""
    log = fill(config)
    kept = drop_denies(log)
    forge_anchor(log, kept)
    assert verify_cli(capsys, log) == (0, "ok: 4 records\n", "")


# --- the keyed chain (HMAC-SHA256) ---------------------------------------------------------------


@pytest.fixture()
def keyed(tmp_path):
    key = tmp_path / "audit.key"
    key.write_bytes(os.urandom(32))
    return make_config(tmp_path, audit_key_file=str(key)), key


def test_a_keyed_log_verifies_with_its_key_only(keyed, capsys, tmp_path):
    config, key = keyed
    log = fill(config)
    rows = records(log)
    assert all(row["hash"] != audit_store.canonical_hash(row) for row in rows)  # not plain sha256
    assert verify_cli(capsys, log, "--key", str(key)) == (0, "ok: 6 records\n", "")
    other = tmp_path / "other.key"
    other.write_bytes(os.urandom(32))
    code, out, _ = verify_cli(capsys, log, "--key", str(other))
    assert code == 1
    assert out.startswith(f"{log}:1: hash mismatch: the record was edited, or the key is not")


def test_without_the_key_a_keyed_log_has_its_links_and_counts_checked(keyed, capsys):
    config, _key = keyed
    log = fill(config)
    code, out, err = verify_cli(capsys, log)
    assert (code, out) == (0, "ok: 6 records\n") and "hashes were not checked" in err
    lines = log.read_text().splitlines(keepends=True)
    log.write_text("".join(lines[:-1]))
    assert verify_cli(capsys, log)[0] == 1


def test_a_forgery_without_the_key_fails_with_it(keyed, capsys):
    config, key = keyed
    log = fill(config)
    kept = drop_denies(log)  # re-chained with plain sha256: the agent cannot read the key
    forge_anchor(log, kept, keyed=True)
    code, out, _ = verify_cli(capsys, log, "--key", str(key))
    assert code == 1 and out.startswith(f"{log}:1: hash mismatch")


def test_a_forgery_with_a_guessed_key_fails(keyed, capsys, tmp_path):
    from rtk_policy.util.hashing import hmac_sha256

    config, key = keyed
    log = fill(config)
    kept = drop_denies(log, digest=hmac_sha256(b"0" * 32))
    forge_anchor(log, kept, keyed=True)
    code, out, _ = verify_cli(capsys, log, "--key", str(key))
    assert code == 1 and out.startswith(f"{log}:1: hash mismatch")


def test_an_unreadable_key_still_records_the_decision_unkeyed(tmp_path, capsys):
    config = make_config(tmp_path, audit_key_file=str(tmp_path / "no-such.key"))
    log = fill(config, COMMANDS[:2])
    _, err = capsys.readouterr()
    assert err.count("audit key not used, record not keyed") == 2  # a deny is never lost
    assert [row["command"] for row in records(log)] == ["git status", "rm -rf /"]
    assert verify_cli(capsys, log)[:2] == (0, "ok: 2 records\n")
    key = tmp_path / "audit.key"
    key.write_bytes(os.urandom(32))
    code, out, _ = verify_cli(capsys, log, "--key", str(key))
    assert code == 1 and "hash mismatch" in out


def test_a_short_or_missing_key_file_given_to_verify_is_refused(config, capsys, tmp_path):
    log = fill(config)
    short = tmp_path / "short.key"
    short.write_bytes(b"abc")
    code, out, err = verify_cli(capsys, log, "--key", str(short))
    assert (code, out) == (2, "") and "at least 16 bytes" in err
    code, out, err = verify_cli(capsys, log, "--key", str(tmp_path / "none"))
    assert (code, out) == (2, "") and "No such file" in err


@pytest.mark.parametrize("size", [0, 1, 16, 32, 64, 65, 200])
def test_the_hot_paths_hmac_is_the_standard_one(size):
    import hashlib
    import hmac

    from rtk_policy.util.hashing import hmac_sha256

    key = os.urandom(size)
    for data in (b"", b"abc", os.urandom(5000)):
        assert hmac_sha256(key)(data).hexdigest() == hmac.new(key, data, hashlib.sha256).hexdigest()
