"""Audit records forwarded to syslog (issue 15, point 6), received by a REAL rsyslogd the test
starts with its own config (imudp, imtcp, imuxsock on 127.0.0.1 ports / a socket in a temp folder,
omfile into the same folder): framing, RFC 5424 fields and the record itself as MSG, for each
transport, from `record()`, from the http server's batched `write_records` and from the real `hook`
process.

Without rsyslogd installed these tests skip, saying so; with RTK_E2E_REQUIRED=1 (CI) they fail
instead. The forwarding's own failure handling (nothing listening, a stalled TCP peer) needs no
rsyslogd."""

from __future__ import annotations

import _socket
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_audit_support import make_config, make_decision

from rtk_policy.audit import anchor as audit_anchor
from rtk_policy.audit import forward
from rtk_policy.audit import log as audit
from rtk_policy.audit import store as audit_store
from rtk_policy.audit.verify import verify
from rtk_policy.config.load import (
    TRUSTED_ONLY_KEYS,
    ConfigError,
    config_from_mapping,
    load_config,
    parse_config,
)

ROOT = Path(__file__).resolve().parent.parent
RSYSLOGD = shutil.which("rsyslogd") or next(
    (path for path in ("/usr/sbin/rsyslogd", "/sbin/rsyslogd") if os.access(path, os.X_OK)), None
)
FIELDS = ("input", "pri", "time", "host", "app", "procid", "msgid", "sd", "msg")
CONFIG = """\
global(workDirectory="{dir}" maxMessageSize="256k")
module(load="imuxsock" SysSock.Use="off")
module(load="imudp")
module(load="imtcp")
input(type="imudp" address="127.0.0.1" port="{udp}")
input(type="imtcp" address="127.0.0.1" port="{tcp}")
input(type="imuxsock" socket="{dir}/log.sock" useSpecialParser="off" parseHostname="on"
      ignoreTimestamp="off")
template(name="fields" type="list") {{
  property(name="inputname") constant(value="\\t")
  property(name="pri") constant(value="\\t")
  property(name="timereported" dateFormat="rfc3339") constant(value="\\t")
  property(name="hostname") constant(value="\\t")
  property(name="app-name") constant(value="\\t")
  property(name="procid") constant(value="\\t")
  property(name="msgid") constant(value="\\t")
  property(name="structured-data") constant(value="\\t")
  property(name="msg") constant(value="\\n")
}}
action(type="omfile" file="{dir}/received.log" template="fields")
"""


def _free_port(kind: int) -> int:
    with socket.socket(socket.AF_INET, kind) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Rsyslog:
    """A running rsyslogd of the test's own, and what it received."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.udp, self.tcp = _free_port(socket.SOCK_DGRAM), _free_port(socket.SOCK_STREAM)
        self.targets = {
            "udp": f"udp://127.0.0.1:{self.udp}",
            "tcp": f"tcp://127.0.0.1:{self.tcp}",
            "unix": f"unix:{folder}/log.sock",
        }
        conf = folder / "rsyslog.conf"
        conf.write_text(CONFIG.format(dir=folder, udp=self.udp, tcp=self.tcp))
        self.process = subprocess.Popen(
            [RSYSLOGD, "-n", "-f", str(conf), "-i", str(folder / "rsyslogd.pid")],
            stdout=open(folder / "rsyslogd.out", "wb"),  # noqa: SIM115 - closed with the process
            stderr=subprocess.STDOUT,
        )

    def received(self) -> list[dict[str, str]]:
        """Every message received so far, as its template's fields."""
        path = self.folder / "received.log"
        if not path.exists():
            return []
        rows = [dict(zip(FIELDS, line.split("\t", 8), strict=True)) for line in _lines(path)]
        return rows

    def messages(self, app: str = forward.APP_NAME) -> list[dict[str, str]]:
        return [row for row in self.received() if row["app"] == app]

    def wait_for(self, count: int, timeout: float = 20.0) -> list[dict[str, str]]:
        """The first `count` rtk-policy messages, once they have all arrived."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.messages()
            if len(found) >= count:
                return found
            time.sleep(0.05)
        output = (self.folder / "rsyslogd.out").read_text(errors="replace")
        raise AssertionError(
            f"{len(self.messages())} of {count} messages arrived; rsyslogd: {output}"
        )

    def wait_ready(self, timeout: float = 20.0) -> None:
        """Probe each input until rsyslogd has received a probe through all three."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                output = (self.folder / "rsyslogd.out").read_text(errors="replace")
                raise AssertionError(f"rsyslogd exited {self.process.returncode}: {output}")
            for name, target in self.targets.items():
                kind, address = forward.parse_target(target)
                forward.send(kind, address, [f"<14>1 - - probe - - - {name}".encode()])
            inputs = {row["input"] for row in self.received() if row["app"] == "probe"}
            if inputs >= {"imudp", "imtcp", "imuxsock"}:
                return
            time.sleep(0.1)
        raise AssertionError("rsyslogd did not start listening")

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _lines(path: Path) -> list[str]:
    """The whole lines of `path` (omfile may have written a long line's start only, so far)."""
    return [line for line in path.read_text().split("\n")[:-1] if line]


