"""Peeling wrapper programs (sudo, env, timeout, nice, ...) off a simple command.

Security first: every wrapper we know is peeled so that policies see the program that really runs,
whatever the spelling (full path, quotes). Separately, `Peel.refused` records why RTK's walker would
not rewrite the command (reference §3.5 step 2–4), for `Segment.rewritable`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from rtk_policy.shell.words import Word, assignment_name, basename, split_assignment

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


@attrs.define
class Peel:
    """The result of peeling: where the program word is and what was peeled before it."""

    program_index: int = 0  #: index of the program word in the word list (len(words) when none)
    env: list[tuple[str, str]] = attrs.Factory(list)
    wrappers: list[str] = attrs.Factory(list)
    refused: str = ""  #: why RTK's walker would not rewrite this command ("" when it would)
    inner_refused: str = ""  #: why RTK would not rewrite inside a `uv run` (it still may route it)
    split_string: Word | None = None  #: the script of `env -S '...'`, parsed like bash -c


Handler = Callable[[Sequence[Word], int, Peel], "int | None"]


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
    i = _assignments(words, 0, p, shell=True)
    layers, last = 0, ""
    while i < len(words):
        tp = _match_transparent(words, i, transparent)
        if tp:
            p.wrappers.append(" ".join(w.value for w in words[i : i + tp]))
            i, layers, last = i + tp, layers + 1, "transparent"
            i = _assignments(words, i, p, shell=False)  # `sudo A=1 git status`
            continue
        w = words[i]
        if w.dynamic or w.glob:
            _refuse(p, "glob or expansion head")
            break
        if last in _NO_ASSIGNMENT_AFTER and assignment_name(w.raw):
            if last == "uv run":  # RTK still routes the whole command to `rtk uv run`
                p.inner_refused = p.inner_refused or "assignment after uv run"
            else:
                _refuse(p, f"assignment after {last}")
            i = _assignments(words, i, p, shell=False)
            continue
        name = basename(w.value)
        if name == "uv":
            name = "uv run" if i + 1 < len(words) and words[i + 1].value == "run" else ""
        handler = _HANDLERS.get(name)
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
            _refuse(p, "quoted wrapper head")
        j = handler(words, i, p)
        if j is None or j >= len(words):
            break
        if "/" in w.value and name not in _PATH_OK:
            _refuse(p, "path-spelled wrapper")
        if name == "sudo":
            _refuse(p, "sudo")
        elif name not in RTK_WRAPPERS:
            _refuse(p, f"{name} is not an RTK wrapper")
        if name != "rtk" and words[j].value == "rtk":
            _refuse(p, "wrapper operand is rtk")
        p.wrappers.append(name)
        i, layers, last = j, layers + 1, "reserved time" if reserved else name
    if layers > MAX_PREFIX_DEPTH:
        _refuse(p, "wrapper chain deeper than 10")
    p.program_index = i
    return p


def _refuse(p: Peel, reason: str) -> None:
    """Record the first reason RTK would not rewrite."""
    if not p.refused:
        p.refused = reason


def _assignments(words: Sequence[Word], i: int, p: Peel, *, shell: bool) -> int:
    """Consume NAME=value words into `p.env`; flag RTK_DISABLED (shell: also +=)."""
    while i < len(words):
        name = assignment_name(words[i].raw)
        if name is None:
            break
        if name == "RTK_DISABLED" or (shell and name == "RTK_DISABLED+"):
            _refuse(p, "RTK_DISABLED assignment")
        p.env.append(split_assignment(words[i].value))
        i += 1
    return i


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
        _refuse(p, "reserved time with an option it does not take")


def _options(
    words: Sequence[Word],
    i: int,
    with_arg: str = "",
    long_with_arg: tuple[str, ...] = (),
    stop: str = "",
) -> int | None:
    """Skip options from words[i]: short letters in `with_arg` take a value; `stop` letters abort.

    Returns the index after the options (and after a "--"), or None when a `stop` option is seen.
    """
    n = len(words)
    while i < n:
        v = words[i].value
        if v == "--":
            return i + 1
        if not v.startswith("-") or v == "-":
            return i
        if v.startswith("--"):
            key = v.split("=", 1)[0]
            i += 2 if ("=" not in v and key in long_with_arg) else 1
            continue
        for k, ch in enumerate(v[1:], start=1):
            if ch in stop:
                return None
            if ch in with_arg:
                i += 1 if k + 1 < len(v) else 2
                break
        else:
            i += 1
    return i


def _h_sudo(words: Sequence[Word], i: int, p: Peel) -> int | None:
    long_arg = (
        "--user",
        "--group",
        "--host",
        "--prompt",
        "--close-from",
        "--chdir",
        "--role",
        "--type",
        "--command-timeout",
        "--other-user",
        "--chroot",
    )
    j = _options(words, i + 1, "ughpCDrtTUR", long_arg, stop="lveKV")
    if j is None:
        return None
    return _assignments(words, j, p, shell=False)


def _h_doas(words: Sequence[Word], i: int, p: Peel) -> int | None:
    return _options(words, i + 1, "u", stop="C")


def _h_env(words: Sequence[Word], i: int, p: Peel) -> int | None:
    j, n = i + 1, len(words)
    while j < n:
        v = words[j].value
        if v == "--":
            j += 1
            break
        if v == "-":
            j += 1
            continue
        if v in ("-S", "--split-string") or v.startswith(("--split-string=", "-S")):
            script = words[j + 1] if v in ("-S", "--split-string") and j + 1 < n else words[j]
            p.split_string = script
            return None
        if not v.startswith("-"):
            break
        takes = v in ("-u", "-C", "-P", "--unset", "--chdir")
        j += 2 if takes else 1
    return _assignments(words, j, p, shell=False)


def _h_timeout(words: Sequence[Word], i: int, p: Peel) -> int | None:
    j, n = i + 1, len(words)
    while j < n:
        v = words[j].value
        if v == "--":
            j += 1
            break
        if not v.startswith("-") or v == "-":
            break
        if v.startswith("--"):
            key = v.split("=", 1)[0]
            if key not in (
                "--signal",
                "--kill-after",
                "--preserve-status",
                "--foreground",
                "--verbose",
            ):
                _refuse(p, "unknown timeout option")
            j += 2 if ("=" not in v and key in ("--signal", "--kill-after")) else 1
            continue
        body = v[1:]
        k = next((m for m, ch in enumerate(body) if ch in "sk"), -1)
        if any(ch not in "pfvsk" for ch in body[: k if k >= 0 else len(body)]):
            _refuse(p, "unknown timeout option")
        j += 2 if k == len(body) - 1 else 1
    return j + 1  # the DURATION


def _h_nice(words: Sequence[Word], i: int, p: Peel) -> int | None:
    j, n = i + 1, len(words)
    while j < n:
        v = words[j].value
        if v == "--":
            return j + 1
        if v == "-n" or v == "--adjustment":
            j += 2
        elif v.startswith(("-n", "--adjustment=")) or (
            v[:1] == "-" and v[1:].lstrip("-").isdigit()
        ):
            j += 1
        elif v.startswith("-"):
            _refuse(p, "unknown nice option")
            j += 1
        else:
            break
    return j


def _h_plain(words: Sequence[Word], i: int, p: Peel) -> int | None:
    return _options(words, i + 1)


def _h_command(words: Sequence[Word], i: int, p: Peel) -> int | None:
    return _options(words, i + 1, stop="vV")


def _h_exec(words: Sequence[Word], i: int, p: Peel) -> int | None:
    return _options(words, i + 1, "a")


def _h_time(words: Sequence[Word], i: int, p: Peel) -> int | None:
    return _options(words, i + 1, "fo", ("--format", "--output"))


def _h_stdbuf(words: Sequence[Word], i: int, p: Peel) -> int | None:
    return _options(words, i + 1, "ioe", ("--input", "--output", "--error"))


def _h_ionice(words: Sequence[Word], i: int, p: Peel) -> int | None:
    return _options(words, i + 1, "cn", ("--class", "--classdata"), stop="pP")


def _h_chrt(words: Sequence[Word], i: int, p: Peel) -> int | None:
    j = _options(
        words, i + 1, "TPD", ("--sched-runtime", "--sched-period", "--sched-deadline"), "p"
    )
    if j is not None and j < len(words) and words[j].value.isdigit():
        j += 1
    return j


def _h_taskset(words: Sequence[Word], i: int, p: Peel) -> int | None:
    j = _options(words, i + 1, stop="p")
    return None if j is None else j + 1  # the mask or cpu list


def _h_caffeinate(words: Sequence[Word], i: int, p: Peel) -> int | None:
    return _options(words, i + 1, "tw")


def _h_busybox(words: Sequence[Word], i: int, p: Peel) -> int | None:
    return None if i + 1 < len(words) and words[i + 1].value.startswith("-") else i + 1


def _h_chroot(words: Sequence[Word], i: int, p: Peel) -> int | None:
    j = _options(words, i + 1, "", ("--userspec", "--groups"))
    return None if j is None else j + 1  # NEWROOT


def _h_fakeroot(words: Sequence[Word], i: int, p: Peel) -> int | None:
    return _options(words, i + 1, "lsi", ("--lib", "--faked"))


def _h_uv_run(words: Sequence[Word], i: int, p: Peel) -> int | None:
    long_arg = (
        "--with",
        "--with-requirements",
        "--with-editable",
        "--python",
        "--directory",
        "--project",
        "--package",
        "--extra",
        "--group",
        "--env-file",
        "--index",
        "--index-url",
        "--extra-index-url",
        "--only-group",
        "--no-group",
        "--config-file",
    )
    return _options(words, i + 2, "pw", long_arg)


_HANDLERS: dict[str, Handler] = {
    "sudo": _h_sudo,
    "doas": _h_doas,
    "env": _h_env,
    "timeout": _h_timeout,
    "nice": _h_nice,
    "nohup": _h_plain,
    "command": _h_command,
    "builtin": _h_plain,
    "exec": _h_exec,
    "time": _h_time,
    "stdbuf": _h_stdbuf,
    "noglob": _h_plain,
    "nocorrect": _h_plain,
    "ionice": _h_ionice,
    "chrt": _h_chrt,
    "taskset": _h_taskset,
    "setsid": _h_plain,
    "unbuffer": _h_plain,
    "caffeinate": _h_caffeinate,
    "rtk": _h_plain,
    "uv run": _h_uv_run,
    "coproc": _h_plain,
    "busybox": _h_busybox,
    "chroot": _h_chroot,
    "fakeroot": _h_fakeroot,
}
