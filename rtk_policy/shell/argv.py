"""Reading a peeled command's arguments: its subcommand and its flags."""

from __future__ import annotations

from collections.abc import Sequence

_GIT_GLOBAL_WITH_ARG = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace"})


def subcommand(program: str, args: Sequence[str]) -> str:
    """Return the first argument that is not an option (git: after its global options)."""
    i, n = 0, len(args)
    while i < n:
        a = args[i]
        if program == "git" and a in _GIT_GLOBAL_WITH_ARG:
            i += 2
            continue
        if a.startswith("-") and a != "-":
            if a == "--":
                return args[i + 1] if i + 1 < n else ""
            i += 1
            continue
        return a
    return ""


def flags(args: Sequence[str]) -> tuple[str, ...]:
    """Return the arguments that start with "-" (not "-" itself), up to a "--"."""
    if "--" in args:
        args = args[: args.index("--")]
    out: list[str] = []
    for a in args:
        if a[:1] == "-" and a != "-":
            out.append(a)
    return tuple(out)
