"""Whether Claude Code trusts a workspace, and so honours the allow rules of its project settings.

Read in Claude Code 2.1.328's own code: while a workspace is not trusted, Claude Code drops the
`permissions.allow` entries of `<project>/.claude/settings.json` and `.claude/settings.local.json`
("Dropped N project-scoped permissions.allow entries — workspace not yet trusted"); their deny
and ask entries always apply. A workspace is trusted when Claude Code's global config
(`$CLAUDE_CONFIG_DIR/.claude.json`, default `~/.claude.json`) holds
`projects[KEY].hasTrustDialogAccepted: true`, KEY being the git top level of the folder (a linked
worktree's main worktree), else the folder itself. For these allow entries only that exact key
counts: a trust record of a parent folder does not. Nothing counts while
`CLAUDE_CODE_IGNORE_PERSISTED_TRUST` is set.

Two cases Claude Code also keeps and this module treats as stated: a project file that is the
user's own settings file (Claude Code started in the home folder) is not project-scoped (the
caller reads it as the user's); an untracked `settings.local.json` under a parent folder's trust
record, which Claude Code keeps, is dropped here (stricter, never looser).
"""

from __future__ import annotations

import json
import os

from rtk_policy.util import environ

TRUST_FLAG = "hasTrustDialogAccepted"
IGNORE_TRUST_ENV = "CLAUDE_CODE_IGNORE_PERSISTED_TRUST"


def global_config_path() -> str:
    """Claude Code's global config: `$CLAUDE_CONFIG_DIR/.claude.json`, else `~/.claude.json`."""
    folder = environ.get("CLAUDE_CONFIG_DIR") or environ.expand_user("~")
    return os.path.join(environ.expand_user(folder), ".claude.json")


def trust_key(folder: str) -> str:
    """The key Claude Code keeps a workspace's trust under: the git top level holding `folder`
    (for a linked worktree, its main worktree), else `folder`; real paths."""
    here = os.path.realpath(folder)
    probe = here
    while True:
        dot_git = os.path.join(probe, ".git")
        if os.path.isdir(dot_git):
            return probe
        if os.path.isfile(dot_git):
            return _main_worktree(probe, dot_git)
        parent = os.path.dirname(probe)
        if parent == probe:
            return here
        probe = parent


def _main_worktree(root: str, dot_git: str) -> str:
    """The main worktree of the linked worktree at `root` (its `.git` file names the git dir,
    whose `commondir` is the main repository's); `root` when that cannot be read."""
    try:
        with open(dot_git, encoding="utf-8") as handle:
            line = handle.readline().strip()
        if not line.startswith("gitdir:"):
            return root
        git_dir = os.path.join(root, line[len("gitdir:") :].strip())
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8") as handle:
            common = os.path.join(git_dir, handle.readline().strip())
    except OSError:
        return root
    return os.path.dirname(os.path.realpath(common))


def workspace_trusted(folder: str) -> bool:
    """True when Claude Code trusts the workspace of `folder` (see the module); False when the
    global config is missing, unreadable or says nothing."""
    if environ.get(IGNORE_TRUST_ENV):
        return False
    try:
        with open(global_config_path(), "rb") as handle:
            config = json.loads(handle.read().decode("utf-8-sig"))
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    projects = config.get("projects") if isinstance(config, dict) else None
    entry = projects.get(trust_key(folder)) if isinstance(projects, dict) else None
    return isinstance(entry, dict) and entry.get(TRUST_FLAG) is True
