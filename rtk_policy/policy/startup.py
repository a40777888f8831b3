"""The shell start-up files: code every new shell runs before the agent's next command.

The agent can write them with its file tools or its shell (`echo 'git() { rm -rf ~; }' >>
~/.bashrc`), and Claude Code's Bash tool runs each command in a shell that sources a snapshot of
the user's shell config (`~/.claude/shell-snapshots/`): a function or alias defined there changes
what every later `git`, `ls` or `rtk-policy` does, unseen by any hook, and a variable set there
(`XDG_CONFIG_HOME`) moves the hook's own files. So the shipped `guard-self` pack asks before any
write of them (`shell_startup_path(p)`, `shell_startup_what(p)` in `functions_guard.py`);
reading them stays allowed. The places are looked up the way the guard's own are
(`guarded.place_what`: every spelling, trees holding them, globs).
"""

from __future__ import annotations

import posixpath

from rtk_policy.policy import paths
from rtk_policy.policy.guarded import Guarded, place_what
from rtk_policy.util import environ

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~4 ms on a cold hook)
if TYPE_CHECKING:
    from collections.abc import Iterator

#: start-up files in the home folder (bash, sh/dash, ksh, zsh; `.bashrc.d` is Fedora's)
HOME_FILES = (
    ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".bash_aliases", ".bashrc.d",
    ".profile", ".kshrc", ".mkshrc", ".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout",
)  # fmt: skip
#: zsh's own files, looked for in `$ZDOTDIR` when it is set
ZSH_FILES = (".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout")
#: the machine-wide ones (an agent running as root could write them)
SYSTEM_FILES = (
    "/etc/profile", "/etc/profile.d", "/etc/bash.bashrc", "/etc/bashrc", "/etc/zsh", "/etc/zshrc",
    "/etc/zshenv", "/etc/zprofile", "/etc/zlogin",
)  # fmt: skip
WHAT = "a shell start-up file (every new shell runs it)"


def startup_files() -> Iterator[Guarded]:
    """Every shell start-up file and folder for the current environment."""
    home = paths.home()
    places = [posixpath.join(home, name) for name in HOME_FILES]
    zdotdir = environ.get("ZDOTDIR")
    if zdotdir:
        places += [posixpath.join(paths.expand_user(zdotdir), name) for name in ZSH_FILES]
    config = environ.get("XDG_CONFIG_HOME")
    places += [posixpath.join(home, ".config", "fish")]  # config.fish, conf.d/, functions/
    if config:
        places.append(posixpath.join(paths.expand_user(config), "fish"))
    for variable in ("BASH_ENV", "ENV"):  # what non-interactive bash and POSIX sh source
        value = environ.get(variable)
        if value and value.startswith(("/", "~", "$HOME")):
            places.append(paths.expand_user(value))
    for place in (*places, *SYSTEM_FILES):
        yield Guarded(place, WHAT)
    snapshot = "Claude Code's snapshot of the shell start-up files (its Bash tool sources it)"
    claude = environ.get("CLAUDE_CONFIG_DIR")
    for folder in dict.fromkeys((paths.expand_user(claude or "~/.claude"), f"{home}/.claude")):
        yield Guarded(posixpath.join(folder, "shell-snapshots"), snapshot)


def startup_what(path: str) -> str:
    """What shell start-up file writing `path` changes, a phrase naming `path` ("" when none)."""
    return place_what(path, startup_files)
