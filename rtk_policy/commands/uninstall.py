"""`rtk-policy uninstall [--global] [--agent NAME] [--system]`: remove exactly our hook entries
(the shell's and the file tools'; with `--system`, from every agent's machine-wide settings).

For a project, every file `init` writes or wrote: Claude Code's `.claude/settings.local.json` and
the `.claude/settings.json` of older versions (other hooks and settings there are kept), and the
`.git/info/exclude` line init added for a file it created, once that file is gone.
"""

from __future__ import annotations

import json
import os
from typing import IO, Any

from rtk_policy.agents import AGENTS
from rtk_policy.settings.install import Change, uninstall
from rtk_policy.settings.jsonfile import SettingsError
from rtk_policy.settings.project import (
    NotProjectRoot,
    check_install_folder,
    forget_exclude,
    keep_backups_out_of_git,
)
from rtk_policy.settings.targets import Target, installed_targets, target, with_file_tools


def run(args: Any, stdin: IO[str], stdout: IO[str], stderr: IO[str]) -> int:
    """Remove our entries; the original bytes come back when ours was the only change."""
    agent = getattr(args, "agent", None)
    global_ = bool(getattr(args, "global_", False))
    if getattr(args, "system", False):
        from rtk_policy.settings.system import system_targets

        root = getattr(args, "root", None) or "/"
        files = [system_targets(a, target(a, True), root) for a in ([agent] if agent else AGENTS)]
        return _report(args, [_uninstall(specs, stderr) for specs in files], [], stdout)
    cwd = os.getcwd()
    shells = installed_targets(agent or "claude", global_, cwd)
    if not global_:
        try:
            check_install_folder(shells[0].path, cwd, agent or "claude", "uninstall")
        except NotProjectRoot as error:
            stderr.write(f"rtk-policy uninstall: error: {error}\n")
            return 1
    changes = [_uninstall(with_file_tools(shell), stderr) for shell in shells]
    # an older location is named only when something was removed there
    changes = changes[:1] + [c for c in changes[1:] if c is None or c.changed]
    notes = []
    if not global_:
        notes = forget_exclude(shells[0].path) + keep_backups_out_of_git([s.path for s in shells])
    return _report(args, changes, notes, stdout)


def _report(args: Any, changes: list[Change | None], notes: list[str], stdout: IO[str]) -> int:
    """Print what was removed (`--json`: one object); exit 1 when a file could not be changed."""
    ok = all(change is not None for change in changes)
    done = [change for change in changes if change is not None]
    if getattr(args, "json", False):
        files = [{"file": c.path, "changed": c.changed, "message": c.message} for c in done]
        stdout.write(json.dumps({"ok": ok, "files": files, "notes": notes}, indent=2) + "\n")
    else:
        stdout.writelines(f"{line}\n" for line in [c.message for c in done] + notes)
    return 0 if ok else 1


def _uninstall(specs: tuple[Target, ...], stderr: IO[str]) -> Change | None:
    """Remove our entries from one file; None (the reason on `stderr`) when it cannot be."""
    try:
        return uninstall(specs)
    except SettingsError as error:
        stderr.write(f"rtk-policy uninstall: error: {error}\n")
    except OSError as error:
        stderr.write(
            f"rtk-policy uninstall: error: cannot write {specs[0].path}: {error.strerror}\n"
        )
    return None
