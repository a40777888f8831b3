"""The audit writer service (`rtk-policy audit-writer`): the one process that writes the log in a
managed deployment, as a user of its own, so that the agent's user can neither read its key nor
rewrite what it wrote (issue 15 point 6, DESIGN §13).

The hook runs as the agent's user; whatever it can write or read, the agent can too. So in the
managed deployment it does not write the log: it hands each record to this service over a Unix
socket (`writer_client.py`). The service runs as a dedicated system user (`rtk-policy-audit`,
made by `init --system`; `settings/writer_service.py` writes its systemd unit and launchd plist)
and takes its settings from the managed config only (`[audit] path`, `key_file`, `max_bytes`,
`[audit.syslog]`). For every record it:

- stamps who sent it as the kernel says (SO_PEERCRED: `peer` = uid, gid, pid) and when it came
  (`received`), replacing whatever the sender put there: a record cannot claim another sender;
- chains it with HMAC-SHA256 under a key file only its user can read (`[audit] key_file`);
- appends it to its log and anchor (`audit/store.py`), which belong to its user (0600 in a 0700
  folder): the agent's user cannot read, rewrite, truncate or delete them;
- forwards it to syslog when configured (`audit/forward.py`).

`audit verify` run as root or as the writer's user checks that keyed chain. A client that sends
junk gets `error …` and nothing is written; a slow one is cut off after `READ_TIMEOUT` seconds
and cannot hold up the others (one thread a connection; appends are serialised by the log's lock).
"""

from __future__ import annotations

import json
import os
import socketserver
import sys
from typing import Any

from rtk_policy.audit import log as audit_log
from rtk_policy.audit.event import _now
from rtk_policy.config.load import Config
from rtk_policy.config.managed import writer_log, writer_socket
from rtk_policy.serve.runtime import peer_credentials

#: the socket a managed config names by default (`init --system` writes it there)
DEFAULT_SOCKET = writer_socket()
#: the log the writer keeps by default
DEFAULT_LOG = writer_log()
#: the most one connection may send, and how long it may take
MAX_BYTES = 4 << 20
READ_TIMEOUT = 5.0
#: fields the writer sets itself: a sender's own values for them are dropped
STAMPED = ("peer", "received", "prev", "hash")


def stamp(line: bytes, credentials: tuple[Any, Any, Any] | None) -> dict[str, Any]:
    """The record on `line` with who sent it (`credentials`: the kernel's pid, uid, gid) and when
    the writer received it; ValueError when the line is not a JSON object."""
    record = json.loads(line)
    if not isinstance(record, dict):
        raise ValueError("a record must be a JSON object")
    for field in STAMPED:
        record.pop(field, None)
    pid, uid, gid = credentials or (None, None, None)
    record["peer"] = {"uid": uid, "gid": gid, "pid": pid}
    record["received"] = _now()
    return record


def write(config: Config, records: list[dict[str, Any]]) -> str:
    """Chain and append `records` to the writer's log (keyed, forwarded as `config` says); the
    answer line for the sender."""
    path = audit_log.audit_path(config)
    audit_log.append_events(config, path, records)
    anchor, _ = audit_log.audit_store.read_anchor(path)
    head = (anchor or {}).get("head", "") or "-"
    return f"ok {len(records)} {head}\n"


class _Handler(socketserver.BaseRequestHandler):
    """One connection: read the records to the end, stamp, write, answer."""

    def handle(self) -> None:
        sock = self.request
        sock.settimeout(READ_TIMEOUT)
        try:
            credentials = peer_credentials(sock)
            data = _read_all(sock)
            lines = [line for line in data.split(b"\n") if line.strip()]
            records = [stamp(line, credentials) for line in lines]
            answer = write(self.server.config, records) if records else "ok 0 -\n"  # type: ignore[attr-defined]
        except (OSError, ValueError) as error:
            answer = f"error {str(error)[:200]}\n".replace("\n", " ").rstrip() + "\n"
        try:
            sock.sendall(answer.encode("utf-8"))
        except OSError:
            pass


def _read_all(sock: Any) -> bytes:
    chunks, size = [], 0
    while chunk := sock.recv(65536):
        size += len(chunk)
        if size > MAX_BYTES:
            raise ValueError(f"more than {MAX_BYTES} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


class WriterServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    """The listening socket, open to every local user (0666: the kernel names each sender)."""

    daemon_threads = True

    def __init__(self, socket_path: str, config: Config) -> None:
        self.config = config
        _remove_stale(socket_path)
        folder = os.path.dirname(socket_path)
        if folder and not os.path.isdir(folder):
            os.makedirs(folder, mode=0o755)
            os.chmod(folder, 0o755)  # every user's hook must reach the socket
        super().__init__(socket_path, _Handler)
        os.chmod(socket_path, 0o666)


def _remove_stale(socket_path: str) -> None:
    """Remove a socket left by an earlier run (only a socket: nothing else is deleted)."""
    import stat

    try:
        if stat.S_ISSOCK(os.lstat(socket_path).st_mode):
            os.unlink(socket_path)
    except FileNotFoundError:
        pass


def writer_config(config_file: str | None = None) -> Config:
    """The writer's settings: the managed config (or `config_file`), with the default log path
    when it names none; ValueError when it does not load."""
    from rtk_policy.config import load, paths
    from rtk_policy.config.layers import read_regular_file
    from rtk_policy.util import record

    path = config_file or paths.config_file(paths.managed_dir())
    config = load.merge_layers([("managed", True, path, read_regular_file(path)[0])])
    if config.problems:
        raise ValueError("; ".join(config.problems))
    return config if config.audit_path else record.evolve(config, audit_path=DEFAULT_LOG)


def serve(config: Config, socket_path: str = "", user: str = "") -> None:
    """Serve until stopped (SIGTERM/SIGINT end it); the socket is `socket_path`, else the config's
    `[audit] writer`, else `DEFAULT_SOCKET`.

    With `user` (started as root, as launchd does): the socket's folder and the log's folder are
    made and given to `user`, and the process becomes `user` before it binds and serves.
    """
    import signal

    path = socket_path or config.audit_writer or DEFAULT_SOCKET
    if user:  # before the bind: a socket's peer credentials are those of who listened on it
        become(user, os.path.dirname(path), os.path.dirname(audit_log.audit_path(config)))
    os.umask(0o077)  # the log, its anchor and lock: the writer's user only
    if config.audit_key_file:
        audit_log.load_key(config.audit_key_file)  # now: a writer that cannot read it never starts
    server = WriterServer(path, config)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    sys.stderr.write(f"rtk-policy audit-writer: writing {audit_log.audit_path(config)}, "
                     f"listening on {path}\n")  # fmt: skip
    sys.stderr.flush()
    try:
        server.serve_forever(poll_interval=0.5)
    finally:
        server.server_close()
        _remove_stale(path)


def become(user: str, socket_folder: str, log_folder: str) -> None:
    """Give `socket_folder` (0755) and `log_folder` (0700), made if missing, to `user`, then drop
    root for good: its groups, gid and uid. Raises OSError (KeyError: no such user)."""
    import pwd

    entry = pwd.getpwnam(user)
    os.makedirs(socket_folder, mode=0o755, exist_ok=True)
    os.makedirs(log_folder, mode=0o700, exist_ok=True)
    for folder, mode in ((socket_folder, 0o755), (log_folder, 0o700)):
        os.chown(folder, entry.pw_uid, entry.pw_gid)
        os.chmod(folder, mode)
    os.setgroups([])
    os.setgid(entry.pw_gid)
    os.setuid(entry.pw_uid)
