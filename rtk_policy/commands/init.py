"""`rtk-policy init [--global] [--agent NAME]`: write our hook entry into an agent's settings."""

from __future__ import annotations

from typing import IO, Any

from rtk_policy.settings.install import install
from rtk_policy.settings.jsonfile import SettingsError
from rtk_policy.settings.targets import hook_command, target


def run(args: Any, stdin: IO[str], stdout: IO[str], stderr: IO[str]) -> int:
    """Install the hook idempotently; exit 1 (file untouched) when the settings file is not JSON."""
    if getattr(args, "serve", False):
        stderr.write(
            "rtk-policy init: --serve is not available yet; install the command hook instead\n"
        )
        return 2
    agent = getattr(args, "agent", "claude") or "claude"
    spec = target(agent, bool(getattr(args, "global_", False)))
    try:
        change = install(spec, hook_command(agent))
    except (SettingsError, ValueError) as error:
        stderr.write(f"rtk-policy init: error: {error}\n")
        stderr.write(
            "rtk-policy init: the file was left untouched; fix or move it, then run init again\n"
        )
        return 1
    except OSError as error:
        stderr.write(f"rtk-policy init: error: cannot write {spec.path}: {error.strerror}\n")
        return 1
    for warning in change.warnings:
        stderr.write(f"rtk-policy init: warning: {warning}\n")
    stdout.write(change.message + "\n")
    return 0
