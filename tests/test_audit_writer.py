"""The audit writer service (issue 15 point 6, the managed deployment): the hook hands each record
over a Unix socket to a writer of another uid, which stamps the sender from SO_PEERCRED, chains
with a key only it can read and owns the log.

The protocol is tested as one user (a writer started as a real `rtk-policy audit-writer`
process, the trust check's same-user refusal switched off); the other-uid guarantees with a real
writer dropped to `nobody` and a real "agent" process of a third uid (root only, skipped
otherwise); the fallback when the writer cannot be used through the real hook."""

from __future__ import annotations

import io
import json
import os
import time
from pathlib import Path

from test_audit_support import make_config, make_decision
from writer_fixtures import AGENT_UID, NOBODY, as_root, forked, write_config

from rtk_policy.audit import log as audit
from rtk_policy.audit import writer_client
from rtk_policy.audit.verify import verify
from rtk_policy.config import load
from rtk_policy.main import main


def record(config, command: str, verdict: str) -> None:
    """Record one decision as the hook does."""
    decision = make_decision(command, None, verdict=verdict)
    audit.record(config, agent="claude", request={"command": command}, decision=decision)


def lines(path: Path) -> list[dict]:
    """The records of a log file."""
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_writer_stamps_chains_with_its_key_and_writes_the_log(same_user_writer, capsys):
    """Records reach the writer's log, stamped with the sender's real uid, gid and pid, keyed."""
    config, socket, log, key = same_user_writer
    record(config, "rm -rf /", "deny")
    record(config, "git status", "allow")
    assert capsys.readouterr().err == ""
    written = lines(log)
    assert [r["command"] for r in written] == ["rm -rf /", "git status"]
    assert all(r["peer"] == {"uid": os.getuid(), "gid": os.getgid(), "pid": os.getpid()}
               for r in written)  # fmt: skip
    assert verify(str(log), audit.keyed_digest(str(key))).ok
    # the hashes are HMACs: without the key, a plain sha256 chain does not match them
    assert not verify(str(log), audit.audit_store.sha256).ok
    assert main(["audit", "verify", "--file", str(log), "--key", str(key)]) == 0
    assert not (Path(os.environ["XDG_STATE_HOME"]) / "rtk-policy" / "audit-spool.jsonl").exists()


def test_a_sender_cannot_claim_another_sender_or_its_own_chain(same_user_writer):
    """The sender's `peer`, `received`, `prev` and `hash` are replaced by the writer's own."""
    config, socket, log, key = same_user_writer
    forged = {"command": "rm -rf /", "verdict": "allow", "peer": {"uid": 0, "pid": 1},
              "received": "1970-01-01", "prev": "x", "hash": "y"}  # fmt: skip
    assert writer_client.hand_over(str(socket), [json.dumps(forged)]) == ""
    (stored,) = lines(log)
    assert stored["peer"]["uid"] == os.getuid() and stored["peer"]["pid"] == os.getpid()
    assert stored["received"] != "1970-01-01" and stored["prev"] == "" and stored["hash"] != "y"
    assert verify(str(log), audit.keyed_digest(str(key))).ok


def test_junk_is_refused_and_nothing_is_written(same_user_writer):
    """A batch with a line that is not a record is refused whole."""
    config, socket, log, key = same_user_writer
    problem = writer_client.hand_over(str(socket), ['{"command": "ls"}', "not json"])
    assert "error" in problem
    assert not log.exists() or log.read_text() == ""


def test_a_writer_of_the_hooks_own_user_is_not_trusted(same_user_writer, monkeypatch, capsys):
    """The agent could run such a writer itself: the record goes to the local spool instead."""
    config, socket, log, key = same_user_writer
    monkeypatch.setattr(writer_client, "SAME_USER_OK", False)
    record(config, "rm -rf /", "deny")
    err = capsys.readouterr().err
    assert "runs as this user" in err and "audit-spool.jsonl" in err
    spool = Path(os.environ["XDG_STATE_HOME"]) / "rtk-policy" / "audit-spool.jsonl"
    assert [r["command"] for r in lines(spool)] == ["rm -rf /"]
    assert verify(str(spool)).ok
    assert not log.exists()


