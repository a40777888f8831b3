"""`rtk-policy uninstall [--global] [--agent NAME] [--system]`: remove exactly our hook entries
(the shell's and the file tools'; with `--system`, from every agent's machine-wide settings).

For a project, every file `init` writes or wrote: Claude Code's `.claude/settings.local.json` and
the `.claude/settings.json` of older versions (other hooks and settings there are kept), and the
`.git/info/exclude` line init added for a file it created, once that file is gone.
"""

from __future__ import annotations

import os
from typing import IO, Any

from rtk_policy.agents import AGENTS
from rtk_policy.settings.install import uninstall
from rtk_policy.settings.jsonfile import SettingsError
from rtk_policy.settings.project import NotProjectRoot, check_install_folder, forget_exclude
from rtk_policy.settings.targets import Target, installed_targets, target, with_file_tools


def run(args: Any, stdin: IO[str], stdout: IO[str], stderr: IO[str]) -> int:
    """Remove our entries; the original bytes come back when ours was the only change."""
    agent = getattr(args, "agent", None)
    global_ = bool(getattr(args, "global_", False))
    if getattr(args, "system", False):
        from rtk_policy.settings.system import system_targets

        root = getattr(args, "root", None) or "/"
        files = [system_targets(a, target(a, True), root) for a in ([agent] if agent else AGENTS)]
        return max(_uninstall(specs, stdout, stderr) for specs in files)
    cwd = os.getcwd()
    shells = installed_targets(agent or "claude", global_, cwd)
    if not global_:
        try:
            check_install_folder(shells[0].path, cwd, agent or "claude", "uninstall")
        except NotProjectRoot as error:
            stderr.write(f"rtk-policy uninstall: error: {error}\n")
            return 1
    codes = [_uninstall(with_file_tools(shell), stdout, stderr, quiet=i > 0)
             for i, shell in enumerate(shells)]  # fmt: skip
    if not global_ and (done := forget_exclude(shells[0].path)):
        stdout.write(done + "\n")
    return max(codes)


def _uninstall(
    specs: tuple[Target, ...], stdout: IO[str], stderr: IO[str], quiet: bool = False
) -> int:
    """Remove our entries from one file; `quiet`: say nothing when there were none (an older
    location)."""
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
    if change.changed or not quiet:
        stdout.write(change.message + "\n")
    return 0