@pytest.fixture()
def rsyslog(tmp_path):
    if RSYSLOGD is None:
        reason = "rsyslogd is not installed (Debian: apt-get install -y rsyslog)"
        if os.environ.get("RTK_E2E_REQUIRED") == "1":
            pytest.fail(f"{reason}, and RTK_E2E_REQUIRED=1")
        pytest.skip(reason)
    folder = tmp_path / "rsyslog"
    folder.mkdir()
    server = Rsyslog(folder)
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()


def fill(config, rows) -> list[str]:
    """Record `rows` ((command, verdict) pairs) as the hook does; the log lines written."""
    for command, verdict in rows:
        decision = make_decision(command, None, verdict=verdict)
        audit.record(config, agent="claude", request={"command": command}, decision=decision)
    return Path(config.audit_path).read_text().splitlines()


ROWS = [
    ("git status", "allow"),
    ("rm -rf /", "deny"),
    ('echo "quoted ] bracket" \\ and ünïcödé', "ask"),
    ("x" * 20000, "allow"),  # a long record: one datagram, one octet-counted frame
]


@pytest.mark.parametrize("transport", ["udp", "tcp", "unix"])
def test_each_record_arrives_as_rfc5424_with_the_log_line_as_msg(rsyslog, tmp_path, transport):
    config = make_config(
        tmp_path, audit_syslog=rsyslog.targets[transport], audit_syslog_facility="local3"
    )
    lines = fill(config, ROWS)
    got = rsyslog.wait_for(len(ROWS))
    assert [row["input"] for row in got] == [f"im{transport}".replace("imunix", "imuxsock")] * 4
    assert [row["msg"] for row in got] == lines  # the exact log line, unframed, untruncated
    records = [json.loads(line) for line in lines]
    for seq, (row, record) in enumerate(zip(got, records, strict=True), 1):
        severity = {"deny": 4, "ask": 5}.get(record["verdict"], 6)
        assert int(row["pri"]) == 19 * 8 + severity  # local3
        assert row["time"] == record["time"]  # the decision's own time, microseconds and all
        assert (row["app"], row["procid"], row["msgid"]) == (
            "rtk-policy",
            str(os.getpid()),
            "decision",
        )
        assert row["host"] == socket.gethostname()
        expected = f'[rtk-policy@32473 seq="{seq}" verdict="{record["verdict"]}" unsent="0"]'
        assert row["sd"] == expected
    anchor, _ = audit_anchor.load(audit_anchor.anchor_path(config.audit_path))
    assert anchor["syslog"] == {"sent": 4, "failed": 0, "error": ""}


def test_the_collectors_copy_is_a_chain_of_its_own(rsyslog, tmp_path):
    """The received MSGs re-assembled into a file verify as the log does."""
    config = make_config(tmp_path, audit_syslog=rsyslog.targets["udp"])
    fill(config, ROWS[:3])
    copy = tmp_path / "copy" / "audit.jsonl"
    copy.parent.mkdir()
    copy.write_text("".join(row["msg"] + "\n" for row in rsyslog.wait_for(3)))
    result = verify(str(copy))
    assert result.problem.endswith("anchor missing: it was deleted or damaged, or nothing was "
                                   "logged since an upgrade (records cut from the end or deleted "
                                   "files cannot be seen)")  # fmt: skip
    assert result.records == 3  # every hash and link of the copy checked


