"""Peeling wrapper programs (sudo, env, timeout, nice, ...) off a simple command.

Security first: every wrapper we know is peeled so that policies see the program that really runs,
whatever the spelling (full path, quotes). Separately, `Peel.refused` records why RTK's walker would
not rewrite the command (reference §3.5 step 2–4), for `Segment.rewritable`.
"""

from __future__ import annotations

from collections.abc import Sequence

from rtk_policy.shell.words import (
    SPELT_OTHERWISE,
    Word,
    assignment_name,
    basename,
    program_name,
)
from rtk_policy.shell.wrapper_options import HANDLERS, Peel, assignments, refuse

__all__ = ["MAX_PREFIX_DEPTH", "RTK_WRAPPERS", "Peel", "peel", "prefix_words"]

#: Wrappers RTK itself peels (others are peeled for security but make the command non-rewritable).
RTK_WRAPPERS = frozenset(
    {
        "env",
        "noglob",
        "command",
        "builtin",
        "exec",
        "nocorrect",
        "timeout",
        "nice",
        "nohup",
        "time",
        "uv run",
        "rtk",
    }
)
#: Wrappers after which an assignment word is the program name for bash (RTK refuses).
_NO_ASSIGNMENT_AFTER = frozenset({"timeout", "nice", "exec", "uv run", "noglob"})
#: Path spellings RTK accepts for a wrapper head (§3.5: `/usr/bin/timeout`; GNU time by path).
_PATH_OK = frozenset({"timeout", "time"})
MAX_PREFIX_DEPTH = 10
#: Program names `peel` looks at further ("uv" may be "uv run").
_PEELABLE = frozenset(HANDLERS) | {"uv"}


def peel(
    words: Sequence[Word],
    transparent: Sequence[tuple[str, ...]] = (),
    *,
    pipeline_start: bool = True,
) -> Peel:
    """Peel leading assignments and wrappers off `words` (no redirects); never raises.

    `transparent` holds the user's transparent prefixes as word tuples, longest first.
    """
    p = Peel()
    if words and not transparent:
        w = words[0]
        if not (w.dynamic or w.glob or "=" in w.raw):
            name = program_name(w.value)
            if name not in _PEELABLE:
                p.program = name
                return p  # the common case: the first word is a program that wraps nothing
    i = assignments(words, 0, p, shell=True) if words and "=" in words[0].raw else 0
    layers, last = 0, ""
    while i < len(words):
        tp = _match_transparent(words, i, transparent) if transparent else 0
        if tp:
            p.wrappers.append(" ".join(w.value for w in words[i : i + tp]))
            i, layers, last = i + tp, layers + 1, "transparent"
            i = assignments(words, i, p, shell=False)  # `sudo A=1 git status`
            continue
        w = words[i]
        if w.dynamic or w.glob:
            refuse(p, "glob or expansion head")
            break
        if last in ("reserved time", "bare time") and assignment_name(w.raw):
            # `time FOO=1 rm -rf /`; also where the walker cannot tell the reserved word from GNU
            # time (a loop body in a pipeline stage): the command that may run is the one judged
            i = assignments(words, i, p, shell=True)
            continue
        if last in _NO_ASSIGNMENT_AFTER and assignment_name(w.raw):
            if last == "uv run":  # RTK still routes the whole command to `rtk uv run`
                p.inner_refused = p.inner_refused or "assignment after uv run"
            else:
                refuse(p, f"assignment after {last}")
            i = assignments(words, i, p, shell=False)
            continue
        name = program_name(w.value)
        if name != basename(w.value):
            refuse(p, SPELT_OTHERWISE)  # `SUDO git status`: RTK does not know this wrapper
        if name == "uv":
            name = "uv run" if i + 1 < len(words) and words[i + 1].value == "run" else ""
        handler = HANDLERS.get(name)
        if handler is None:
            break
        reserved = (
            name == "time"
            and "/" not in w.value
            and ((pipeline_start and i == 0) or last == "reserved time")
        )
        if reserved:
            _reserved_time_check(words, i, p)
        elif name and w.quoted:
            refuse(p, "quoted wrapper head")
        j = handler(words, i, p)
        if j is None or j >= len(words):
            break
        if "/" in w.value and name not in _PATH_OK:
            refuse(p, "path-spelled wrapper")
        if name == "sudo":
            refuse(p, "sudo")
        elif name not in RTK_WRAPPERS:
            refuse(p, f"{name} is not an RTK wrapper")
        if name != "rtk" and words[j].value == "rtk":
            refuse(p, "wrapper operand is rtk")
        p.wrappers.append(name)
        last = "reserved time" if reserved else "bare time" if name == "time" == w.raw else name
        i, layers = j, layers + 1
    if layers > MAX_PREFIX_DEPTH:
        refuse(p, "wrapper chain deeper than 10")
    p.program_index = i
    p.program = program_name(words[i].value) if i < len(words) else ""
    return p


def prefix_words(prefixes: Sequence[str]) -> tuple[tuple[str, ...], ...]:
    """User transparent prefixes as word tuples, de-duplicated, longest first."""
    if not prefixes:
        return ()
    out = {
        tuple(p.split())
        for p in prefixes
        if isinstance(p, str) and p.split() and p.split()[0] not in _RESERVED_HEADS
    }
    return tuple(sorted(out, key=lambda w: (-len(w), w)))


#: a user prefix may not start with a reserved word the walk steps over (`time -v`, `then x`, §3.5)
_RESERVED_HEADS = frozenset({"!", "time", "then", "do", "else", "elif", "if", "while", "until"})


def _match_transparent(words: Sequence[Word], i: int, prefixes: Sequence[tuple[str, ...]]) -> int:
    """Return how many words a transparent prefix covers at `i` (0 when none matches)."""
    for pre in prefixes:
        k = len(pre)
        if k and i + k < len(words) and all(words[i + m].raw == pre[m] for m in range(k)):
            if all(words[i + m + 1].start - words[i + m].end == 1 for m in range(k - 1)):
                return k  # word-exact: `myjail  run` (two blanks) is not `myjail run`
    return 0


def _reserved_time_check(words: Sequence[Word], i: int, p: Peel) -> None:
    """Reserved `time` takes an optional -p then an optional --; bash runs any other "-x"."""
    j, n = i + 1, len(words)
    if j < n and words[j].raw == "-p":
        j += 1
    if j < n and words[j].raw == "--":
        j += 1
    if j < n and words[j].value.startswith("-"):
        refuse(p, "reserved time with an option it does not take")
