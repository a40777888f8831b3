"""What `uninstall --system` takes back of the audit writer that `init --system` set up
(`writer_service.py`), and what it keeps.

Removed: the service file, when it is still the one init wrote (with the `systemctl enable`
link to it), after the service is stopped (on the real `/` only); the managed config, when it
is still the one init wrote; the key, unless a log it keys is still there. Kept, and said why:
the writer's log, its rotated files and anchor (nothing is lost), the key such a log needs for
`audit verify --key`, a service file or config someone changed, and the system user (it owns
the kept log; removing it would leave the log to whoever gets its uid next).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess

from rtk_policy.audit.store import log_files
from rtk_policy.config.managed import managed_folder, platform, writer_log, writer_socket
from rtk_policy.settings import writer_service as service

#: where `systemctl enable` links the unit (relative to `root`)
WANTS = "etc/systemd/system/multi-user.target.wants"


def remove(root: str = "/") -> tuple[list[str], list[str]]:
    """Take back what `init --system` installed for the audit writer under `root`: (what was
    removed, what was kept and why), one line each."""
    removed: list[str] = []
    kept: list[str] = []
    folder = managed_folder(root)
    key = os.path.join(folder, service.KEY_NAME)
    logs = writer_logs(root)
    if root == "/":
        removed += stop_service()
    _remove_service_file(root, removed, kept)
    _remove_config(folder, key, removed, kept)
    if os.path.exists(key) and logs:
        verify = f"sudo rtk-policy audit verify --key {key}"
        kept.append(f"kept the audit key {key}: the kept log is chained with it (`{verify}`);"
                    " delete it once that log needs no checking")  # fmt: skip
    elif os.path.exists(key):
        os.unlink(key)
        removed.append(f"removed the audit key {key}")
    if logs:
        kept.append(f"kept the audit log {', '.join(logs)} and its anchor (nothing is lost)")
    user = service.USER[platform()]
    if _user_exists(user):
        kept.append(f"kept the system user {user} (it owns the audit log; `userdel {user}`"
                    " once the log is archived)")  # fmt: skip
    return removed, kept


def writer_logs(root: str = "/") -> list[str]:
    """The writer's log files that exist: at the managed config's `[audit] path` (or the
    default), also taken under `root` when that is not `/`."""
    path = _configured_log(os.path.join(managed_folder(root), "config.toml")) or writer_log()
    places = [path] if root == "/" else [path, os.path.join(root, path.lstrip("/"))]
    return [name for place in places for name in log_files(place)]


def stop_service() -> list[str]:
    """Stop and disable the running writer (systemd or launchd); what was done."""
    if platform() == "darwin":
        command = ["launchctl", "bootout", "system/dev.rtk-policy.audit-writer"]
    elif os.path.isdir("/run/systemd/system"):  # booted with systemd
        command = ["systemctl", "disable", "--now", "rtk-policy-audit-writer"]
    else:
        return []
    if shutil.which(command[0]) is None:
        return []
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    return [f"ran `{' '.join(command)}`" + ("" if done.returncode == 0 else " (it had not run)")]


def is_ours(text: str) -> bool:
    """Whether `text` is a service file `init --system` wrote (for any Python)."""
    users = "|".join(map(re.escape, service.USER.values()))
    fields = {"{python}": r"[^\n<>]+", "{user}": f"(?:{users})"}
    for template in (service.SYSTEMD_UNIT, service.LAUNCHD_PLIST):
        parts = re.split(r"(\{python\}|\{user\})", template)
        if re.fullmatch("".join(fields.get(part, re.escape(part)) for part in parts), text):
            return True
    return False


def _remove_service_file(root: str, removed: list[str], kept: list[str]) -> None:
    for relative in (service.UNIT, service.PLIST):
        path = os.path.join(root, relative)
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8", errors="replace") as handle:
            ours = is_ours(handle.read())
        if not ours:
            kept.append(f"kept {path}: it was changed since `init --system` wrote it")
            continue
        link = os.path.join(root, WANTS, os.path.basename(relative))
        if os.path.islink(link) and os.readlink(link) in (path, "/" + relative):
            os.unlink(link)
            removed.append(f"removed {link}")
        os.unlink(path)
        removed.append(f"removed {path}")


def _remove_config(folder: str, key: str, removed: list[str], kept: list[str]) -> None:
    config = os.path.join(folder, "config.toml")
    try:
        with open(config, encoding="utf-8") as handle:
            text = handle.read()
    except OSError:
        return
    user = service.USER[platform()]
    ours = service.MANAGED_CONFIG.format(user=user, socket=writer_socket(), log=writer_log(),
                                         key=key)  # fmt: skip
    if text == ours:
        os.unlink(config)
        removed.append(f"removed {config} (it named the audit writer)")
    elif re.search(r"(?m)^\s*writer\s*=", text):
        kept.append(f"kept {config} (yours): remove the `writer`, `path` and `key_file` lines"
                    " of its [audit] table that name the audit writer")  # fmt: skip


def _configured_log(config: str) -> str:
    """The `[audit] path` of the managed config ("" when it has none or does not parse)."""
    import tomllib

    try:
        with open(config, "rb") as handle:
            audit = tomllib.load(handle).get("audit", {})
    except (OSError, ValueError):
        return ""
    path = audit.get("path", "") if isinstance(audit, dict) else ""
    return path if isinstance(path, str) else ""


def _user_exists(name: str) -> bool:
    import pwd

    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True
