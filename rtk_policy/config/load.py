"""`config.toml`, layered (`layers.py`): the settings of the trusted layers, merged with a
direction.

```toml
exclude_commands = ["curl", "^git push"]
transparent_prefixes = ["direnv exec ."]
fail_mode = "open"           # open | closed | deny
backend = "cel-expr"         # cel-expr | cel-python
disabled_rules = ["git-push-force"]
enabled_packs = ["services"]  # opt-in shipped packs (policies/services.yaml)
locked_rules = ["claude-deny"]   # managed config only: no config may disable these
rewrite = "auto"             # auto (when rtk is on PATH) | always | never
rewrite_unapproved = false   # true: may let a command-line deny rule be bypassed
[audit]
enabled = true
path = "~/.local/state/rtk-policy/audit.jsonl"
redact = ["(?i)token=\\S+"]
key_file = "/etc/rtk-policy/audit.key"   # the chain's hashes are HMAC-SHA256 with this key
writer = "/run/rtk-policy/audit/writer.sock"  # managed config only: the audit writer service
[audit.syslog]
target = "unix:/dev/log"     # or "udp://127.0.0.1:514", "tcp://127.0.0.1:601" (IP literals)
facility = "user"            # a syslog facility name: user, auth, authpriv, local0 … local7
```

Every key loosens something, so only trusted layers (managed, user, a trusted project) are read; an
untrusted project's config is ignored, with a notice. Lists are joined; any other key of a layer
overrides the one below it (user, then trusted projects outer to inner, then managed: the managed
config has the last word), except `fail_mode`, which is the strictest any trusted layer sets
(open < closed < deny). A file that does not load (bad TOML, an unknown key, a bad value) is left
out alone, reported in `Config.problems` (every answer is then at least ask); when it belongs to a
trusted layer the fail mode is at least `closed`, since the mode it held is unknown.
"""

from __future__ import annotations

from rtk_policy.config.layers import MANAGED, PROJECT, Layer, find_layers
from rtk_policy.util import environ, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeVar

    _T = TypeVar("_T")

FAIL_MODES = ("open", "closed", "deny")  #: weakest first
BACKENDS = ("cel-expr", "cel-python")
_LIST_KEYS = (
    "exclude_commands", "transparent_prefixes", "disabled_rules", "locked_rules", "enabled_packs"
)
REWRITE_MODES = ("auto", "always", "never")
_KNOWN_KEYS = {*_LIST_KEYS, "fail_mode", "backend", "audit", "rewrite", "rewrite_unapproved"}
_AUDIT_KEYS = ("enabled", "path", "redact", "max_bytes", "key_file", "syslog", "writer")
_SYSLOG_KEYS = ("target", "facility")
#: Keys (dotted, as in the file) only the trusted layers may set. Every key is (an untrusted
#: project's config is ignored whole); the audit keys are named here because a project that could
#: set them could switch the log off, move it, rotate it away, redact it blank, drop its key or its
#: syslog copy.
TRUSTED_ONLY_KEYS = frozenset(
    {
        *_KNOWN_KEYS,
        *(f"audit.{key}" for key in _AUDIT_KEYS),
        *(f"audit.syslog.{key}" for key in _SYSLOG_KEYS),
    }
)
_MANAGED_ONLY = ("locked_rules",)
#: the fail mode a trusted config file that does not load stands for (it may have held a
#: stricter one)
BROKEN_FAIL_MODE = "closed"
_AUTHORITY = {"user": 0, PROJECT: 1, MANAGED: 2}  #: layers are applied lowest authority first


class ConfigError(Exception):
    """A config file that cannot be read or holds a bad value."""


