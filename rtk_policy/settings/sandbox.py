"""A private place for `doctor`'s probes, so that checking an install changes nothing of the user's.

The probes run the installed hook commands and this install's resident engine for real, under the
user's own policies, config and trust records, but with:
- a private runtime folder (`XDG_RUNTIME_DIR`): the engine doctor starts there, and any the
  probed thin client starts, listen on a socket nobody else uses, and are stopped before doctor
  ends (no resident engine is left running, none of the user's is asked);
- a private state folder (`XDG_STATE_HOME`) holding a copy of the trust records: the probes'
  audit records go there and are thrown away, so the user's log and `audit stats` stay as they were;
- with `private_cache`, a private compiled cache (`XDG_CACHE_HOME`): a probe that compiles does
  not write the user's cache (doctor reports a stale cache, `--fix` rebuilds it).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

from rtk_policy.config.paths import trust_file
from rtk_policy.serve import runtime

#: seconds the sandbox's engine is given to start listening (it loads the policies first)
START_SECONDS = 60.0
#: the longest socket path used (a Unix socket's path has at most 103 bytes on macOS, 107 on Linux)
SOCKET_PATH_MAX = 100
#: seconds a stopped engine is given to exit before it is killed
STOP_SECONDS = 15.0


class Sandbox:
    """A temporary folder and the environment that keeps doctor's probes inside it."""

    def __init__(self, private_cache: bool = False) -> None:
        self.folder = tempfile.mkdtemp(prefix="rtk-policy-doctor-")
        self.env = dict(os.environ)
        self.env["XDG_RUNTIME_DIR"] = self._private("run")
        if len(os.fsencode(self.socket_path)) > SOCKET_PATH_MAX:  # a long $TMPDIR: /tmp's
            self.run_folder: str | None = tempfile.mkdtemp(prefix="rtkpd-", dir="/tmp")
            self.env["XDG_RUNTIME_DIR"] = self.run_folder
        else:
            self.run_folder = None
        state = self._private("state")
        self.env["XDG_STATE_HOME"] = state
        self.env["RTK_POLICY_SERVE_IDLE"] = "5"  # an engine a probed client starts exits soon
        if private_cache:
            self.env["XDG_CACHE_HOME"] = self._private("cache")
        if os.path.isfile(trust_file()):
            os.makedirs(os.path.join(state, "rtk-policy"), mode=0o700)
            shutil.copy2(trust_file(), os.path.join(state, "rtk-policy", "trust.json"))
        self.server: subprocess.Popen[bytes] | None = None

    def _private(self, name: str) -> str:
        path = os.path.join(self.folder, name)
        os.mkdir(path, 0o700)
        return path

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def socket_path(self) -> str:
        """The socket of the sandbox's resident engine."""
        return os.path.join(self.env["XDG_RUNTIME_DIR"], "rtk-policy", runtime.SOCKET)

    @property
    def lock_path(self) -> str:
        """The lock file (holding the pid) of the sandbox's resident engine."""
        return os.path.join(self.env["XDG_RUNTIME_DIR"], "rtk-policy", runtime.LOCK)

    def start_server(self) -> str:
        """Start this install's resident engine in the sandbox as the thin client would; "" once
        it accepts connections, else why not."""
        from rtk_policy.serve.client import SERVER_ENV, server_command

        env = {name: self.env[name] for name in SERVER_ENV if name in self.env}
        errors = open(os.path.join(self.folder, "serve.err"), "wb")  # noqa: SIM115 - kept by Popen
        with errors:
            self.server = subprocess.Popen(
                server_command("60"),
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=errors,
                start_new_session=True,
            )
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if self.server.poll() is not None:
                return f"it exited with code {self.server.returncode}: {self._server_error()}"
            if self.listening():
                return ""
            time.sleep(0.05)
        return f"it did not listen within {START_SECONDS:.0f} s"

    def refuse_clients(self) -> None:
        """Make the sandbox's runtime folder one the thin client refuses (open to others): a
        probed client then decides in-process and starts no engine (used when doctor's own
        engine did not start, so that none is left behind)."""
        folder = os.path.dirname(self.socket_path)
        os.makedirs(folder, exist_ok=True)
        os.chmod(folder, 0o755)

    def _server_error(self) -> str:
        try:
            with open(os.path.join(self.folder, "serve.err"), encoding="utf-8") as file:
                lines = file.read().strip().splitlines()
        except OSError:
            lines = []
        return lines[-1] if lines else "no message"

    def listening(self) -> bool:
        """Whether an engine accepts connections on the sandbox's socket."""
        probe = socket.socket(socket.AF_UNIX)
        try:
            probe.connect(self.socket_path)
            return True
        except OSError:
            return False
        finally:
            probe.close()

    def close(self) -> None:
        """Stop every engine started in the sandbox (doctor's own and one a probed client
        started), wait until they are gone, and remove the folder."""
        if self.server is not None and self.server.poll() is None:
            self.server.send_signal(signal.SIGTERM)
            try:
                self.server.wait(STOP_SECONDS)
            except subprocess.TimeoutExpired:
                self.server.kill()
                self.server.wait()
        other = self._lock_holder()
        if other:
            _stop_pid(other)
        shutil.rmtree(self.folder, ignore_errors=True)
        if self.run_folder is not None:
            shutil.rmtree(self.run_folder, ignore_errors=True)

    def _lock_holder(self) -> int:
        """The pid of an engine that still holds the sandbox's lock (0: none)."""
        try:
            import fcntl
        except ImportError:  # no flock: no thin client, hence no engine started by a probe
            return 0
        try:
            with open(self.lock_path, "a+", encoding="ascii") as lock:
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:  # held: an engine runs, and its pid is in the file
                    lock.seek(0)
                    return int(lock.read().strip() or 0)
                return 0
        except (OSError, ValueError):
            return 0


def _stop_pid(pid: int) -> None:
    """SIGTERM `pid` and wait until it has exited (SIGKILL after `STOP_SECONDS`)."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + STOP_SECONDS
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
