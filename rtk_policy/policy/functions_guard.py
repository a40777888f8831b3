"""CEL functions about the guard's own state and about paths (`guarded.py`, `paths.py`).

- `guarded_path(p)`: writing `p` (a tree when it ends in `/`) changes rtk-policy's own state;
- `guarded_what(p)`: what it changes, a phrase naming `p` for a message ("" when nothing guarded);
- `shell_startup_path(p)`, `shell_startup_what(p)`: the same for the shell start-up files
  (`startup.py`: `~/.bashrc`, `~/.zshrc`, `~/.profile`, fish's folder, `$BASH_ENV` …);
- `path_touches(p, folder)`: writing `p` changes `folder` or something in it, whatever the spelling
  of either (`~`, `..`, `//`, symlinks, case on a case-insensitive file system, globs);
- `kills_guard(argv)`: the `pkill`/`killall`/`pgrep`/`pidof`/`kill` command `argv` selects
  rtk-policy's resident engine (its process name or command line, its pid, its pid file).
"""

from __future__ import annotations

import os
import sys

from rtk_policy.policy.functions import Function
from rtk_policy.util.lazy_re import lazy

#: how a process of ours is named (`serve/client.py` spawns `python -m rtk_policy serve`)
_OURS = lazy(globals(), "_OURS", r"(?i)rtk[-_.]?policy")
#: options of pkill/pgrep that take a value (the pattern is the first operand after them)
_PKILL_VALUES = frozenset("uUgGPstFn") | {"-signal", "-session", "-terminal", "-pidfile"}


def guarded_path(path: str) -> bool:
    """Whether writing `path` changes the guard's own state."""
    from rtk_policy.policy.guarded import guarded_path as check

    return check(path)


def guarded_what(path: str) -> str:
    """What guarded thing writing `path` changes, "" when none."""
    from rtk_policy.policy.guarded import guarded_what as what

    return what(path)


def shell_startup_path(path: str) -> bool:
    """Whether writing `path` changes a shell start-up file (`startup.py`)."""
    return bool(shell_startup_what(path))


def shell_startup_what(path: str) -> str:
    """What shell start-up file writing `path` changes, "" when none."""
    from rtk_policy.policy.startup import startup_what

    return startup_what(path)


def path_touches(path: str, folder: str) -> bool:
    """Whether writing `path` changes `folder` or something in it."""
    from rtk_policy.policy import paths

    folders = paths.spellings(folder)
    return any(paths.overlaps(p, f) for p in paths.spellings(path) for f in folders)


def _our_processes() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The names and command lines a process of the resident engine has."""
    python = sys.executable or "python3"
    names = (os.path.basename(python)[:15], "python", "python3", "rtk-policy")
    lines = (
        f"{python} -m rtk_policy serve --idle 900",
        "python3 -m rtk_policy serve",
        "rtk-policy serve",
    )
    return names, lines


def _selects(pattern: str, targets: tuple[str, ...], exact: bool, fold: bool) -> bool:
    import re  # only for a command that kills processes by name

    try:
        regex = re.compile(pattern, re.IGNORECASE if fold else 0)
    except re.error:
        return False
    return any((regex.fullmatch if exact else regex.search)(t) for t in targets)


def _our_pid(word: str) -> bool:
    """Whether `word` is the pid of a process of ours (its command line names rtk_policy)."""
    if not word.isdigit():
        return False
    try:
        with open(f"/proc/{word}/cmdline", "rb") as handle:
            return bool(_OURS.search(handle.read().decode("utf-8", "replace")))
    except OSError:
        return False


def kills_guard(argv: list[str]) -> bool:
    """Whether the process-killing command `argv` selects the resident engine."""
    if not argv:
        return False
    program, args = os.path.basename(argv[0]), list(argv[1:])
    if any(_OURS.search(a) for a in args):
        return True
    if program == "kill":
        return any(_our_pid(a) for a in args)
    names, lines = _our_processes()
    flags: set[str] = set()
    operands: list[str] = []
    at = 0
    while at < len(args):
        word = args[at]
        at += 1
        if word.startswith("-") and len(word) > 1 and not operands:
            letters = word.lstrip("-")
            if letters in _PKILL_VALUES or (len(letters) == 1 and letters in _PKILL_VALUES):
                if letters in ("F", "-pidfile") and at < len(args) and guarded_path(args[at]):
                    return True
                at += 1
            elif not letters.isdigit() and not letters.isupper():
                flags.update(letters if not word.startswith("--") else {letters})
            continue
        operands.append(word)
    if program in ("pkill", "pgrep"):
        targets = lines if "f" in flags or "full" in flags else names
        exact, fold = "x" in flags, "i" in flags
        return bool(operands) and _selects(operands[0], targets, exact, fold)
    regex, fold = "r" in flags or "regexp" in flags, "I" in flags or "ignore-case" in flags
    import re

    for name in operands:
        if _selects(name if regex else re.escape(name), names, not regex, fold):
            return True
    return False


_S, _B = "string", "bool"

#: The functions of this module.
FUNCTIONS: tuple[Function, ...] = (
    Function("guarded_path", (_S,), _B, guarded_path),
    Function("guarded_what", (_S,), _S, guarded_what),
    Function("shell_startup_path", (_S,), _B, shell_startup_path),
    Function("shell_startup_what", (_S,), _S, shell_startup_what),
    Function("path_touches", (_S, _S), _B, path_touches),
    Function("kills_guard", ("list<string>",), _B, kills_guard),
)