@record.frozen
class Config:
    """The merged settings of every trusted config layer."""

    exclude_commands: tuple[str, ...] = ()
    transparent_prefixes: tuple[str, ...] = ()
    disabled_rules: tuple[str, ...] = ()
    enabled_packs: tuple[str, ...] = ()  #: opt-in packs switched on (`config.enabled_packs`)
    fail_mode: str = "open"
    backend: str = ""  #: "" = primary backend, falling back to the second one
    audit_enabled: bool = True
    audit_path: str = ""  #: "" = the default under $XDG_STATE_HOME
    audit_redact: tuple[str, ...] = ()
    audit_max_bytes: int = 10 * 1024 * 1024
    audit_key_file: str = ""  #: "" = a plain sha256 chain; else its HMAC-SHA256 key
    audit_syslog: str = ""  #: "" = no forwarding; else the syslog target (`audit/forward.py`)
    audit_syslog_facility: str = "user"
    #: "" = the hook writes the log; else the socket of the audit writer service (`audit/writer.py`)
    audit_writer: str = ""
    rewrite: str = "auto"  #: auto: only when an `rtk` executable is on the agent's PATH
    #: rewrite commands no rule approved, and where command-line rules cannot be read
    rewrite_unapproved: bool = False
    sources: tuple[str, ...] = ()  #: the files applied, in order
    locked_rules: tuple[str, ...] = ()  #: rule ids the managed config locks
    problems: tuple[str, ...] = ()  #: config files left out because they did not load
    notices: tuple[str, ...] = ()  #: settings ignored, for the user
    #: (file, its keys) of each untrusted layer's config, ignored (`engine/layered.py` tells them)
    ignored: tuple[tuple[str, tuple[str, ...]], ...] = ()


def load_config(
    config_path: str | None = None, cwd: str | None = None, layers: tuple[Layer, ...] | None = None
) -> Config:
    """The config of `layers` (default: `find_layers(cwd)`); with `config_path` (a file the caller
    named, trusted), that file instead of the user's and the projects' configs, the managed config
    still on top. Never raises: problems are in `Config.problems`."""
    if layers is None:
        layers = find_layers(cwd)
    ordered = sorted(layers, key=lambda layer: _AUTHORITY[layer.kind])  # stable: projects in order
    if config_path:
        ordered = [layer for layer in ordered if layer.kind == MANAGED]
    parts = [(lay.kind, lay.trusted, *lay.config) for lay in ordered if lay.config is not None]
    if config_path:
        named = _read_named(str(config_path))
        if isinstance(named, str):
            broken = merge_layers(parts)
            return record.evolve(broken, fail_mode=strictest(broken.fail_mode, BROKEN_FAIL_MODE),
                                 problems=(named, *broken.problems))  # fmt: skip
        parts.insert(0, ("user", True, str(config_path), named))
    return merge_layers(parts)


def _read_named(path: str) -> bytes | str:
    """The bytes of a config file named by the caller, or the problem reading it."""
    from rtk_policy.config.layers import read_regular_file

    try:
        return read_regular_file(path)[0]
    except OSError as error:
        return f"{path}: cannot read: {error.strerror or error}"


def merge_layers(parts: list[tuple[str, bool, str, bytes | None]]) -> Config:
    """Merge (kind, trusted, path, bytes) config files, lowest authority first (see the module)."""
    merged: dict[str, object] = {}
    modes, sources, problems, notices, ignored = [], [], [], [], []
    for kind, trusted, path, data in parts:
        layer, problem = _parsed(path, data, remembered=kind != MANAGED)
        if layer is None:
            problems.extend([problem] if problem else [])
            modes.append(BROKEN_FAIL_MODE if trusted else "open")
            continue
        if not trusted:
            if layer:
                ignored.append((path, tuple(sorted(layer))))
            continue
        if kind != MANAGED and any(key in layer for key in _MANAGED_ONLY):
            keys = [key for key in _MANAGED_ONLY if key in layer]
            notices.append(
                f"{path}: {', '.join(keys)} ignored: only the managed config locks rules"
            )
            layer = {k: v for k, v in layer.items() if k not in _MANAGED_ONLY}
        audit = layer.get("audit")
        if kind != MANAGED and isinstance(audit, dict) and "writer" in audit:
            notices.append(f"{path}: audit.writer ignored: only the managed config chooses it")
            layer = {**layer, "audit": {k: v for k, v in audit.items() if k != "writer"}}
        modes.append(str(layer.get("fail_mode", "open")))
        _merge(merged, layer)
        sources.append(path)
    config = _to_config(merged, tuple(sources))
    return record.evolve(
        config,
        fail_mode=strictest(*modes),
        problems=tuple(problems),
        notices=tuple(notices),
        ignored=tuple(ignored),
    )


def parse_config(path: str, data: bytes) -> dict[str, object]:
    """The validated keys of one config file; raise `ConfigError` naming `path`."""
    import tomllib

    try:
        layer = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path}: not UTF-8: {error.reason}") from error
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: {error}") from error
    try:
        _to_config(layer, ())
    except ConfigError as error:
        raise ConfigError(f"{path}: {str(error).removeprefix('config: ')}") from error
    return layer


