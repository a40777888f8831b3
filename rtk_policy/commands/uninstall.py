"""`rtk-policy uninstall [--global] [--agent NAME]`: remove exactly our hook entries."""

from __future__ import annotations

from typing import IO, Any

from rtk_policy.settings.install import uninstall
from rtk_policy.settings.jsonfile import SettingsError
from rtk_policy.settings.targets import target


def run(args: Any, stdin: IO[str], stdout: IO[str], stderr: IO[str]) -> int:
    """Remove our entries; the original bytes come back when ours was the only change."""
    agent = getattr(args, "agent", "claude") or "claude"
    spec = target(agent, bool(getattr(args, "global_", False)))
    try:
        change = uninstall(spec)
    except SettingsError as error:
        stderr.write(f"rtk-policy uninstall: error: {error}\n")
        return 1
    except OSError as error:
        stderr.write(f"rtk-policy uninstall: error: cannot write {spec.path}: {error.strerror}\n")
        return 1
    stdout.write(change.message + "\n")
    return 0
