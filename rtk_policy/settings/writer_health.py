"""`doctor`'s findings about the audit writer of a machine-wide install (`init --system`): does
the writer the managed config names answer on its socket, as a user other than this one, and can
nobody but the writer's user read its key?

Read-only, like all of doctor: the writer is asked with an empty hand-over (no record: it
answers `ok 0 -` and writes nothing), and the key is only stat'ed and checked for access, never
read.
"""

from __future__ import annotations

import os
import stat

from rtk_policy.settings.health import Finding


def writer_findings(config_file: str | None = None) -> list[Finding]:
    """The findings about the audit writer the managed config (or `config_file`) names; none
    when it names no writer (a user-level install)."""
    from rtk_policy.audit.writer import writer_config
    from rtk_policy.config import paths

    path = config_file or paths.config_file(paths.managed_dir())
    if not os.path.isfile(path):
        return []
    try:
        config = writer_config(path)
    except (OSError, ValueError) as error:
        return [Finding(False, f"the managed config {path} does not load: {error}",
                        "run `rtk-policy check`")]  # fmt: skip
    if not config.audit_writer:
        return []
    reachable, writer_uid = reachable_finding(config.audit_writer)
    return [reachable, key_finding(config.audit_key_file, writer_uid)]


def reachable_finding(socket: str) -> tuple[Finding, int | None]:
    """Whether the writer answers at `socket` as a trusted writer of another user (the hook's
    own check, `audit.writer_client`), and the uid it runs as (None when unknown)."""
    from rtk_policy.audit import writer_client
    from rtk_policy.settings.writer_service import start_command

    problem = writer_client.hand_over(socket, [])  # no record: nothing is written
    try:
        uid: int | None = os.stat(os.path.dirname(socket)).st_uid
    except OSError:
        uid = None
    if not problem:
        text = f"the audit writer answers at {socket} and runs as another user (uid {uid})"
        return Finding(True, text), uid
    return Finding(
        False,
        f"the audit writer at {socket} cannot be used: {problem}",
        f"start it (`{start_command()}`) or run `sudo rtk-policy init --system` again; until"
        " then each hook keeps its records in its user's audit-spool.jsonl, unkeyed",
    ), uid


def key_finding(key: str, writer_uid: int | None) -> Finding:
    """Whether the writer's key `key` exists and nobody but the writer's user (`writer_uid`,
    when known) can read it: this user, its group or others (0600, owned by the writer)."""
    again = "run `sudo rtk-policy init --system` again"
    fix = f"`sudo chown` {key} to the writer's user and `chmod 600` it"
    if not key:
        text = "the managed config names an audit writer but no [audit] key_file: no keyed chain"
        return Finding(False, text, again)
    try:
        info = os.stat(key)
    except PermissionError:
        return Finding(True, f"the audit key {key} cannot be read by this user")
    except OSError as error:
        text = f"the audit key {key} is missing ({error.strerror})"
        return Finding(False, text, again + " (it makes a new key)")
    problems = []
    if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        problems.append(f"its mode is {stat.filemode(info.st_mode)}")
    if writer_uid is not None and info.st_uid != writer_uid:
        problems.append(f"it belongs to uid {info.st_uid}, not the writer's (uid {writer_uid})")
    if os.geteuid() != 0 and os.access(key, os.R_OK):
        problems.append(f"this user (uid {os.geteuid()}) can read it")
    if problems:
        text = f"the audit key {key} is not the writer's alone: " + "; ".join(problems)
        return Finding(False, text + " (whoever reads it can re-key a forged log)", fix)
    return Finding(True, f"the audit key {key} can be read by the writer's user only")
