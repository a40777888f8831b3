"""The config file, `config.toml`, layered: user (`$XDG_CONFIG_HOME/rtk-policy/`), then project
(`.rtk-policy/` in the current folder or a parent). Later layers override scalar keys and extend lists.

```toml
exclude_commands = ["curl", "^git push"]
transparent_prefixes = ["direnv exec ."]
fail_mode = "open"           # open | closed | deny
backend = "cel-expr"         # cel-expr | cel-python
disabled_rules = ["git-push-force"]
rewrite = "auto"             # auto (when rtk is on PATH) | always | never     (trusted layers only)
rewrite_unapproved = false   # true: may let a command-line deny rule be bypassed (trusted only)
[audit]
enabled = true
path = "~/.local/state/rtk-policy/audit.jsonl"
redact = ["(?i)token=\\S+"]
key_file = "/etc/rtk-policy/audit.key"   # the chain's hashes are HMAC-SHA256 with this key
[audit.syslog]
target = "unix:/dev/log"     # or "udp://127.0.0.1:514", "tcp://127.0.0.1:601" (IP literals)
facility = "user"            # a syslog facility name: user, auth, authpriv, local0 … local7
```
"""

from __future__ import annotations

import os

from rtk_policy.util import record

FAIL_MODES = ("open", "closed", "deny")
BACKENDS = ("cel-expr", "cel-python")
REWRITE_MODES = ("auto", "always", "never")
#: keys only the user's own config may set: a project layer's value is ignored (they loosen)
_TRUSTED_ONLY = ("rewrite", "rewrite_unapproved")
_LIST_KEYS = ("exclude_commands", "transparent_prefixes", "disabled_rules")
_AUDIT_KEYS = ("enabled", "path", "redact", "max_bytes", "key_file", "syslog")
_SYSLOG_KEYS = ("target", "facility")
#: Keys (dotted, as in the file) only the trusted layers (managed, user) may set: every audit key,
#: since a project that could set them could switch the log off, move it, rotate it away, redact
#: it blank, drop its key or its syslog copy.
TRUSTED_ONLY_KEYS = frozenset(
    {
        "audit",
        *(f"audit.{key}" for key in _AUDIT_KEYS),
        *(f"audit.syslog.{key}" for key in _SYSLOG_KEYS),
    }
)


class ConfigError(Exception):
    """A config file that cannot be read or holds a bad value."""


@record.frozen
class Config:
    """The merged settings of every config layer."""

    exclude_commands: tuple[str, ...] = ()
    transparent_prefixes: tuple[str, ...] = ()
    disabled_rules: tuple[str, ...] = ()
    fail_mode: str = "open"
    backend: str = ""  #: "" = primary backend, falling back to the second one
    audit_enabled: bool = True
    audit_path: str = ""  #: "" = the default under $XDG_STATE_HOME
    audit_redact: tuple[str, ...] = ()
    audit_max_bytes: int = 10 * 1024 * 1024
    audit_key_file: str = ""  #: "" = a plain sha256 chain; else its HMAC-SHA256 key
    audit_syslog: str = ""  #: "" = no forwarding; else the syslog target (`audit/forward.py`)
    audit_syslog_facility: str = "user"
    rewrite: str = "auto"  #: auto: only when an `rtk` executable is on the agent's PATH
    #: rewrite commands no rule approved, and where command-line rules cannot be read
    rewrite_unapproved: bool = False
    sources: tuple[str, ...] = ()  #: the files read, in order


