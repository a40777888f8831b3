"""`rtk-policy uninstall [--global] [--agent NAME] [--system]`: remove exactly our hook entries
(the shell's and the file tools'; with `--system`, from every agent's machine-wide settings)."""

from __future__ import annotations

from typing import IO, Any

from rtk_policy.agents import AGENTS
from rtk_policy.settings.install import uninstall
from rtk_policy.settings.jsonfile import SettingsError
from rtk_policy.settings.targets import Target, target, targets


def run(args: Any, stdin: IO[str], stdout: IO[str], stderr: IO[str]) -> int:
    """Remove our entries; the original bytes come back when ours was the only change."""
    agent = getattr(args, "agent", None)
    if getattr(args, "system", False):
        from rtk_policy.settings.system import system_targets

        root = getattr(args, "root", None) or "/"
        files = [system_targets(a, target(a, True), root) for a in ([agent] if agent else AGENTS)]
    else:
        files = [targets(agent or "claude", bool(getattr(args, "global_", False)))]
    codes = [_uninstall(specs, stdout, stderr) for specs in files]
    return max(codes)


def _uninstall(specs: tuple[Target, ...], stdout: IO[str], stderr: IO[str]) -> int:
    try:
        change = uninstall(specs)
    except SettingsError as error:
        stderr.write(f"rtk-policy uninstall: error: {error}\n")
        return 1
    except OSError as error:
        stderr.write(
            f"rtk-policy uninstall: error: cannot write {specs[0].path}: {error.strerror}\n"
        )
        return 1
    stdout.write(change.message + "\n")
    return 0
