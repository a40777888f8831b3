"""The audit writer service as `init --system` sets it up (`audit/writer.py`): its system user, its
key, its systemd unit and launchd plist, and the managed config that points the hooks at it.

Nothing here starts a service: `init --system` writes the files and says which command starts it
(`systemctl enable --now …`, `launchctl bootstrap system …`). `root` is where `/` is taken to be:
"/" for real, a temporary folder in tests (no user is created there).
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess

from rtk_policy.config.managed import (
    WRITER_SERVICE,
    managed_folder,
    platform,
    writer_log,
    writer_socket,
)

#: the writer's system user (macOS: the leading underscore of system accounts)
USER = {"linux": "rtk-policy-audit", "darwin": "_rtkpolicyaudit"}
UNIT, PLIST = WRITER_SERVICE["linux"], WRITER_SERVICE["darwin"]
KEY_NAME = "audit.key"

SYSTEMD_UNIT = """\
# Written by `rtk-policy init --system`: the audit writer, as its own user (issue 15, point 6).
[Unit]
Description=rtk-policy audit writer (the hooks' audit log, out of the agents' reach)

[Service]
User={user}
Group={user}
ExecStart={python} -I -m rtk_policy audit-writer
# /run/rtk-policy stays root's; /run/rtk-policy/audit is the writer's (the hooks check both)
RuntimeDirectory=rtk-policy/audit
RuntimeDirectoryMode=0755
RuntimeDirectoryPreserve=no
LogsDirectory=rtk-policy
LogsDirectoryMode=0700
UMask=0077
Restart=always
NoNewPrivileges=yes
ProtectSystem=strict
ProtectHome=yes
PrivateTmp=yes

[Install]
WantedBy=multi-user.target
"""

LAUNCHD_PLIST = """\
<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
  <key>Label</key><string>dev.rtk-policy.audit-writer</string>
  <key>ProgramArguments</key>
  <array>
    <string>{python}</string><string>-I</string><string>-m</string><string>rtk_policy</string>
    <string>audit-writer</string><string>--user</string><string>{user}</string>
  </array>
  <key>RunAtLoad</key><true/>
  <key>KeepAlive</key><true/>
  <key>Umask</key><integer>63</integer>
</dict>
</plist>
"""

MANAGED_CONFIG = """\
# Written by `rtk-policy init --system`: the hooks hand their audit records to the audit writer
# (`rtk-policy audit-writer`, user {user}), which keys and keeps the log out of the agents' reach.
[audit]
writer = "{socket}"
path = "{log}"
key_file = "{key}"
"""


def service_files(python: str) -> dict[str, str]:
    """{path relative to `/`: text} of this platform's service definition."""
    user = USER[platform()]
    if platform() == "darwin":
        return {PLIST: LAUNCHD_PLIST.format(python=python, user=user)}
    return {UNIT: SYSTEMD_UNIT.format(python=python, user=user)}


def start_command() -> str:
    """The command that starts the writer now and at every boot."""
    if platform() == "darwin":
        return f"launchctl bootstrap system /{PLIST}"
    return "systemctl daemon-reload && systemctl enable --now rtk-policy-audit-writer"


def ensure_user(root: str = "/") -> tuple[int, int] | None:
    """(uid, gid) of the writer's user, made on Linux with `useradd --system` when it is missing
    (only for the real `/`); None when there is none (macOS, tests: the caller says so)."""
    import pwd

    name = USER[platform()]
    try:
        entry = pwd.getpwnam(name)
        return entry.pw_uid, entry.pw_gid
    except KeyError:
        pass
    useradd = shutil.which("useradd")
    if root != "/" or platform() == "darwin" or useradd is None:
        return None
    shell = "/usr/sbin/nologin" if os.path.exists("/usr/sbin/nologin") else "/bin/false"
    command = [useradd, "--system", "--no-create-home", "--shell", shell, "--user-group", name]
    subprocess.run(command, check=True, capture_output=True)
    entry = pwd.getpwnam(name)
    return entry.pw_uid, entry.pw_gid


def install(python: str, root: str = "/") -> list[str]:
    """Write the writer's key (new, 32 random bytes, 0600, its user's), its service file and, when
    the managed folder has no config.toml yet, the managed config naming it; what was done, one
    line each (also what the admin must still do)."""
    done = []
    folder = managed_folder(root)
    owner = ensure_user(root)
    key = os.path.join(folder, KEY_NAME)
    if not os.path.exists(key):
        fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(secrets.token_bytes(32))
        done.append(f"created the audit key {key}")
    if owner is not None:
        os.chown(key, *owner)
    else:
        done.append(f"create the user {USER[platform()]} and `chown` {key} to it (0600)")
    os.chmod(key, 0o600)
    for relative, text in service_files(python).items():
        path = os.path.join(root, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(path, 0o644)
        done.append(f"wrote {path}")
    done.append(_managed_config(folder, key))
    done.append(f"start the audit writer: {start_command()}")
    return done


def _managed_config(folder: str, key: str) -> str:
    """Write the managed config naming the writer when there is none; say what was done."""
    config = os.path.join(folder, "config.toml")
    text = MANAGED_CONFIG.format(user=USER[platform()], socket=writer_socket(), log=writer_log(),
                                 key=key)  # fmt: skip
    if os.path.exists(config):
        return f"{config} exists: add to its [audit] table:\n" + text.split("[audit]\n", 1)[1]
    with open(config, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.chmod(config, 0o644)
    return f"wrote {config} (the hooks use the audit writer)"
