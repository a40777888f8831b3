"""Where rtk-policy keeps its files: the one module that knows the paths of every layer and of
its state.

- managed layer (root-owned): `/etc/rtk-policy/` (Linux),
  `/Library/Application Support/rtk-policy/` (macOS);
- user layer: `$XDG_CONFIG_HOME/rtk-policy/` (default `~/.config/rtk-policy/`);
- project layers: every `.rtk-policy/` folder at or above the working folder;
- state (trust records, audit log): `$XDG_STATE_HOME/rtk-policy/` (`~/.local/state/rtk-policy/`);
- compiled-policy cache: `$XDG_CACHE_HOME/rtk-policy/` (default `~/.cache/rtk-policy/`).

Each layer folder holds `config.toml` and `policies/*.yaml`. The managed folder is fixed in code: no
environment variable or config key moves it (an agent could set those). Tests point it elsewhere by
setting `MANAGED_DIR` and `MANAGED_OWNER_UID` on this module. Paths are strings (`os.path`):
`pathlib` costs a cold hook ~3.5 ms of imports.
"""

from __future__ import annotations

import os

from rtk_policy.config.managed import managed_folder
from rtk_policy.util import environ

#: The managed (system) layer's folder (`config/managed.py` keeps it per platform). Fixed in
#: code; tests replace it on the module.
MANAGED_DIR = managed_folder()
#: The owner every managed file must have (root); tests replace it on the module.
MANAGED_OWNER_UID = 0
#: The folder name of a project layer.
PROJECT_FOLDER = ".rtk-policy"
CONFIG_NAME = "config.toml"
POLICIES_NAME = "policies"
POLICY_SUFFIXES = (".yaml", ".yml")


def managed_dir() -> str:
    """The managed layer's folder (`MANAGED_DIR`)."""
    return MANAGED_DIR


def user_config_dir() -> str:
    """`$XDG_CONFIG_HOME/rtk-policy` (default `~/.config/rtk-policy`)."""
    return os.path.join(_xdg("XDG_CONFIG_HOME", ".config"), "rtk-policy")


def state_dir() -> str:
    """`$XDG_STATE_HOME/rtk-policy` (default `~/.local/state/rtk-policy`): trust records, audit
    log."""
    return os.path.join(_xdg("XDG_STATE_HOME", os.path.join(".local", "state")), "rtk-policy")


def trust_file() -> str:
    """The user's record of trusted project layers (`state_dir()/trust.json`)."""
    return os.path.join(state_dir(), "trust.json")


def audit_log_file() -> str:
    """The default audit log (`state_dir()/audit.jsonl`); `[audit] path` may choose another."""
    return os.path.join(state_dir(), "audit.jsonl")


def audit_spool_file() -> str:
    """Where the hook keeps the records the audit writer service could not take
    (`state_dir()/audit-spool.jsonl`, a chained log of its own)."""
    return os.path.join(state_dir(), "audit-spool.jsonl")


def cache_dir() -> str:
    """`$XDG_CACHE_HOME/rtk-policy` (default `~/.cache/rtk-policy`): the compiled policies."""
    return os.path.join(_xdg("XDG_CACHE_HOME", ".cache"), "rtk-policy")


def user_config_dirs() -> list[str]:
    """Every folder the user layer can be in: `user_config_dir()` and the default
    `~/.config/rtk-policy` (the hook's environment may set what the shell does not)."""
    return _with_default(user_config_dir(), ".config")


def state_dirs() -> list[str]:
    """Every folder the state can be in: `state_dir()` and the default
    `~/.local/state/rtk-policy`."""
    return _with_default(state_dir(), os.path.join(".local", "state"))


def cache_dirs() -> list[str]:
    """Every folder the compiled cache can be in: `cache_dir()` and the default
    `~/.cache/rtk-policy`."""
    return _with_default(cache_dir(), ".cache")


def _with_default(chosen: str, default: str) -> list[str]:
    fallback = os.path.join(environ.expand_user("~"), default, "rtk-policy")
    return [chosen] if chosen == fallback else [chosen, fallback]


def config_file(layer_dir: str) -> str:
    """The `config.toml` of a layer folder."""
    return os.path.join(layer_dir, CONFIG_NAME)


def policies_dir(layer_dir: str) -> str:
    """The `policies/` folder of a layer folder."""
    return os.path.join(layer_dir, POLICIES_NAME)


def policy_files(folder: str) -> list[str]:
    """The policy files a folder contributes: its *.yaml/*.yml files by name, without the
    *_test.yaml test files ([] when it cannot be listed)."""
    return [p for p in files_ending(folder, POLICY_SUFFIXES) if not _is_test(os.path.basename(p))]


def files_ending(folder: str, suffixes: str | tuple[str, ...]) -> list[str]:
    """The paths of a folder's files whose names end in `suffixes`, sorted by name ([] when the
    folder cannot be listed)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return [os.path.join(folder, n) for n in sorted(n for n in names if n.endswith(suffixes))]


def _is_test(name: str) -> bool:
    return name.rsplit(".", 1)[0].endswith("_test")


def folders_up(cwd: str | os.PathLike[str] | None = None) -> list[str]:
    """`cwd` (default: the working folder) with symlinks resolved, then each of its parents up to
    the root."""
    here = os.path.realpath(cwd or os.getcwd())
    found = [here]
    while (parent := os.path.dirname(here)) != here:
        found.append(parent)
        here = parent
    return found


def project_layer_dirs(cwd: str | None = None) -> list[str]:
    """The `.rtk-policy/` folders at or above `cwd`, outermost first (each is a project layer)."""
    found = []
    for folder in folders_up(cwd):
        layer = os.path.join(folder, PROJECT_FOLDER)
        if os.path.isdir(layer):
            found.append(layer)
    found.reverse()
    return found


def project_dir(cwd: str | None = None) -> str | None:
    """The nearest folder at or above `cwd` holding `.rtk-policy/`, or None."""
    layers = project_layer_dirs(cwd)
    return os.path.dirname(layers[-1]) if layers else None


def _xdg(variable: str, default: str) -> str:
    return environ.get(variable) or os.path.join(environ.expand_user("~"), default)
