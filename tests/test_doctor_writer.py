"""`doctor` on a machine-wide install's audit writer (`settings/writer_health.py`): the writer the
managed config names must answer on its socket as a user other than this one, and its key must be
the writer's alone. Doctor stays read-only: the writer's log is never written by the check.

Real writers, as `test_audit_writer` starts them: one of this user (refused: it keeps nothing from
the agent), one dropped to `nobody` and an "agent" process of a third uid (root only)."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

from writer_fixtures import AGENT_UID, NOBODY, as_root, forked, write_config

from rtk_policy.audit import writer_client
from rtk_policy.settings.writer_health import writer_findings


def _texts(found) -> list[tuple[bool, str]]:
    """(ok, text) of each finding."""
    return [(finding.ok, finding.text) for finding in found]


def test_no_managed_config_or_no_writer_means_no_finding(tmp_path):
    """A user-level install (no managed config, or one naming no writer): nothing to report."""
    assert writer_findings(str(tmp_path / "absent.toml")) == []
    plain = tmp_path / "config.toml"
    plain.write_text('fail_mode = "closed"\n')
    assert writer_findings(str(plain)) == []


def test_a_writer_that_is_not_running_is_a_problem_with_the_start_command(tmp_path):
    """No socket: a problem whose fix starts the writer and says where records go meanwhile."""
    key = tmp_path / "audit.key"
    key.write_bytes(b"k" * 32)
    key.chmod(0o600)
    (tmp_path / "run").mkdir(mode=0o755)
    config = write_config(tmp_path, tmp_path / "run/writer.sock", tmp_path / "log.jsonl", key)
    reachable, _ = writer_findings(str(config))
    assert not reachable.ok and "cannot be used" in reachable.text
    assert "audit-spool.jsonl" in reachable.fix and "init --system" in reachable.fix


def test_a_writer_of_this_user_is_a_problem(same_user_writer, monkeypatch):
    """The same-user writer answers, but it runs as the agent's user: it protects nothing."""
    config, socket, log, key = same_user_writer
    monkeypatch.setattr(writer_client, "SAME_USER_OK", False)
    config_file = str(Path(key).parent / "config.toml")
    reachable, key_check = writer_findings(config_file)
    assert not reachable.ok and "runs as this user" in reachable.text
    assert not log.exists()  # the check sent no record


@as_root
def test_the_nobody_writer_and_its_key_are_ok_and_nothing_is_written(nobody_writer):
    """The writer of another uid answers; its 0600 key is its own; the check writes no record."""
    config, socket, log, key, base = nobody_writer
    found = writer_findings(str(base / "config.toml"))
    assert _texts(found) == [
        (True, f"the audit writer answers at {socket} and runs as another user (uid {NOBODY})"),
        (True, f"the audit key {key} can be read by the writer's user only"),
    ]
    assert not log.exists()  # asked with an empty hand-over: the writer wrote nothing


@as_root
def test_a_key_others_can_read_or_of_another_owner_is_a_problem(nobody_writer):
    """A key of mode 0644, or owned by root rather than the writer: each is a problem."""
    config, socket, log, key, base = nobody_writer
    key.chmod(0o644)
    _, check = writer_findings(str(base / "config.toml"))
    assert not check.ok and "-rw-r--r--" in check.text and "chmod 600" in check.fix
    key.chmod(0o600)
    os.chown(key, 0, 0)
    _, check = writer_findings(str(base / "config.toml"))
    assert not check.ok and f"not the writer's (uid {NOBODY})" in check.text


@as_root
def test_as_the_agents_user_the_key_is_checked_by_access(nobody_writer):
    """Run by the agent's user (a third uid): the writer is another user (ok) and the key is
    out of reach (ok); a key that user owns is a problem, whatever its mode."""
    config, socket, log, key, base = nobody_writer
    result = base / "agent-result.json"

    def agent() -> int:
        found = writer_findings(str(base / "config.toml"))
        with open(result, "w") as handle:
            handle.write(json.dumps(_texts(found)))
        return 0

    outcomes = []
    for owner in (NOBODY, AGENT_UID):
        os.chown(key, owner, owner)
        result.touch()
        os.chown(result, AGENT_UID, AGENT_UID)
        pid = forked(agent, AGENT_UID)
        assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
        outcomes.append(json.loads(result.read_text()))
    (reachable_ok, _), (key_ok, _) = outcomes[0]
    assert reachable_ok and key_ok
    _, (key_ok, text) = outcomes[1]
    assert not key_ok and f"this user (uid {AGENT_UID}) can read it" in text
    assert not log.exists()


@as_root
def test_doctor_reports_the_writer_in_text_and_json(nobody_writer, monkeypatch, tmp_path):
    """The whole `doctor`, its managed folder the writer's: the writer's lines are in both
    forms, and neither form writes the writer's log (nor the user's)."""
    from rtk_policy.commands import doctor
    from rtk_policy.config import paths

    config, socket, log, key, base = nobody_writer
    monkeypatch.setattr(paths, "MANAGED_DIR", str(base))
    for name in ("HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    doctor.run(stdout=out, stderr=io.StringIO())
    assert f"ok      the audit writer answers at {socket}" in out.getvalue()
    assert f"ok      the audit key {key} can be read by the writer's user only" in out.getvalue()
    out = io.StringIO()
    doctor.run(as_json=True, stdout=out, stderr=io.StringIO())
    texts = {item["text"]: item["ok"] for item in json.loads(out.getvalue())["findings"]}
    assert texts[f"the audit key {key} can be read by the writer's user only"] is True
    assert not log.exists() and not (tmp_path / "xdg_state_home/rtk-policy/audit.jsonl").exists()