def test_an_unreachable_writer_never_changes_the_answer_and_spools(tmp_path, monkeypatch, capsys):
    """The real hook with a managed config naming a writer that is not running: the deny stands,
    stdout holds only the answer, stderr says where the record went, the spool holds it."""
    from rtk_policy.commands import hook
    from rtk_policy.config import paths
    from rtk_policy.hook.service import HookOptions

    managed = tmp_path / "managed"
    (managed / "policies").mkdir(parents=True)
    write_config(managed, tmp_path / "run" / "writer.sock", tmp_path / "log.jsonl", tmp_path / "k")
    monkeypatch.setattr(paths, "MANAGED_DIR", str(managed))
    monkeypatch.setattr(paths, "MANAGED_OWNER_UID", os.getuid())
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    payload = {"session_id": "s", "cwd": str(tmp_path), "hook_event_name": "PreToolUse",
               "tool_name": "Bash", "tool_input": {"command": "rm -rf /"}}  # fmt: skip
    out, err = io.StringIO(), io.StringIO()
    hook.run(HookOptions(agent="claude"), io.BytesIO(json.dumps(payload).encode()), out, err)
    answer = json.loads(out.getvalue())
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    said = capsys.readouterr().err
    assert "audit writer" in said and "not used" in said and "audit-spool.jsonl" in said
    spool = tmp_path / "state" / "rtk-policy" / "audit-spool.jsonl"
    assert [r["verdict"] for r in lines(spool)] == ["deny"]
    assert not (tmp_path / "log.jsonl").exists() and not (tmp_path / "writer.sock").exists()


def test_only_the_managed_config_chooses_the_writer(tmp_path):
    """A user config naming a writer (one the agent could run) is ignored, with a notice."""
    user = tmp_path / "user.toml"
    user.write_text('[audit]\nwriter = "/tmp/agent.sock"\n')
    config = load.merge_layers([("user", True, str(user), user.read_bytes())])
    assert config.audit_writer == ""
    assert any("only the managed config" in notice for notice in config.notices)


def test_a_socket_folder_others_can_write_is_refused(tmp_path):
    """Anyone could have put that socket there: not used."""
    run = tmp_path / "run"
    run.mkdir()
    run.chmod(0o777)
    assert "writable by its group or others" in writer_client.hand_over(str(run / "s"), ["{}"])


# --- with real other uids (root only) -----------------------------------------------------------




@as_root
def test_the_agents_user_cannot_read_the_key_nor_rewrite_the_log(nobody_writer):
    """A process of a third uid (the agent) can send records, stamped with its uid and pid, but
    cannot read the key, write, append to or delete the log, touch the anchor or the socket."""
    config, socket, log, key, base = nobody_writer
    result = base / "agent-result.json"
    result.touch()
    os.chown(result, AGENT_UID, AGENT_UID)

    def agent() -> int:
        """As the agent's user: hand a record over (it must work), then attack the log."""
        attempts = {"sent": writer_client.hand_over(str(socket), [json.dumps({"command": "x"})])}
        for name, attack in (
            ("read key", lambda: open(key, "rb").read()),
            ("rewrite log", lambda: open(log, "w").write("")),
            ("append log", lambda: open(log, "a").write("{}\n")),
            ("delete log", lambda: os.unlink(log)),
            ("rewrite anchor", lambda: open(log.with_suffix(".anchor"), "w").write("")),
            ("replace socket", lambda: os.unlink(socket)),
        ):
            try:
                attack()
                attempts[name] = "done"
            except PermissionError:
                attempts[name] = "refused"
        result.write_text(json.dumps(attempts))
        return 0

    pid = forked(agent, AGENT_UID)
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
    attempts = json.loads(result.read_text())
    assert attempts.pop("sent") == ""
    assert attempts == dict.fromkeys(attempts, "refused") and len(attempts) == 6
    (stored,) = lines(log)
    assert stored["peer"]["uid"] == AGENT_UID and stored["peer"]["pid"] == pid
    assert os.stat(log).st_uid == NOBODY and os.stat(log).st_mode & 0o077 == 0
    assert os.stat(log.parent).st_uid == NOBODY and os.stat(socket.parent).st_uid == NOBODY
    # as root (or the writer's user), `audit verify` checks the keyed chain
    assert main(["audit", "verify", "--file", str(log), "--key", str(key)]) == 0


