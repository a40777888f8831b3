"""Real audit writers for the tests (`tests/conftest.py` registers the fixtures): one of this
user (`same_user_writer`, the trust check's same-user refusal switched off) and, as root, one
dropped to `nobody` (`nobody_writer`); `_forked` runs code as another uid (the "agent")."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from rtk_policy.audit import writer, writer_client
from rtk_policy.config import load

KEY = b"k" * 32
NOBODY = 65534
AGENT_UID = 43210  #: a uid with no account: the "agent" of the root-only tests
as_root = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0,
    reason="needs root: the writer and the agent must run as two other uids",
)


def write_config(folder: Path, socket: Path, log: Path, key: Path) -> Path:
    """A managed-style config.toml in `folder` naming the writer's socket, log and key."""
    config = folder / "config.toml"
    config.write_text(f'[audit]\npath = "{log}"\nkey_file = "{key}"\nwriter = "{socket}"\n')
    config.chmod(0o644)  # as init writes it, whatever the umask: every user's hook reads it
    return config


def wait_for(path: Path, process: subprocess.Popen | None = None) -> None:
    """Wait until the writer listens at `path`, failing early when `process` exits. The socket
    file appears when the writer binds, before it listens: a connection made in between is
    refused (seen on a loaded CI machine), so the wait ends with an empty request answered."""
    for _ in range(200):
        if path.exists() and _answers(path):
            return
        if process is not None and process.poll() is not None:
            raise AssertionError(f"the writer exited: {process.stderr.read()}")
        time.sleep(0.05)
    raise AssertionError(f"{path} never answered")


def _answers(path: Path) -> bool:
    """Whether the writer at `path` answers an empty request (which writes no record)."""
    import socket

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(5)
        try:
            probe.connect(str(path))
            probe.shutdown(socket.SHUT_WR)
            return probe.recv(64).startswith(b"ok 0")
        except OSError:
            return False



@pytest.fixture()
def same_user_writer(tmp_path, monkeypatch):
    """A real `rtk-policy audit-writer` of this user: (its config, socket, log, key)."""
    key = tmp_path / "audit.key"
    key.write_bytes(KEY)
    key.chmod(0o600)
    run = tmp_path / "run"
    run.mkdir(mode=0o755)
    socket, log = run / "writer.sock", tmp_path / "log" / "audit.jsonl"
    config = write_config(tmp_path, socket, log, key)
    process = subprocess.Popen(
        [sys.executable, "-m", "rtk_policy", "audit-writer", "--config", str(config)],
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    wait_for(socket, process)
    monkeypatch.setattr(writer_client, "SAME_USER_OK", True)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    yield load.merge_layers([("managed", True, str(config), config.read_bytes())]), socket, log, key
    process.send_signal(signal.SIGTERM)
    process.wait(10)


def drop_to(uid: int) -> None:
    """Become `uid` for good (no groups, its gid)."""
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)


def forked(work, uid: int) -> int:
    """Run `work()` in a child of `uid` (imports done before: the child may not read them)."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            drop_to(uid)
            code = work() or 0
        except BaseException:  # noqa: BLE001 - the child reports through its exit code
            import traceback

            traceback.print_exc()
        finally:
            os._exit(code)
    return pid


@pytest.fixture()
def nobody_writer():
    """A writer started as root that makes its folders `nobody`'s and becomes `nobody`
    (`--user`), under a root-owned 0755 folder: (its config, socket, log, key, base folder)."""
    import pwd
    import signal as _signal  # noqa: F401 - imported before the fork: the child cannot read it
    import socketserver  # noqa: F401

    from rtk_policy.audit import forward  # noqa: F401
    from rtk_policy.util import hashing  # noqa: F401

    nobody = pwd.getpwuid(NOBODY).pw_name
    base = Path(tempfile.mkdtemp(prefix="rtk-writer-", dir="/tmp"))
    base.chmod(0o755)
    keys = base / "keys"
    keys.mkdir()
    keys.chmod(0o755)  # whatever the umask: the writer (nobody) must reach its key
    key = keys / "audit.key"
    key.write_bytes(KEY)
    key.chmod(0o600)
    os.chown(key, NOBODY, NOBODY)
    socket, log = base / "run" / "writer.sock", base / "state" / "audit.jsonl"
    config_file = write_config(base, socket, log, key)
    config = writer.writer_config(str(config_file))
    pid = os.fork()
    if pid == 0:
        try:
            writer.serve(config, user=nobody)
        finally:
            os._exit(0)
    wait_for(socket)
    yield config, socket, log, key, base
    os.kill(pid, signal.SIGTERM)
    os.waitpid(pid, 0)
    import shutil

    shutil.rmtree(base, ignore_errors=True)