def user_config_dir() -> str:
    """`$XDG_CONFIG_HOME/rtk-policy` (default `~/.config/rtk-policy`)."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "rtk-policy")


def folders_up(cwd: str | os.PathLike[str] | None = None) -> list[str]:
    """`cwd` (default: the working folder) with symlinks resolved, then each of its parents up to
    the root. Paths are strings: `pathlib` costs a cold hook ~3.5 ms of imports (urllib, ipaddress)."""
    here = os.path.realpath(cwd or os.getcwd())
    found = [here]
    while (parent := os.path.dirname(here)) != here:
        found.append(parent)
        here = parent
    return found


def project_dir(cwd: str | None = None) -> str | None:
    """The nearest folder at or above `cwd` holding `.rtk-policy/`, or None."""
    for folder in folders_up(cwd):
        if os.path.isdir(os.path.join(folder, ".rtk-policy")):
            return folder
    return None


def config_files(cwd: str | None = None) -> list[str]:
    """The config files that exist, lowest precedence first."""
    candidates = [os.path.join(user_config_dir(), "config.toml")]
    project = project_dir(cwd)
    if project is not None:
        candidates.append(os.path.join(project, ".rtk-policy", "config.toml"))
    return [path for path in candidates if os.path.isfile(path)]


def load_config(config_path: str | None = None, cwd: str | None = None) -> Config:
    """Read and merge the config layers (or only `config_path`); raise `ConfigError` on bad input."""
    paths = [str(config_path)] if config_path else config_files(cwd)
    merged: dict[str, object] = {}
    user_file = os.path.join(user_config_dir(), "config.toml")
    for path in paths:
        layer = _read_toml(path)
        if not config_path and path != user_file:
            layer = {k: v for k, v in layer.items() if k not in _TRUSTED_ONLY}
        _merge(merged, layer)
    return _to_config(merged, tuple(str(p) for p in paths))


def config_from_mapping(data: dict[str, object], base: Config | None = None) -> Config:
    """A `Config` with the keys of `data` overriding `base` (used for per-line `--batch` overrides)."""
    merged = record.asdict(base or Config())
    merged.pop("sources", None)
    audit = {
        "enabled": merged.pop("audit_enabled"),
        "path": merged.pop("audit_path"),
        "redact": merged.pop("audit_redact"),
        "max_bytes": merged.pop("audit_max_bytes"),
        "key_file": merged.pop("audit_key_file"),
        "syslog": {
            "target": merged.pop("audit_syslog"),
            "facility": merged.pop("audit_syslog_facility"),
        },
    }
    merged["audit"] = audit
    for key, value in data.items():
        merged[key] = value
    return _to_config(merged, base.sources if base else ())


def _read_toml(path: str) -> dict[str, object]:
    import tomllib

    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror}") from error
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: {error}") from error


def _merge(into: dict[str, object], layer: dict[str, object]) -> None:
    for key, value in layer.items():
        if key in _LIST_KEYS and isinstance(value, list) and isinstance(into.get(key), list):
            into[key] = [*into[key], *value]  # type: ignore[misc]
        elif isinstance(value, dict) and isinstance(into.get(key), dict):
            into[key] = {**into[key], **value}  # type: ignore[dict-item]
        else:
            into[key] = value


def _string_list(data: dict[str, object], key: str) -> tuple[str, ...]:
    value = data.get(key, [])
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"config: {key} must be a list of strings")
    return tuple(value)


def _choice(data: dict[str, object], key: str, choices: tuple[str, ...], default: str) -> str:
    value = data.get(key, default)
    if value != default and value not in choices:
        raise ConfigError(f"config: {key} must be one of {', '.join(choices)}, not {value!r}")
    return str(value)


def _flag(data: dict[str, object], key: str) -> bool:
    value = data.get(key, False)
    if not isinstance(value, bool):
        raise ConfigError(f"config: {key} must be true or false")
    return value


def _to_config(data: dict[str, object], sources: tuple[str, ...]) -> Config:
    known = {*_LIST_KEYS, *_TRUSTED_ONLY, "fail_mode", "backend", "audit"}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f"config: unknown key {unknown[0]!r}")
    audit = data.get("audit", {})
    if not isinstance(audit, dict):
        raise ConfigError("config: [audit] must be a table")
    _known_keys(audit, _AUDIT_KEYS, "audit")
    target, facility = _syslog(audit.get("syslog", {}))
    return Config(
        exclude_commands=_string_list(data, "exclude_commands"),
        transparent_prefixes=_string_list(data, "transparent_prefixes"),
        disabled_rules=_string_list(data, "disabled_rules"),
        fail_mode=_choice(data, "fail_mode", FAIL_MODES, "open"),
        backend=_choice(data, "backend", BACKENDS, ""),
        rewrite=_choice(data, "rewrite", REWRITE_MODES, "auto"),
        rewrite_unapproved=_flag(data, "rewrite_unapproved"),
        audit_enabled=bool(audit.get("enabled", True)),
        audit_path=str(audit.get("path", "")),
        audit_redact=_string_list(audit, "redact"),
        audit_max_bytes=int(audit.get("max_bytes", 10 * 1024 * 1024)),
        audit_key_file=str(audit.get("key_file", "")),
        audit_syslog=target,
        audit_syslog_facility=facility,
        sources=sources,
    )


def _known_keys(table: dict[str, object], known: tuple[str, ...], name: str) -> None:
    unknown = sorted(set(table) - set(known))
    if unknown:
        raise ConfigError(f"config: unknown key {unknown[0]!r} in [{name}]")


def _syslog(table: object) -> tuple[str, str]:
    """(target, facility) of `[audit.syslog]`, checked (`audit/forward.py` says what is valid)."""
    if not isinstance(table, dict):
        raise ConfigError("config: [audit.syslog] must be a table")
    _known_keys(table, _SYSLOG_KEYS, "audit.syslog")
    target, facility = table.get("target", ""), table.get("facility", "user")
    if not isinstance(target, str) or not isinstance(facility, str):
        raise ConfigError("config: audit.syslog target and facility must be strings")
    if target or facility != "user":
        from rtk_policy.audit import forward

        try:
            forward.facility_code(facility)
            if target:
                forward.parse_target(target)
        except ValueError as error:
            raise ConfigError(f"config: {error}") from None
    return target, facility