def test_a_consistent_local_forgery_is_shown_by_the_syslog_copy(rsyslog, tmp_path, capsys):
    config = make_config(tmp_path, audit_syslog=rsyslog.targets["tcp"])
    fill(config, ROWS[:3])
    log = Path(config.audit_path)
    kept = [json.loads(line) for line in log.read_text().splitlines()]
    kept = [row for row in kept if row["verdict"] != "deny"]
    prev = audit_store.GENESIS
    text = ""
    for row in kept:  # the attacker re-chains what is left, and writes a matching anchor
        row["prev"] = prev
        row["hash"] = prev = audit_store.canonical_hash(row)
        text += json.dumps(row) + "\n"
    log.write_text(text)
    anchor = audit_anchor.new()
    audit_anchor.appended(anchor, [row["hash"] for row in kept], log.stat().st_size)
    audit_anchor.save(audit_anchor.anchor_path(str(log)), anchor)
    assert verify(str(log)).ok  # the local limit
    collected = [json.loads(row["msg"]) for row in rsyslog.wait_for(3)]
    assert [row["command"] for row in collected if row["verdict"] == "deny"] == ["rm -rf /"]
    assert collected[-1]["hash"] != json.loads(log.read_text().splitlines()[-1])["hash"]


def test_batched_records_of_the_http_server_arrive_framed_one_by_one(rsyslog, tmp_path):
    config = make_config(tmp_path, audit_syslog=rsyslog.targets["tcp"])
    records: list = []
    audit.defer(records)
    try:
        fill_rows = [(f"git log -{n}", "allow") for n in range(10)]
        for command, verdict in fill_rows:
            decision = make_decision(command, None, verdict=verdict)
            audit.record(config, agent="claude", request={"command": command}, decision=decision)
    finally:
        audit.defer(None)
    audit.write_records(records)  # one locked append, one TCP connection, ten frames
    lines = Path(config.audit_path).read_text().splitlines()
    got = rsyslog.wait_for(10)
    assert [row["msg"] for row in got] == lines
    assert [row["sd"].split('"')[1] for row in got] == [str(n) for n in range(1, 11)]


def test_records_not_forwarded_are_counted_and_the_next_message_says_so(rsyslog, tmp_path):
    dead = f"tcp://127.0.0.1:{_free_port(socket.SOCK_STREAM)}"
    fill(make_config(tmp_path, audit_syslog=dead), [("rm -rf /", "deny")])
    config = make_config(tmp_path, audit_syslog=rsyslog.targets["udp"])
    fill(config, [("git status", "allow")])
    (row,) = rsyslog.wait_for(1)
    assert row["sd"] == '[rtk-policy@32473 seq="2" verdict="allow" unsent="1"]'


def test_the_real_hook_forwards_what_it_decides(rsyslog, tmp_path):
    home = tmp_path / "home"
    (home / "config" / "rtk-policy").mkdir(parents=True)
    (home / "config" / "rtk-policy" / "config.toml").write_text(
        f'[audit.syslog]\ntarget = "{rsyslog.targets["unix"]}"\nfacility = "authpriv"\n'
    )
    env = dict(os.environ, HOME=str(home), XDG_CONFIG_HOME=str(home / "config"),
               XDG_STATE_HOME=str(home / "state"), RTK_POLICY_STDIN_TIMEOUT="2")  # fmt: skip
    env.pop("RTK_POLICY_FAIL", None)
    for command in ("git status", "rm -rf /"):
        payload = {"session_id": "s", "cwd": "/tmp", "hook_event_name": "PreToolUse",
                   "tool_name": "Bash", "tool_input": {"command": command}}  # fmt: skip
        done = subprocess.run(
            [sys.executable, "-m", "rtk_policy", "hook", "claude"],
            input=json.dumps(payload).encode(), capture_output=True, env=env, timeout=60,
            cwd="/tmp",
        )  # fmt: skip
        assert done.returncode == 0 and done.stderr == b"", done.stderr
        assert done.stdout == b"" or json.loads(done.stdout)
    log = home / "state" / "rtk-policy" / "audit.jsonl"
    got = rsyslog.wait_for(2)
    assert [row["msg"] for row in got] == log.read_text().splitlines()
    deny = json.loads(got[1]["msg"])
    assert deny["command"] == "rm -rf /" and deny["verdict"] == "deny"
    assert int(got[1]["pri"]) == 10 * 8 + 4  # authpriv.warning


