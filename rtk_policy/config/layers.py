"""The layers of settings and policies, each read once, with the trust it has (DESIGN §13).

Highest authority first: **managed** (`paths.managed_dir()`, root-owned), **user**
(`paths.user_config_dir()`), then each **project** layer (every `.rtk-policy/` folder at or above
the working folder, outermost first). Managed and user layers are trusted: they may loosen (disable
rules, allow, rewrite, choose the fail mode, backend, audit settings, exclusions, transparent
prefixes). A project layer only tightens (deny and ask rules, warn and audit-mode rules) until the
user trusts it by digest (`rtk-policy trust`, `trust.py`); a nested `.rtk-policy/` is a layer of its
own, so it adds to the project's and never replaces it. A managed folder that its user could write
(not owned by `paths.MANAGED_OWNER_UID`, or group/world-writable) only tightens too.

Each file is read once, here, and the same bytes are digested, parsed and compiled, so a file
swapped between the trust check and the load cannot slip in. Only regular files are read (a FIFO
or a device planted as `config.toml` must not hang or flood the hook), up to `FILE_LIMIT` bytes.
"""

from __future__ import annotations

import os
import stat

from rtk_policy.config import paths
from rtk_policy.util import record

#: the largest layer file read (the shipped packs are ~100 KB)
FILE_LIMIT = 4 * 1024 * 1024
MANAGED, USER, PROJECT = "managed", "user", "project"
#: `Layer.status` of a project layer: trusted, never trusted, or changed since it was trusted
TRUSTED, UNTRUSTED, CHANGED, UNSAFE = "trusted", "untrusted", "changed", "unsafe"


@record.frozen
class Layer:
    """One layer folder as read: its files' bytes and whether it may loosen."""

    kind: str  #: MANAGED | USER | PROJECT
    folder: str  #: the layer folder (`…/rtk-policy` or `…/.rtk-policy`)
    #: `config.toml` as (path, bytes) when present; bytes None when it could not be read
    config: tuple[str, bytes | None] | None
    policies: tuple[tuple[str, bytes], ...]  #: its policy files (path, bytes), by name
    problems: tuple[str, ...] = ()  #: files that exist but could not be read
    status: str = TRUSTED  #: TRUSTED, or (project/managed) UNTRUSTED, CHANGED, UNSAFE

    @property
    def trusted(self) -> bool:
        """True when the layer may loosen."""
        return self.status == TRUSTED

    @property
    def project(self) -> str:
        """The folder that holds the layer folder (the project's folder for a project layer)."""
        return os.path.dirname(self.folder)


def find_layers(cwd: str | None = None, trust_records: dict | None = None) -> tuple[Layer, ...]:
    """Every layer that exists for `cwd`, highest authority first, read and judged.

    `trust_records` (default: the user's, `trust.read_records()`) decide the project layers'
    trust."""
    found = []
    managed = paths.managed_dir()
    if os.path.isdir(managed):
        found.append(read_layer(MANAGED, managed, owner=paths.MANAGED_OWNER_UID))
    user = paths.user_config_dir()
    if os.path.isdir(user):
        found.append(read_layer(USER, user))
    projects = paths.project_layer_dirs(cwd)
    if projects:
        from rtk_policy.config import trust

        records = trust.read_records() if trust_records is None else trust_records
        for folder in projects:
            layer = read_layer(PROJECT, folder)
            found.append(record.evolve(layer, status=trust.status_of(layer, records)))
    return tuple(found)


def read_layer(kind: str, folder: str, owner: int | None = None) -> Layer:
    """The layer in `folder`, its files read; with `owner`, every file (and the folders) must be
    owned by that uid and not writable by group or others, else the layer is UNSAFE."""
    problems: list[str] = []
    unsafe = owner is not None and not _owned_safely(folder, owner)
    config = None
    config_path = paths.config_file(folder)
    if os.path.lexists(config_path):
        data, owned = _read(config_path, problems, owner)
        unsafe |= not owned
        config = (config_path, data)
    policies_folder = paths.policies_dir(folder)
    if owner is not None and os.path.isdir(policies_folder):
        unsafe |= not _owned_safely(policies_folder, owner)
    policies = []
    for path in paths.policy_files(policies_folder):
        data, owned = _read(path, problems, owner)
        unsafe |= not owned
        if data is not None:
            policies.append((path, data))
    status = UNSAFE if unsafe else TRUSTED
    return Layer(kind, folder, config, tuple(policies), tuple(problems), status)


def read_regular_file(path: str, limit: int | None = None) -> tuple[bytes, os.stat_result]:
    """The bytes of `path` and its stat, raising `OSError` when it is not a regular file or is
    larger than `limit` (default `FILE_LIMIT`; opened without blocking: a FIFO never hangs the
    caller)."""
    limit = FILE_LIMIT if limit is None else limit
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(0, "not a regular file")
        if info.st_size > limit:
            raise OSError(0, f"larger than {limit} bytes")
        chunks, size = [], 0
        while chunk := os.read(fd, limit + 1 - size):
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise OSError(0, f"larger than {limit} bytes")
        return b"".join(chunks), info
    finally:
        os.close(fd)


def _read(path: str, problems: list[str], owner: int | None) -> tuple[bytes | None, bool]:
    """(bytes or None, owned safely) of one layer file; a read failure is added to `problems`."""
    try:
        data, info = read_regular_file(path)
    except OSError as error:
        problems.append(f"{path}: cannot read: {error.strerror or error}")
        return None, True
    return data, owner is None or _safe_owner(info, owner)


def _owned_safely(path: str, owner: int) -> bool:
    try:
        return _safe_owner(os.stat(path), owner)
    except OSError:
        return False


def _safe_owner(info: os.stat_result, owner: int) -> bool:
    return info.st_uid == owner and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
