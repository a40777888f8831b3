"""Where the managed (machine-wide) layer lives, and whether a path is out of the users' reach.

Light on purpose (the hook imports it for `hook --system`): no attrs, no pathlib. `root` is where
`/` is taken to be: "/" for real, a temporary folder in tests.
"""

from __future__ import annotations

import os
import stat
import sys

#: the managed layer's folder and the root-owned compiled cache, per platform (relative to `root`)
MANAGED = {"linux": "etc/rtk-policy", "darwin": "Library/Application Support/rtk-policy"}
CACHE = {"linux": "var/cache/rtk-policy", "darwin": "Library/Caches/rtk-policy"}
#: the audit writer service's runtime folder (its socket is in `audit/` there), its log folder and
#: its service file, per platform (relative to `root`; `settings/writer_service.py`)
WRITER_RUN = {"linux": "run/rtk-policy", "darwin": "var/run/rtk-policy"}
WRITER_LOGS = {"linux": "var/log/rtk-policy", "darwin": "var/log/rtk-policy"}
WRITER_SERVICE = {
    "linux": "etc/systemd/system/rtk-policy-audit-writer.service",
    "darwin": "Library/LaunchDaemons/dev.rtk-policy.audit-writer.plist",
}


def platform() -> str:
    """ "darwin" on macOS, "linux" for every other Unix."""
    return "darwin" if sys.platform == "darwin" else "linux"


def managed_folder(root: str = "/") -> str:
    """The managed layer's folder (`/etc/rtk-policy`, macOS `/Library/Application Support/…`)."""
    return os.path.join(root, MANAGED[platform()])


def system_cache(root: str = "/") -> str:
    """The root-owned folder of the compiled policies a system hook reads."""
    return os.path.join(root, CACHE[platform()])


def writer_socket(root: str = "/") -> str:
    """Where the audit writer service listens on this platform."""
    return os.path.join(root, WRITER_RUN[platform()], "audit", "writer.sock")


def writer_log(root: str = "/") -> str:
    """The log the audit writer service keeps when the managed config names none."""
    return os.path.join(root, WRITER_LOGS[platform()], "audit.jsonl")


def owner_problems(path: str) -> list[str]:
    """Why `path` or a folder above it could be changed by someone other than root: each must be
    owned by root and not writable by its group or others ([] when none could). A folder above
    that others may write but that has the sticky bit (`/tmp`) is fine: there only the owner of
    an entry may rename or remove it, and the entry below it was checked to be root's."""
    problems = []
    here = os.path.realpath(path)
    below_is_roots = False
    while True:
        try:
            info = os.lstat(here)
        except OSError as error:
            problems.append(f"{here}: {error.strerror}")
            below_is_roots = False
        else:
            writable = info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
            sticky_guards_below = below_is_roots and info.st_mode & stat.S_ISVTX
            if info.st_uid != 0:
                problems.append(f"{here} is owned by uid {info.st_uid}, not root")
            elif writable and not sticky_guards_below:
                problems.append(f"{here} is writable by its group or by others")
            below_is_roots = info.st_uid == 0
        parent = os.path.dirname(here)
        if parent == here:
            return problems
        here = parent


def system_layer(root: str = "/") -> tuple[list[str], str | None, str | None]:
    """What a system hook loads: the managed policy folder (when it exists), the managed
    `config.toml` (None when absent) and the system cache (None unless out of the users' reach)."""
    folder = managed_folder(root)
    policies = os.path.join(folder, "policies")
    config = os.path.join(folder, "config.toml")
    cache = system_cache(root)
    usable_cache = cache if os.path.isdir(cache) and not owner_problems(cache) else None
    return (
        [policies] if os.path.isdir(policies) else [],
        config if os.path.isfile(config) else None,
        usable_cache,
    )