# --- failures of the forwarding itself (no rsyslogd needed) ---------------------------------


def test_nothing_listening_costs_a_stderr_line_and_a_count_never_the_record(tmp_path, capsys):
    config = make_config(tmp_path, audit_syslog=f"unix:{tmp_path}/nobody.sock")
    lines = fill(config, [("rm -rf /", "deny"), ("ls", "allow")])
    out, err = capsys.readouterr()
    assert out == "" and len(lines) == 2
    assert err.count("audit record not forwarded to syslog: unix:") == 2
    anchor, _ = audit_anchor.load(audit_anchor.anchor_path(config.audit_path))
    assert anchor["syslog"]["failed"] == 2 and "No such file" in anchor["syslog"]["error"]
    result = verify(config.audit_path)
    assert result.ok and any(
        "syslog: 2 records were not forwarded" in note for note in result.notes
    )


def test_a_stalled_tcp_collector_does_not_hold_the_hook(tmp_path, capsys):
    """A listener that never accepts, its backlog full: connect times out after `TIMEOUT`."""
    listener = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = []
    try:
        for _ in range(8):  # fill the accept queue (the kernel then drops new SYNs)
            filler = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
            filler.setblocking(False)
            try:
                filler.connect(("127.0.0.1", port))
            except BlockingIOError:
                pass
            fillers.append(filler)
        config = make_config(tmp_path, audit_syslog=f"tcp://127.0.0.1:{port}")
        started = time.perf_counter()
        lines = fill(config, [("rm -rf /", "deny")])
        elapsed = time.perf_counter() - started
    finally:
        for filler in fillers:
            filler.close()
        listener.close()
    assert len(lines) == 1 and elapsed < 1.0
    assert "timed out" in capsys.readouterr().err


@pytest.mark.parametrize(
    "target",
    ["udp://localhost:514", "tcp://127.0.0.1:0", "unix:relative.sock", "syslog://x", "127.0.0.1"],
)
def test_a_bad_target_is_a_config_error(tmp_path, target):
    path = tmp_path / "config.toml"
    path.write_text(f'[audit.syslog]\ntarget = "{target}"\n')
    with pytest.raises(ConfigError, match="syslog target"):
        parse_config(str(path), path.read_bytes())
    assert "syslog target" in load_config(str(path)).problems[0]  # left out, never half-applied


def test_audit_keys_are_read_checked_and_trusted_only(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text(
        '[audit]\nkey_file = "/etc/rtk-policy/audit.key"\n'
        '[audit.syslog]\ntarget = "udp://[::1]"\nfacility = "local7"\n'
    )
    config = load_config(str(path))
    assert (config.audit_key_file, config.audit_syslog, config.audit_syslog_facility) == (
        "/etc/rtk-policy/audit.key", "udp://[::1]", "local7",
    )  # fmt: skip
    assert forward.parse_target("udp://[::1]") == ("udp", ("::1", 514))
    assert config_from_mapping({}, config) == config  # a --batch line keeps them
    path.write_text('[audit.syslog]\nfacility = "local9"\n')
    with pytest.raises(ConfigError, match="facility"):
        parse_config(str(path), path.read_bytes())
    path.write_text('[audit]\nkey-file = "x"\n')
    with pytest.raises(ConfigError, match=r"unknown key 'key-file' in \[audit\]"):
        parse_config(str(path), path.read_bytes())
    assert {"audit.key_file", "audit.syslog.target", "audit.max_bytes"} <= TRUSTED_ONLY_KEYS
