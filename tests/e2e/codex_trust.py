"""Trusting our hooks in an e2e sandbox's Codex home as the user's `/hooks` review does.

The keys and hashes come from the package's own `rtk_policy.settings.codex_trust` (which `init`
and `doctor` use to say whether Codex will run the hook); `test_codex.py` checks them against what
`codex app-server` reports, so the package's reading of Codex is what the real CLI proves.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from rtk_policy.settings import codex_trust


def hook_states(hooks_json: Path) -> dict[str, str]:
    """{key: hash} of every command hook in a `hooks.json`, as the package computes them."""
    data = json.loads(hooks_json.read_text())
    path = os.path.abspath(hooks_json)
    return {
        codex_trust.hook_key(path, event, group, index): codex_trust.handler_hash(
            event, matcher, handler
        )
        for event in (data.get("hooks") or {})
        for group, index, matcher, handler in codex_trust.handlers_of(data, event)
    }


def trust_all(codex_home: Path) -> dict[str, str]:
    """Append a `trusted_hash` to config.toml for every hook of `codex_home/hooks.json`."""
    states = hook_states(codex_home / "hooks.json")
    config = codex_home / "config.toml"
    text = config.read_text() if config.exists() else ""
    for key, digest in states.items():
        text += f'\n[hooks.state.{json.dumps(key)}]\ntrusted_hash = "{digest}"\n'
    config.write_text(text)
    return states
