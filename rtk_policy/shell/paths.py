"""Where a command's operands land: each operand as a path from the folder the command started in,
after the `cd`s before it in the same command (`Segment.cwd`), `..` resolved.

`$TMPDIR` stands for a temp folder (`/tmp`) and `$HOME` for `~`, so that `$TMPDIR/../etc` lands
in `/etc`. The policies compare these paths with the agent's folder and the project's.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence

#: prefixes spelled by variables, and the path each stands for
_SPELLED = (("${TMPDIR}", "/tmp"), ("$TMPDIR", "/tmp"), ("${HOME}", "~"), ("$HOME", "~"))
UNKNOWN = "?"  #: the folder after a `cd` whose target is not known


def land(operand: str, cwd: str) -> str:
    """Where `operand` lands when the command runs in `cwd` ("" where it started): absolute,
    `~`-based, or relative to the start (`..` first when it leaves it); `?/…` after an unknown
    `cd`."""
    path = operand
    for spelled, meant in _SPELLED:
        if path.startswith(spelled) and path[len(spelled) : len(spelled) + 1] in ("", "/"):
            path = meant + path[len(spelled) :]
            break
    if cwd and not path.startswith(("/", "~")):
        path = f"{cwd}/{path}"
    return _normal(path)


def _normal(path: str) -> str:
    """`posixpath.normpath`, with `~` (or `~user`) kept as the root of what follows it."""
    if path.startswith("~"):
        head, sep, rest = path.partition("/")
        if not sep:
            return head
        tail = posixpath.normpath("/" + rest)
        return head + ("" if tail == "/" else tail)
    return posixpath.normpath(path) if path else path


def operand_paths(args: Sequence[str], cwd: str) -> tuple[str, ...]:
    """Where the operands of a command (its arguments that are not options, every one after `--`)
    land from the folder the command started in."""
    out: list[str] = []
    options = True
    for a in args:
        if options and a == "--":
            options = False
            continue
        if options and a[:1] == "-" and a != "-":
            continue
        if a:
            out.append(a)
    return landed(out, cwd)


def landed(operands: Sequence[str], cwd: str) -> tuple[str, ...]:
    """Where each of these (non-empty) operands lands from the folder the command started in
    (`land`, skipped for an operand it would return unchanged)."""
    if not operands:
        return ()
    if not cwd:  # one look at them all, each between NULs: none holds a mark the loop seeks
        joined = "\0" + "\0".join(operands) + "\0"
        if not (
            "$" in joined
            or "/." in joined
            or "//" in joined
            or "\0./" in joined
            or "/\0" in joined
            or "\0.\0" in joined
        ):
            return tuple(operands)
    out: list[str] = []
    for a in operands:
        if cwd or "$" in a or "/." in a or "//" in a or a[:2] == "./" or a[-1:] == "/" or a == ".":
            a = land(a, cwd)
        out.append(a)
    return tuple(out)


def after_cd(cwd: str, target: str | None) -> str:
    """The folder after `cd TARGET` run in `cwd` (None: `cd` whose target is not known)."""
    if target is not None and target.startswith(("/", "~")):
        return land(target, "")
    if target is None or target == "-" or cwd.startswith(UNKNOWN):
        return UNKNOWN
    return land(target or "~", cwd)
