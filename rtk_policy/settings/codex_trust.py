"""Whether Codex trusts our hook: Codex (0.169) runs a user hook only when the user has reviewed it
in `/hooks`, which stores the hash of the hook's definition in the user's `config.toml`.

How Codex computes and checks it (read in `codex-rs/hooks/src/engine/discovery.rs`, `lib.rs` and
`config_rules.rs`; checked against `codex app-server`'s `hooks/list` answer):

- The **key** of a handler is `<hooks.json path>:<event>:<group index>:<handler index>`, the event
  in snake case (`pre_tool_use`), both indexes counted from 0 in file order.
- The **state** is `[hooks.state."<key>"]` in `$CODEX_HOME/config.toml` (default `~/.codex`), with
  `trusted_hash = "sha256:…"` and `enabled`; only the user's own config layer is read for it.
- The **hash** is computed over a normalised identity of that one handler, not over the file's text:
  `{"event_name": <event>, "matcher": <group matcher>, "hooks": [{"type": "command", "command": …,
  "timeout": <timeout in seconds, 600 when absent, at least 1>, "async": <false when absent>,
  "statusMessage": … (only when set)}]}`, the matcher left out when the group has none. The identity
  is turned into JSON with every object's keys sorted and no whitespace (non-ASCII text as UTF-8,
  not escaped), and the hash is `sha256:` + the hex SHA-256 of those bytes.
- **Status**: no `trusted_hash` → untrusted; one that differs from the current hash → modified
  (changed since it was reviewed); equal → trusted. `enabled = false` disables the hook. Only a
  trusted, enabled user hook runs; so any change to the command, the matcher or the timeout stops
  Codex from running it until the user reviews it again.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

from rtk_policy.util import environ

TRUSTED, MODIFIED, UNTRUSTED, DISABLED = "trusted", "modified", "untrusted", "disabled"
DEFAULT_TIMEOUT = 600


def codex_home() -> Path:
    """`$CODEX_HOME`, or `~/.codex`."""
    value = environ.get("CODEX_HOME")
    return Path(environ.expand_user(value or "~/.codex"))


def event_label(event: str) -> str:
    """Codex's snake-case name of a hook event: `PreToolUse` → `pre_tool_use`."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", event).lower()


def hook_key(hooks_json: Path | str, event: str, group: int, handler: int) -> str:
    """The key of one handler in Codex's hook state."""
    return f"{hooks_json}:{event_label(event)}:{group}:{handler}"


def handler_hash(event: str, matcher: str | None, handler: dict[str, Any]) -> str:
    """`sha256:<hex>` of one command handler's normalised identity (see the module docstring)."""
    timeout = handler.get("timeout", handler.get("timeoutSec"))
    normalised: dict[str, Any] = {
        "type": "command",
        "command": handler.get("command"),
        "timeout": max(int(timeout) if isinstance(timeout, int) else DEFAULT_TIMEOUT, 1),
        "async": bool(handler.get("async", False)),
    }
    if handler.get("statusMessage") is not None:
        normalised["statusMessage"] = handler["statusMessage"]
    identity: dict[str, Any] = {"event_name": event_label(event), "hooks": [normalised]}
    if matcher is not None:
        identity["matcher"] = matcher
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def hook_states(config_toml: Path) -> dict[str, dict[str, Any]]:
    """`[hooks.state]` of a Codex `config.toml` ({} when missing or unreadable)."""
    import tomllib

    try:
        data = tomllib.loads(config_toml.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}
    hooks = data.get("hooks")
    states = hooks.get("state") if isinstance(hooks, dict) else None
    if not isinstance(states, dict):
        return {}
    return {key.strip(): value for key, value in states.items() if isinstance(value, dict)}


def trust_status(state: dict[str, Any] | None, current: str) -> str:
    """The status of a handler whose current hash is `current`, given its stored state."""
    if state is not None and state.get("enabled") is False:
        return DISABLED
    trusted = state.get("trusted_hash") if state else None
    if not trusted:
        return UNTRUSTED
    return TRUSTED if trusted == current else MODIFIED


def handlers_of(data: dict[str, Any], event: str) -> list[tuple[int, int, str | None, dict]]:
    """(group index, handler index, matcher, handler) of every command handler of `event`."""
    groups = data.get("hooks", {}).get(event) if isinstance(data.get("hooks"), dict) else None
    found = []
    for group_index, group in enumerate(groups if isinstance(groups, list) else ()):
        handlers = group.get("hooks") if isinstance(group, dict) else None
        for handler_index, handler in enumerate(handlers if isinstance(handlers, list) else ()):
            if isinstance(handler, dict) and handler.get("type", "command") == "command":
                found.append((group_index, handler_index, group.get("matcher"), handler))
    return found


def statuses(
    hooks_json: Path, data: dict[str, Any], event: str, home: Path | None = None
) -> dict[str, tuple[str, dict[str, Any]]]:
    """{key: (status, handler)} of `event`'s command handlers in a parsed `hooks_json`, judged
    against the user's config in `home` (default `codex_home()`)."""
    states = hook_states((home or codex_home()) / "config.toml")
    path = os.path.abspath(hooks_json)
    found = {}
    for group, index, matcher, handler in handlers_of(data, event):
        key = hook_key(path, event, group, index)
        current = handler_hash(event, matcher, handler)
        found[key] = (trust_status(states.get(key), current), handler)
    return found
