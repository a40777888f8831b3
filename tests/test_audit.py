"""The audit log: record fields, the hash chain and `verify`, rotation, disabled/unwritable logs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_audit_support import make_config, make_decision, make_outcome

from rtk_policy.audit import log as audit

from rtk_policy.audit import anchor as audit_anchor
from rtk_policy.audit import store as audit_store
from rtk_policy.audit.verify import verify

FIELDS = [
    "time",
    "decision_id",
    "agent",
    "session_id",
    "tool_use_id",
    "cwd",
    "command",
    "segments",
    "verdict",
    "rewrite",
    "rule_ids",
    "audit_rule_ids",
    "reasons",
    "warnings",
    "gate",
    "policy_digest",
    "backend",
    "eval_us",
    "total_us",
    "errors",
    "prev",
    "hash",
]
REQUEST = {
    "session_id": "s-1",
    "tool_use_id": "tu-1",
    "cwd": "/repo",
    "command": "git status && ls",
}


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


def write_records(config, count: int, command: str = "git status") -> None:
    for i in range(count):
        decision = make_decision(f"{command} {i}", f"rtk {command} {i}")
        audit.record(
            config, agent="claude", request={"command": f"{command} {i}"}, decision=decision
        )


def test_record_has_every_field(tmp_path):
    config = make_config(tmp_path)
    decision = make_decision("git status && ls", "rtk git status && rtk ls", warnings=("careful",))
    outcome = make_outcome([("git status", "git", 0), ("ls", "ls", 1)], decision)
    audit.record(config, agent="claude", request=REQUEST, outcome=outcome, total_us=1234)
    [line] = lines(tmp_path / "audit.jsonl")
    record = json.loads(line)
    assert list(record) == FIELDS
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", record["time"])
    assert re.fullmatch(r"[0-9a-f]{12}4[0-9a-f]{3}[89ab][0-9a-f]{15}", record["decision_id"])
    assert (record["agent"], record["session_id"], record["tool_use_id"], record["cwd"]) == (
        "claude",
        "s-1",
        "tu-1",
        "/repo",
    )
    assert record["segments"] == [
        {
            "text": "git status",
            "program": "git",
            "depth": 0,
            "rules": ["git-read-only"],
            "rewrite_rule": None,
        },
        {"text": "ls", "program": "ls", "depth": 1, "rules": [], "rewrite_rule": "rtk-ls"},
    ]
    assert record["verdict"] == "allow"
    assert record["rewrite"] == {"before": "git status && ls", "after": "rtk git status && rtk ls"}
    assert record["rule_ids"] == ["git-read-only"]
    assert record["warnings"] == ["careful"]
    assert (record["policy_digest"], record["backend"], record["eval_us"]) == (
        "sha256:abc",
        "cel-expr",
        42,
    )
    assert record["total_us"] == 1234
    assert record["errors"] == []
    assert record["prev"] == audit_store.GENESIS
    assert record["hash"] == audit_store.canonical_hash(record)


def test_decision_only_and_errors(tmp_path):
    config = make_config(tmp_path)
    decision = make_decision(
        "rm -rf /", None, verdict="deny", reasons=("no",), error="engine broke"
    )
    audit.record(
        config, agent="codex", request={"command": "rm -rf /"}, decision=decision, error="late"
    )
    audit.record(config, agent="codex", request={"command": "x"}, error="no decision at all")
    first, second = (json.loads(line) for line in lines(tmp_path / "audit.jsonl"))
    assert first["segments"] == [] and first["rewrite"] == {"before": "rm -rf /", "after": None}
    assert first["verdict"] == "deny" and first["errors"] == ["engine broke", "late"]
    assert second["verdict"] is None and second["errors"] == ["no decision at all"]
    assert second["prev"] == first["hash"]


def test_structlog_renderer_gives_the_same_line():
    import structlog

    event = {
        "time": "t",
        "command": "echo 'é' \"x\"",
        "segments": [{"depth": 0}],
        "rewrite": {"after": None},
    }
    assert audit._json_line(event) == structlog.processors.JSONRenderer()(None, "", event)


def test_chain_verifies(tmp_path):
    config = make_config(tmp_path)
    write_records(config, 20)
    result = verify(config.audit_path)
    assert result.ok and result.records == 20 and result.problem == ""
    records = [json.loads(line) for line in lines(tmp_path / "audit.jsonl")]
    assert all(b["prev"] == a["hash"] for a, b in zip(records, records[1:], strict=False))


def _rewrite_lines(path: Path, change) -> None:
    content = lines(path)
    change(content)
    path.write_text("\n".join(content) + "\n")


def tampered_log(tmp_path: Path, count: int, change) -> Path:
    """The log of `count` fresh records in `tmp_path`, its lines then changed by `change`."""
    write_records(make_config(tmp_path), count)
    log = tmp_path / "audit.jsonl"
    _rewrite_lines(log, change)
    return log


def test_edited_record_fails_on_its_line(tmp_path):
    log = tampered_log(tmp_path, 10, lambda c: c.__setitem__(4, c[4].replace('"allow"', '"deny"')))
    result = verify(str(log))
    assert not result.ok and result.records == 4
    assert result.problem.startswith(f"{log}:5: hash mismatch")


def test_edited_and_rehashed_record_fails_on_the_next_line(tmp_path):
    def forge(content: list[str]) -> None:
        record = json.loads(content[4])
        record["verdict"] = "deny"
        record["hash"] = audit_store.canonical_hash(record)
        content[4] = json.dumps(record)

    log = tampered_log(tmp_path, 10, forge)
    assert verify(str(log)).problem.startswith(f"{log}:6: prev does not match the hash of line 5")


def test_deleted_middle_line_is_named(tmp_path):
    log = tampered_log(tmp_path, 20, lambda c: c.pop(9))
    result = verify(str(log))
    assert not result.ok and result.records == 9
    assert result.problem.startswith(f"{log}:10: prev does not match")


def test_deleted_first_line_is_named(tmp_path):
    log = tampered_log(tmp_path, 5, lambda c: c.pop(0))
    assert verify(str(log)).problem.startswith(
        f"{log}:1: first record links to a record that is not there"
    )


def test_inserted_line_is_named(tmp_path):
    log = tampered_log(tmp_path, 10, lambda c: c.insert(7, c[2]))
    assert verify(str(log)).problem.startswith(f"{log}:8: prev does not match")


def test_truncated_tail_is_named_and_not_glued_to(tmp_path):
    config = make_config(tmp_path)
    write_records(config, 5)
    log = tmp_path / "audit.jsonl"
    log.write_bytes(log.read_bytes()[:-40])
    assert verify(str(log)).problem.startswith(f"{log}:5: not valid JSON")
    write_records(config, 1)  # the next record starts on its own line
    assert len(lines(log)) == 6 and json.loads(lines(log)[5])["command"] == "git status 0"
    assert verify(str(log)).problem.startswith(f"{log}:5: not valid JSON")


def test_rotation_keeps_the_chain(tmp_path):
    config = make_config(tmp_path, audit_max_bytes=4000)
    write_records(config, 20)
    log = tmp_path / "audit.jsonl"
    files = audit_store.log_files(str(log))
    assert len(files) >= 3 and files[-1] == str(log) and files[-2] == f"{log}.1"
    assert all(Path(name).stat().st_size <= 4000 for name in files)
    assert sum(len(lines(Path(name))) for name in files) == 20
    last_of_rotated = json.loads(lines(Path(f"{log}.1"))[-1])
    assert json.loads(lines(log)[0])["prev"] == last_of_rotated["hash"]
    result = verify(str(log))
    assert result.ok and result.records == 20 and result.notes == ()
    commands = [r["command"] for r in audit.iter_all_records(str(log))]
    assert commands == [f"git status {i}" for i in range(20)]


def test_deletion_in_a_rotated_file_is_named(tmp_path):
    config = make_config(tmp_path, audit_max_bytes=4000)
    write_records(config, 20)
    rotated = tmp_path / "audit.jsonl.1"
    _rewrite_lines(rotated, lambda c: c.pop(1))
    assert verify(str(tmp_path / "audit.jsonl")).problem.startswith(
        f"{rotated}:2: prev does not match"
    )


def test_rotation_drops_the_oldest_files_and_the_anchor_counts_them(tmp_path):
    config = make_config(tmp_path, audit_max_bytes=1500)
    write_records(config, 40)
    log = tmp_path / "audit.jsonl"
    files = audit_store.log_files(str(log))
    assert len(files) == audit_store.KEEP_ROTATED + 1
    assert not Path(f"{log}.{audit_store.KEEP_ROTATED + 1}").exists()
    kept = sum(len(lines(Path(name))) for name in files)
    result = verify(str(log))
    assert result.ok and result.records == kept and 0 < kept < 40
    assert result.expired == 40 - kept  # the anchor knows how many rotation dropped
    anchor, _ = audit_anchor.load(str(tmp_path / "audit.anchor"))
    oldest = json.loads(lines(Path(files[0]))[0])
    assert anchor["expired"]["last"] == oldest["prev"]  # where the chain legitimately starts


def test_without_an_anchor_a_rotated_away_start_is_only_noted(tmp_path):
    config = make_config(tmp_path, audit_max_bytes=1500)
    write_records(config, 40)
    (tmp_path / "audit.anchor").unlink()
    result = verify(str(tmp_path / "audit.jsonl"))
    assert "older rotated files were removed" in result.notes[0]
    assert not result.ok and "audit.anchor: anchor missing" in result.problem


def test_disabled_audit_writes_nothing(tmp_path):
    config = make_config(tmp_path, audit_enabled=False)
    write_records(config, 3)
    assert list(tmp_path.iterdir()) == []


def test_unwritable_path_does_not_raise(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    config = make_config(tmp_path, audit_path=str(blocker / "sub" / "audit.jsonl"))
    audit.record(config, agent="claude", request=REQUEST, decision=make_decision())
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("rtk-policy: audit log not written")


def test_garbage_arguments_do_not_raise(tmp_path, capsys):
    config = make_config(tmp_path)
    audit.record(config, agent="claude", request=REQUEST, outcome=object())
    audit.record(None, agent="claude", request=None)  # type: ignore[arg-type]
    out, _err = capsys.readouterr()
    assert out == ""


def test_default_path_follows_xdg_state_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert audit.default_audit_path() == str(tmp_path / "rtk-policy" / "audit.jsonl")
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert audit.default_audit_path() == str(
        tmp_path / ".local" / "state" / "rtk-policy" / "audit.jsonl"
    )


def test_default_config_writes_to_the_default_path(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    audit.record(
        make_config(tmp_path, audit_path=""), agent="a", request=REQUEST, decision=make_decision()
    )
    assert len(lines(tmp_path / "rtk-policy" / "audit.jsonl")) == 1


@pytest.mark.parametrize("bad", ["{not json", "[1, 2]", ""])
def test_iter_records_skips_lines_that_are_not_records(tmp_path, bad):
    log = tampered_log(tmp_path, 2, lambda c: c.insert(1, bad))
    assert [r["command"] for r in audit.iter_records(str(log))] == ["git status 0", "git status 1"]


def test_a_process_reads_the_anchor_only_when_someone_else_wrote_since(tmp_path, monkeypatch):
    path = str(tmp_path / "audit.jsonl")
    reads = []
    real = audit_anchor.load
    monkeypatch.setattr(audit_anchor, "load", lambda name: reads.append(name) or real(name))

    def build(name):
        def make(prev):
            event = {"name": name, "prev": prev}
            event["hash"] = audit_store.canonical_hash(event)
            return json.dumps(event) + "\n", [event["hash"]]

        return make

    audit_store.append(path, build("a"), 0)
    audit_store.append(path, build("b"), 0)
    assert len(reads) == 1  # the first append found no anchor; the second knew the one it wrote
    with open(path, "a") as other:  # another writer appends a chained record, anchor untouched
        other.write(build("x")(json.loads(lines(tmp_path / "audit.jsonl")[-1])["hash"])[0])
    audit_store.append(path, build("c"), 0)
    assert len(reads) == 2
    chain = [json.loads(line) for line in lines(tmp_path / "audit.jsonl")]
    assert [r["name"] for r in chain] == ["a", "b", "x", "c"]
    assert all(b["prev"] == a["hash"] for a, b in zip(chain, chain[1:], strict=False))
    anchor, _ = real(str(tmp_path / "audit.anchor"))
    assert anchor["records"] == 4 and anchor["head"] == chain[-1]["hash"]  # "x" was taken in


def test_the_anchor_is_rewritten_in_place_as_whole_pages(tmp_path):
    config = make_config(tmp_path)
    anchor_file = tmp_path / "audit.anchor"
    write_records(config, 1)
    inode = anchor_file.stat().st_ino
    anchor_file.write_bytes(b" " * (3 * audit_anchor.PAGE))  # longer than any anchor it holds
    audit_store._written.clear()
    write_records(config, 1)  # adopts the log (the anchor was unreadable), rewrites it in place
    assert anchor_file.stat().st_ino == inode and anchor_file.stat().st_size == audit_anchor.PAGE
    anchor, why = audit_anchor.load(str(anchor_file))
    assert why == "" and anchor["records"] == 2 and anchor["adopted"]["records"] == 1


def test_verify_reads_the_anchor_under_the_lock(tmp_path):
    import fcntl
    import threading

    config = make_config(tmp_path)
    write_records(config, 2)
    found = []
    lock = open(f"{config.audit_path}.lock", "w")  # noqa: SIM115
    fcntl.flock(lock, fcntl.LOCK_EX)  # an append in progress
    reader = threading.Thread(
        target=lambda: found.append(audit_store.read_anchor(config.audit_path))
    )
    reader.start()
    reader.join(0.3)
    assert reader.is_alive() and not found  # it waits for the append to finish
    lock.close()
    reader.join(5)
    assert found[0][0]["records"] == 2