@as_root
def test_the_hook_as_root_hands_over_to_the_nobody_writer(nobody_writer, capsys):
    """Here the hook (this root process) and the writer (nobody) differ, so no same-user
    refusal applies: records land keyed in the writer's log, the spool stays empty."""
    config, socket, log, key, base = nobody_writer
    sender = make_config(base, audit_writer=str(socket))
    record(sender, "rm -rf /", "deny")
    assert capsys.readouterr().err == ""
    (stored,) = lines(log)
    assert stored["verdict"] == "deny" and stored["peer"]["uid"] == 0
    assert verify(str(log), audit.keyed_digest(str(key))).ok


def test_a_writer_that_cannot_read_its_key_does_not_start(tmp_path, capsys):
    """It would write an unkeyed chain: it says why and exits 2 instead."""
    config = write_config(tmp_path, tmp_path / "writer.sock", tmp_path / "log.jsonl",
                          tmp_path / "missing.key")  # fmt: skip
    umask = os.umask(0o022)  # the writer sets its own (0077): the suite's is restored after
    try:
        assert main(["audit-writer", "--config", str(config)]) == 2
    finally:
        os.umask(umask)
    assert "missing.key" in capsys.readouterr().err
    assert not (tmp_path / "log.jsonl").exists() and not (tmp_path / "writer.sock").exists()


def test_a_writer_that_never_answers_costs_at_most_the_timeout(tmp_path, monkeypatch, capsys):
    """A writer that takes the connection and hangs: the record is spooled after the timeout."""
    import socket
    import threading

    run = tmp_path / "run"
    run.mkdir(mode=0o755)
    path = run / "writer.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)
    held = []
    threading.Thread(target=lambda: held.append(listener.accept()), daemon=True).start()
    monkeypatch.setattr(writer_client, "SAME_USER_OK", True)
    monkeypatch.setattr(writer_client, "TIMEOUT", 0.3)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    started = time.monotonic()
    record(make_config(tmp_path, audit_writer=str(path)), "rm -rf /", "deny")
    assert time.monotonic() - started < 3
    assert "timed out" in capsys.readouterr().err
    spool = tmp_path / "state" / "rtk-policy" / "audit-spool.jsonl"
    assert [r["verdict"] for r in lines(spool)] == ["deny"]
    listener.close()


def test_audit_verify_takes_the_writers_log_and_key_from_the_managed_config(
    same_user_writer, monkeypatch, capsys
):
    """Run by root or the writer's user, plain `audit verify` checks the keyed chain."""
    from rtk_policy.config import paths

    config, socket, log, key = same_user_writer
    record(config, "rm -rf /", "deny")
    monkeypatch.setattr(paths, "MANAGED_DIR", str(log.parent.parent))
    monkeypatch.setattr(paths, "MANAGED_OWNER_UID", os.getuid())
    capsys.readouterr()
    assert main(["audit", "verify"]) == 0
    out = capsys.readouterr().out
    assert "ok" in out and "1 record" in out, out
    # a forged record (the plain sha256 the agent could compute) fails the keyed check
    forged = lines(log)[0]
    forged["verdict"] = "allow"
    forged["hash"] = audit.audit_store.canonical_hash(forged)
    log.write_text(json.dumps(forged) + "\n")
    assert main(["audit", "verify"]) == 1
