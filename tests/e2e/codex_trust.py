"""Codex's hook trust, recorded the way its `/hooks` review records it.

Codex 0.169.0 runs a user hook only when `$CODEX_HOME/config.toml` holds, under the hook's key,
the hash of the hook's current definition (codex-rs/hooks/src/engine/discovery.rs):

    [hooks.state."<absolute path of hooks.json>:pre_tool_use:<group index>:<handler index>"]
    trusted_hash = "sha256:<hex>"

The hash is SHA-256 over canonical JSON (object keys sorted, no blanks) of the hook's normalised
identity `{"event_name": "pre_tool_use", "matcher": <group matcher>, "hooks": [<handler>]}`, the
handler being `{"type": "command", "command": ..., "timeout": <timeout, default 600>, "async":
<default false>}` plus its status message when it has one; absent (None) fields are left out,
since the identity goes through TOML, which has no null. So the hash covers the event, the
matcher, the command line, the timeout and async: any change to them — `rtk-policy init`
writing another command, a timeout added — makes the hook "modified", which Codex does not run
until the user reviews it again. `codex app-server` answers `hooks/list` with each hook's `key`,
`currentHash` and `trustStatus` (`codex_app.AppServer.hooks_list`); `test_codex.py` checks
this module against that answer.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any


def event_label(event: str) -> str:
    """Codex's snake_case label of a hook event (`PreToolUse` -> `pre_tool_use`)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def handler_identity(handler: dict[str, Any]) -> dict[str, Any]:
    """The normalised command handler that Codex hashes."""
    identity = {
        "type": "command",
        "command": handler["command"],
        "timeout": max(int(handler.get("timeout") or handler.get("timeoutSec") or 600), 1),
        "async": bool(handler.get("async", False)),
    }
    if handler.get("statusMessage") is not None:
        identity["statusMessage"] = handler["statusMessage"]
    return identity


def hook_hash(event: str, matcher: str | None, handler: dict[str, Any]) -> str:
    """`sha256:<hex>` of one handler, as Codex computes `currentHash`."""
    identity: dict[str, Any] = {
        "event_name": event_label(event),
        "hooks": [handler_identity(handler)],
    }
    if matcher is not None:
        identity["matcher"] = matcher
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def hook_states(hooks_json: Path) -> dict[str, str]:
    """{key: hash} of every command hook in a `hooks.json`."""
    data = json.loads(hooks_json.read_text())
    states = {}
    for event, groups in (data.get("hooks") or {}).items():
        for group_index, group in enumerate(groups):
            for handler_index, handler in enumerate(group.get("hooks") or ()):
                if handler.get("type", "command") == "command":
                    key = f"{hooks_json}:{event_label(event)}:{group_index}:{handler_index}"
                    states[key] = hook_hash(event, group.get("matcher"), handler)
    return states


def trust_all(codex_home: Path) -> dict[str, str]:
    """Append a `trusted_hash` to config.toml for every hook of `codex_home/hooks.json`."""
    states = hook_states(codex_home / "hooks.json")
    config = codex_home / "config.toml"
    text = config.read_text() if config.exists() else ""
    for key, digest in states.items():
        text += f'\n[hooks.state.{json.dumps(key)}]\ntrusted_hash = "{digest}"\n'
    config.write_text(text)
    return states
