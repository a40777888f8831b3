"""`rtk-policy uninstall [--global] [--agent NAME] [--system]`: remove exactly our hook entries
(the shell's and the file tools'; with `--system`, from every agent's machine-wide settings).

For a project, every file `init` writes or wrote: Claude Code's `.claude/settings.local.json` and
the `.claude/settings.json` of older versions (other hooks and settings there are kept), and the
`.git/info/exclude` line init added for a file it created, once that file is gone.
"""

from __future__ import annotations

import json
import os
from typing import IO

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


def run(
    *,
    agent: str | None = None,
    global_: bool = False,
    system: bool = False,
    root: str = "/",
    as_json: bool = False,
    stdin: IO[str] | None = None,
    stdout: IO[str],
    stderr: IO[str],
) -> int:
    """Remove our entries (`agent`'s, default claude; `global_`: the user-wide file; `system`: every
    agent's machine-wide settings under `root`; `as_json`: report one JSON object); the original
    bytes come back when ours was the only change."""
    if system:
        return run_system(agent, root, as_json, stdout, stderr)
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
    return _report(as_json, changes, notes, stdout)


def run_system(
    agent: str | None, root: str, as_json: bool, stdout: IO[str], stderr: IO[str]
) -> int:
    """`uninstall --system`: our entries from every agent's (or `agent`'s) machine-wide settings
    under `root`; for every agent, also what init installed beside them (the audit writer's
    service, config and key: `settings/writer_removal.py`; the compiled system cache), keeping
    the audit log and everything someone else owns or changed."""
    from rtk_policy.settings import system

    agents = [agent] if agent else AGENTS
    files = [system.system_targets(name, target(name, True), root) for name in agents]
    changes = [_uninstall(specs, stderr) for specs in files]
    if agent:
        kept = [
            "kept the audit writer and the system cache: the other agents' machine-wide hooks"
            " use them (`uninstall --system` without --agent removes them)"
        ]
        return _report(as_json, changes, [], stdout, ([], kept))
    from rtk_policy.settings import writer_removal

    try:
        removed, kept = writer_removal.remove(root)
        removed += system.remove_prepared(root)
    except OSError as error:
        stderr.write(f"rtk-policy uninstall --system: error: {error}\n")
        changes.append(None)
        removed, kept = [], []
    return _report(as_json, changes, [], stdout, (removed, kept))


def _report(
    as_json: bool,
    changes: list[Change | None],
    notes: list[str],
    stdout: IO[str],
    besides: tuple[list[str], list[str]] | None = None,
) -> int:
    """Print what was removed (`as_json`: one object; `besides`: what else was removed and what
    was kept); exit 1 when a file could not be changed."""
    ok = all(change is not None for change in changes)
    done = [change for change in changes if change is not None]
    removed, kept = besides or ([], [])
    if as_json:
        files = [{"file": c.path, "changed": c.changed, "message": c.message} for c in done]
        report = {"ok": ok, "files": files, "notes": notes}
        if besides is not None:
            report.update(removed=removed, kept=kept)
        stdout.write(json.dumps(report, indent=2) + "\n")
    else:
        lines = [c.message for c in done] + notes + removed + kept
        stdout.writelines(f"{line}\n" for line in lines)
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
