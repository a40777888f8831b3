"""Is RTK there? The `rtk` executable on the PATH the agent's commands run with, and its version.

A rewrite to `rtk …` only helps when that command exists: without it every rewritten command fails
with "command not found". `rewrite = "auto"` (the default) therefore rewrites only when `rtk`
resolves on `PATH` (the hook's own PATH: agents run hooks with the environment their commands get)
in a version whose commands the rewrite registry targets.

Cheap on the hook's path: the PATH walk is a few `stat` calls, and `rtk --version` runs only when
the executable is new or changed. Its answer is kept as data (JSON) in the cache folder, keyed by
the resolved path and its inode, size and modification time, so the next hook call reads one small
file instead of starting a process.
"""

from __future__ import annotations

import os
import stat

from rtk_policy.util import environ, record
from rtk_policy.util.json_file import read_json, write_json

#: The oldest RTK whose commands the registry targets (`rtk rewrite`, `rtk read`, the native hooks).
MIN_VERSION = (0, 23, 0)
PROBE_FILE = "rtk-probe.json"
_PROBE_TIMEOUT = 3.0


@record.frozen
class RtkStatus:
    """What was found: `path` ("" when none), `version` ("" when unknown) and whether it is
    usable."""

    path: str = ""
    version: str = ""
    usable: bool = False
    why: str = ""  #: a sentence for `doctor` and the audit log


def find_rtk(path_env: str | None = None) -> tuple[str, os.stat_result] | None:
    """The first executable regular file named `rtk` on `path_env` (default `$PATH`), with its
    stat."""
    search = (environ.get("PATH") or "") if path_env is None else path_env
    for folder in search.split(os.pathsep):
        candidate = os.path.join(folder or ".", "rtk")
        try:
            info = os.stat(candidate)
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode) and os.access(candidate, os.X_OK):
            return candidate, info
    return None


def rtk_status(path_env: str | None = None, store: bool = True) -> RtkStatus:
    """RTK's presence and version on `path_env` (default `$PATH`), probed at most once per
    binary (the probe is remembered in the cache unless `store` is False: `doctor` changes
    nothing)."""
    found = find_rtk(path_env)
    if found is None:
        return RtkStatus(why="no `rtk` executable on PATH")
    path, info = found
    key = [path, info.st_ino, info.st_size, info.st_mtime_ns]
    version = _cached_version(key)
    if version is None:
        version = _probe_version(path)
        if store and parse_version(version) is not None:  # a failed probe is tried again
            _store_version(key, version)
    parsed = parse_version(version)
    if parsed is None:
        return RtkStatus(path, version, False, f"{path}: `rtk --version` gave no version")
    shown = ".".join(map(str, parsed))
    if parsed < MIN_VERSION:
        oldest = ".".join(map(str, MIN_VERSION))
        return RtkStatus(path, version, False, f"{path} is RTK {shown}, older than {oldest}")
    return RtkStatus(path, version, True, f"{path} is RTK {shown}")


def parse_version(text: str) -> tuple[int, int, int] | None:
    """(major, minor, patch) of the first `N.N.N` word of `text` (`rtk 0.31.2` → (0, 31, 2))."""
    for word in text.split():
        parts = word.lstrip("v").split("-")[0].split(".")
        if len(parts) >= 3 and all(p.isdigit() for p in parts[:3]):
            return int(parts[0]), int(parts[1]), int(parts[2])
    return None


def _probe_file() -> str:
    from rtk_policy.policy.cache import cache_dir

    return os.path.join(cache_dir(), PROBE_FILE)


def _cached_version(key: list[object]) -> str | None:
    data = read_json(_probe_file())
    if not isinstance(data, dict) or data.get("key") != key:
        return None
    version = data.get("version")
    return version if isinstance(version, str) else None


def _probe_version(path: str) -> str:
    """The first line `path --version` prints ("" when it fails or says nothing)."""
    import subprocess

    try:
        done = subprocess.run(
            [path, "--version"],
            capture_output=True,
            timeout=_PROBE_TIMEOUT,
            stdin=subprocess.DEVNULL,
            check=False,
            env=environ.subprocess_env(),
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    lines = done.stdout.decode("utf-8", "replace").strip().splitlines()
    return lines[0].strip()[:200] if done.returncode == 0 and lines else ""


def _store_version(key: list[object], version: str) -> None:
    """Keep the probe's answer (data only: JSON); a cache folder that cannot be written is
    skipped."""
    write_json(_probe_file(), {"key": key, "version": version})


def rewriting_on(mode: str, path_env: str | None = None) -> tuple[bool, str]:
    """Whether rewrites may reach the host under `rewrite = mode`, and why not ("" when they
    may)."""
    if mode == "never":
        return False, "rewrite-off"
    if mode == "always":
        return True, ""
    return (True, "") if rtk_status(path_env).usable else (False, "rtk-absent")
