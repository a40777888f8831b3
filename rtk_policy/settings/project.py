"""A project install's folder, and keeping the file it writes out of git.

The agents read a project's settings (`.claude/`, `.codex/`, `.gemini/`, `.cursor/`,
`.github/hooks/`) in the folder they are started in: Claude Code does not walk up to the git
root (anthropics/claude-code issues 36793, 76441, 86187: started in a sub-folder, the root's
`.claude/settings.json` is never read). So `init` in a sub-folder of a git project would write a
file the agent, started at the project's root as usual, never reads: it refuses, naming the root,
unless the sub-folder already has the agent's folder (the user starts the agent there).

The entry `init` writes holds this machine's absolute paths (the interpreter, the hook file), so
the file must not be committed: Claude Code's `settings.local.json` is the per-user file meant
for that, and a file `init` creates that git does not ignore yet is added to the repository's
own `.git/info/exclude` (never to a `.gitignore` the team shares), marked so that `uninstall`
takes the line out again.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from rtk_policy.config.paths import folders_up

#: the line before each path `init` adds to `.git/info/exclude`
EXCLUDE_MARK = "# rtk-policy init: this machine's hook paths, not for the repository"


class NotProjectRoot(Exception):
    """`init` was run where the agent would not read what it writes (the hint is the message)."""


def git_root(cwd: str) -> str | None:
    """The nearest folder at or above `cwd` holding `.git` (a folder, or a worktree's file)."""
    for folder in folders_up(cwd):
        if os.path.lexists(os.path.join(folder, ".git")):
            return folder
    return None


def project_folder(cwd: str, agent_folder: str) -> str:
    """The folder whose `agent_folder` (`.claude`, …) the agent started at the project's root
    reads: `cwd` when it has one or is not inside a git project, else the git root."""
    root = git_root(cwd)
    if root is None or os.path.isdir(os.path.join(cwd, agent_folder)):
        return cwd
    return root


def check_install_folder(settings: Path, cwd: str, agent: str, command: str = "init") -> None:
    """Raise `NotProjectRoot` when `cwd` is below its git project's root and has no folder of
    the agent yet (the agent, started at the root, would not read `settings`); the hint names
    `rtk-policy COMMAND`."""
    here = os.path.realpath(cwd)
    root = git_root(here)
    if root is None or root == here:
        return
    folder = Path(here) / settings.relative_to(cwd).parts[0]
    if folder.is_dir():
        return
    raise NotProjectRoot(
        f"{here} is a sub-folder of the git project {root}; {agent} reads {folder.name}/ only in"
        f" the folder it is started in, so it would not read {settings}. Run `rtk-policy {command}`"
        f" in {root} (where you start {agent}), or create {folder} first to install for this"
        " sub-folder, or use `--global`."
    )


def _git(cwd: str, *words: str) -> subprocess.CompletedProcess[str] | None:
    try:
        return subprocess.run(["git", *words], cwd=cwd, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return None


def _exclude_file(root: str) -> Path | None:
    done = _git(root, "rev-parse", "--git-path", "info/exclude")
    if done is None or done.returncode != 0 or not done.stdout.strip():
        return None
    return Path(root) / done.stdout.strip()


def keep_out_of_git(settings: Path, created: bool) -> list[str]:
    """Make sure git does not commit `settings` (a file `init` wrote in a project, `created` by
    it now) nor the backups init and uninstall keep beside it and beside `older` files: a file
    init created is excluded, of another one the user is told; what was done or what the user
    should know ([] when nothing needs saying: not in a git project, or ignored already)."""
    root = git_root(str(settings.parent))
    if root is None:
        return []
    said = _keep_out(root, settings, created or settings.name == "settings.local.json")
    return [line for line in (said, *keep_backups_out_of_git([settings])) if line]


def keep_backups_out_of_git(files: list[Path]) -> list[str]:
    """Exclude the backups of `files` (`settings.json.bak`: written by rtk-policy, holding this
    machine's paths) from git where they exist; what was done."""
    from rtk_policy.settings.jsonfile import backup_path

    said = []
    for path in files:
        backup, root = backup_path(path), git_root(str(path.parent))
        if root is not None and backup.is_file():
            said.append(_keep_out(root, backup, True))
    return [line for line in said if line]


def _keep_out(root: str, path: Path, ours: bool) -> str:
    """Exclude `path` from git in `root`'s own exclude file, unless git ignores or tracks it
    already; a file not `ours` (rtk-policy did not create it) is never excluded, only named."""
    relative = _relative(root, path)
    ignored = _git(root, "check-ignore", "-q", "--no-index", relative.lstrip("/"))
    if ignored is None:
        return f"git could not be asked whether {path} is ignored: do not commit it"
    if ignored.returncode == 0:
        return ""
    tracked = _git(root, "ls-files", "--error-unmatch", relative.lstrip("/"))
    if tracked is not None and tracked.returncode == 0:
        return (
            f"{path} is committed in git, and the hook entry holds this machine's paths:"
            " the team gets them with the next commit (prefer `--global` for this agent)"
        )
    exclude = _exclude_file(root) if ours else None
    if exclude is None:
        return f"{path} is not ignored by git and holds this machine's paths: do not commit it"
    exclude.parent.mkdir(parents=True, exist_ok=True)
    text = exclude.read_text(encoding="utf-8") if exclude.is_file() else ""
    block = f"{EXCLUDE_MARK}\n{relative}\n"
    if block not in text:
        exclude.write_text(text + ("" if text.endswith("\n") or not text else "\n") + block)
    return f"added {relative} to {exclude} (kept out of git: it holds this machine's paths)"


def _relative(root: str, path: Path) -> str:
    """`path` as an anchored pattern of the repository at `root` (`/.claude/settings.json`)."""
    folder = path.parent.resolve().relative_to(Path(root).resolve()).as_posix()
    return "/" + (f"{folder}/" if folder != "." else "") + path.name


def forget_exclude(settings: Path) -> list[str]:
    """Take out the `.git/info/exclude` lines `keep_out_of_git` added for `settings` and its
    backup, for each that is gone; what was done."""
    from rtk_policy.settings.jsonfile import backup_path

    root = git_root(str(settings.parent))
    exclude = _exclude_file(root) if root is not None else None
    if root is None or exclude is None or not exclude.is_file():
        return []
    said = []
    for path in (settings, backup_path(settings)):
        block = f"{EXCLUDE_MARK}\n{_relative(root, path)}\n"
        text = exclude.read_text(encoding="utf-8")
        if not path.exists() and block in text:
            exclude.write_text(text.replace(block, "", 1))
            said.append(f"removed {_relative(root, path)} from {exclude}")
    return said