def _parsed(
    path: str, data: bytes | None, remembered: bool = False
) -> tuple[dict[str, object] | None, str]:
    """(keys, "") of a config file, or (None, its problem); `data` None: it could not be read, and
    its layer says why. `remembered`: the keys may come from, and go to, the cache of parsed files
    (`parsed.py`; never for the managed config)."""
    if data is None:
        return None, ""
    if remembered:
        from rtk_policy.config import parsed

        keys = parsed.remembered(data)
        if keys is not None and _checks(keys):
            return keys, ""
    try:
        keys = parse_config(path, data)
    except ConfigError as error:
        return None, str(error)
    if remembered:
        parsed.remember(data, keys)
    return keys, ""


def _checks(keys: dict[str, object]) -> bool:
    """Whether remembered keys pass the checks a file's own keys pass (`parse_config`)."""
    try:
        _to_config(keys, ())
    except Exception:  # noqa: BLE001 - an entry that does not check is parsed again
        return False
    return True


def strictest(*modes: str) -> str:
    """The strictest of fail `modes` (open < closed < deny); unknown values count as open."""
    return max((m for m in modes if m in FAIL_MODES), key=FAIL_MODES.index, default="open")


def effective_fail_mode(config: object) -> str:
    """The config's fail mode, made stricter (never looser) by `$RTK_POLICY_FAIL`."""
    return strictest(getattr(config, "fail_mode", "open"), environ.get("RTK_POLICY_FAIL") or "")


def config_from_mapping(data: dict[str, object], base: Config | None = None) -> Config:
    """A `Config` with the keys of `data` overriding `base` (per-line `--batch` overrides)."""
    base = base or Config()
    merged = record.asdict(base)
    for key in ("sources", "problems", "notices", "ignored"):
        merged.pop(key)
    audit = {
        "enabled": merged.pop("audit_enabled"),
        "path": merged.pop("audit_path"),
        "redact": merged.pop("audit_redact"),
        "max_bytes": merged.pop("audit_max_bytes"),
        "key_file": merged.pop("audit_key_file"),
        "writer": merged.pop("audit_writer"),
        "syslog": {
            "target": merged.pop("audit_syslog"),
            "facility": merged.pop("audit_syslog_facility"),
        },
    }
    merged["audit"] = audit
    for key, value in data.items():
        merged[key] = value
    config = _to_config(merged, base.sources)
    return record.evolve(config, problems=base.problems, notices=base.notices, ignored=base.ignored)


def _merge(into: dict[str, object], layer: dict[str, object]) -> None:
    for key, value in layer.items():
        if key in _LIST_KEYS and isinstance(value, list) and isinstance(into.get(key), list):
            into[key] = [*into[key], *value]  # type: ignore[misc]
        elif key == "audit" and isinstance(value, dict) and isinstance(into.get(key), dict):
            below: dict = into[key]  # type: ignore[assignment]
            joined = {**below, **value}
            if isinstance(value.get("redact"), list) and isinstance(below.get("redact"), list):
                joined["redact"] = [*below["redact"], *value["redact"]]
            into[key] = joined
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
    unknown = sorted(set(data) - _KNOWN_KEYS)
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
        enabled_packs=_string_list(data, "enabled_packs"),
        fail_mode=_choice(data, "fail_mode", FAIL_MODES, "open"),
        backend=_choice(data, "backend", BACKENDS, ""),
        rewrite=_choice(data, "rewrite", REWRITE_MODES, "auto"),
        rewrite_unapproved=_flag(data, "rewrite_unapproved"),
        audit_enabled=_typed(audit, "enabled", bool, True),
        audit_path=_typed(audit, "path", str, ""),
        audit_redact=_string_list(audit, "redact"),
        audit_max_bytes=_typed(audit, "max_bytes", int, 10 * 1024 * 1024),
        audit_key_file=_typed(audit, "key_file", str, ""),
        audit_syslog=target,
        audit_syslog_facility=facility,
        audit_writer=_typed(audit, "writer", str, ""),
        sources=sources,
        locked_rules=_string_list(data, "locked_rules"),
    )


def _typed(table: dict[str, object], key: str, kind: type[_T], default: _T) -> _T:
    value = table.get(key, default)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ConfigError(f"config: [audit] {key} must be a {kind.__name__}")
    return value


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
