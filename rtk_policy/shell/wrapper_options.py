"""Option grammars of the wrapper programs: how many words `sudo -u root`, `timeout -k 5 10`, ...

Each handler gets the command's words and the wrapper's index and returns the index of the wrapped
command (None when the form does not wrap a command, e.g. `command -v`, `sudo -l`). Handlers record
in `Peel.refused` the forms RTK's walker would not rewrite (unknown `timeout`/`nice` options, ...).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rtk_policy.shell.words import Word, assignment_name, make_word, split_assignment
from rtk_policy.util import record
from rtk_policy.util.lazy_import import lazy_function

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rtk_policy.shell.env_split import env_command
else:  # on first use: only `env -S` needs it
    env_command = lazy_function(globals(), "env_command", "rtk_policy.shell.env_split")


@record.mutable(compile_after=record.PER_COMMAND)
class Peel:
    """The result of peeling: where the program word is and what was peeled before it."""

    program_index: int = 0  #: index of the program word in the word list (len(words) when none)
    env: list[tuple[str, str]] = record.Factory(list)
    wrappers: list[str] = record.Factory(list)
    refused: str = ""  #: why RTK's walker would not rewrite this command ("" when it would)
    inner_refused: str = ""  #: why RTK would not rewrite inside a `uv run` (it still may route it)
    #: what `env -S STRING …` runs (`env_split.env_command`), parsed like bash -c
    split_string: Word | None = None
    #: the program word's name as the packs name programs (`words.program_name`; "" when none),
    #: found once here for every reader of the command (the walker, `draft.to_segment`)
    program: str = ""


Handler = Callable[[Sequence[Word], int, Peel], "int | None"]


def refuse(p: Peel, reason: str) -> None:
    """Record the first reason RTK would not rewrite."""
    if not p.refused:
        p.refused = reason


def assignments(words: Sequence[Word], i: int, p: Peel, *, shell: bool) -> int:
    """Consume NAME=value words into `p.env`; flag RTK_DISABLED (shell: also +=)."""
    while i < len(words):
        name = assignment_name(words[i].raw)
        if name is None:
            break
        if name == "RTK_DISABLED" or (shell and name == "RTK_DISABLED+"):
            refuse(p, "RTK_DISABLED assignment")
        p.env.append(split_assignment(words[i].value))
        i += 1
    return i


def skip_options(
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
    j = skip_options(words, i + 1, "ughpCDrtTUR", long_arg, stop="lveKV")
    if j is None:
        return None
    return assignments(words, j, p, shell=False)


def _h_doas(words: Sequence[Word], i: int, p: Peel) -> int | None:
    return skip_options(words, i + 1, "u", stop="C")


def _walk_options(words: Sequence[Word], i: int, p: Peel, step: Handler) -> int | None:
    """Walk the option words from `i` with `step` until a "--" (skipped) or the end of the words.

    `step(words, j, p)` returns the index of the next word, `j` itself where the options end, or
    None when the form does not wrap a command; the walk returns the same.
    """
    n = len(words)
    while i < n:
        if words[i].value == "--":
            return i + 1
        j = step(words, i, p)
        if j is None or j == i:
            return j
        i = j
    return i


def _env_option(words: Sequence[Word], j: int, p: Peel) -> int | None:
    """One `env` option: `-` and flags are skipped, `-u`/`-C`/`-P` take a value, `-S` ends the walk
    (its script is parsed like bash -c)."""
    v = words[j].value
    if v == "-":
        return j + 1
    if v in ("-S", "--split-string") or v.startswith(("--split-string=", "-S")):
        if v in ("-S", "--split-string"):
            if j + 1 >= len(words):
                return None  # env refuses an -S without its string
            string, rest = words[j + 1], j + 2
        else:  # glued: `-S'rm -rf /'`, `--split-string=…`
            raw = words[j].raw
            cut = raw.index("=") + 1 if v.startswith("--") else raw.index("S") + 1
            string, rest = make_word(raw[cut:], words[j].start + cut), j + 1
        p.split_string = env_command(string, words[rest:])
        return None
    if not v.startswith("-"):
        return j
    return j + (2 if v in ("-u", "-C", "-P", "--unset", "--chdir") else 1)


def _h_env(words: Sequence[Word], i: int, p: Peel) -> int | None:
    j = _walk_options(words, i + 1, p, _env_option)
    return None if j is None else assignments(words, j, p, shell=False)


_TIMEOUT_LONG = ("--signal", "--kill-after", "--preserve-status", "--foreground", "--verbose")


def _timeout_option(words: Sequence[Word], j: int, p: Peel) -> int | None:
    """One `timeout` option (`-s`/`-k`, `--signal`/`--kill-after` take a value); others refuse."""
    v = words[j].value
    if not v.startswith("-") or v == "-":
        return j
    if v.startswith("--"):
        key = v.split("=", 1)[0]
        if key not in _TIMEOUT_LONG:
            refuse(p, "unknown timeout option")
        return j + (2 if ("=" not in v and key in ("--signal", "--kill-after")) else 1)
    body = v[1:]
    k = next((m for m, ch in enumerate(body) if ch in "sk"), -1)
    if any(ch not in "pfvsk" for ch in body[: k if k >= 0 else len(body)]):
        refuse(p, "unknown timeout option")
    return j + (2 if k == len(body) - 1 else 1)


def _h_timeout(words: Sequence[Word], i: int, p: Peel) -> int | None:
    j = _walk_options(words, i + 1, p, _timeout_option)
    if j is not None and j < len(words) and words[j].value == "rtk":
        refuse(p, "wrapper operand rtk")  # `timeout rtk cargo test` (§3.5 step 4)
    return None if j is None else j + 1  # the DURATION


def _nice_option(words: Sequence[Word], j: int, p: Peel) -> int | None:
    """One `nice` option: `-n N`, `-nN`, `--adjustment[=N]`, `-N`; any other refuses."""
    v = words[j].value
    if v == "-n" or v == "--adjustment":
        return j + 2
    if v.startswith(("-n", "--adjustment=")) or (v[:1] == "-" and v[1:].lstrip("-").isdigit()):
        return j + 1
    if v.startswith("-"):
        refuse(p, "unknown nice option")
        return j + 1
    return j


def _h_nice(words: Sequence[Word], i: int, p: Peel) -> int | None:
    return _walk_options(words, i + 1, p, _nice_option)


def _h_plain(words: Sequence[Word], i: int, p: Peel) -> int | None:
    return skip_options(words, i + 1)


def _h_rtk(words: Sequence[Word], i: int, p: Peel) -> int | None:
    """`rtk [options] CMD…`; `rtk proxy CMD…` runs CMD too (RTK's walker does not rewrite it)."""
    j = skip_options(words, i + 1)
    if j is not None and j + 1 < len(words) and words[j].value == "proxy":
        refuse(p, "rtk proxy")
        return j + 1
    return j


def _h_arch(words: Sequence[Word], i: int, p: Peel) -> int | None:
    """macOS `arch [-x86_64|-arm64|-arch NAME…] [-c] [-d NAME] [-e NAME=VALUE] CMD…`."""
    j = i + 1
    while j < len(words) and words[j].value.startswith("-"):
        j += 2 if words[j].value in ("-arch", "-d", "-e") else 1
    return j


_RUNUSER_WITH_VALUE = frozenset(
    {"-g", "-G", "-s", "-w", "--group", "--supp-group", "--shell", "--whitelist-environment"}
)


def _h_runuser(words: Sequence[Word], i: int, p: Peel) -> int | None:
    """`runuser [options] -u USER [--] CMD…`; None for the other forms (a login shell, or
    `-c CMD`, whose string is walked as a `-c` runner's, `nested.DASH_C_RUNNERS`)."""
    j, user = i + 1, False
    while j < len(words) and words[j].value.startswith("-"):
        v = words[j].value
        if v == "--":
            j += 1
            break
        if v in ("-c", "--command", "--session-command") or v.startswith("--command="):
            return None
        user = user or v in ("-u", "--user") or v.startswith("--user=")
        j += 2 if v in ("-u", "--user") or v in _RUNUSER_WITH_VALUE else 1
    return j if user else None


def _h_command(words: Sequence[Word], i: int, p: Peel) -> int | None:
    return skip_options(words, i + 1, stop="vV")


def _h_exec(words: Sequence[Word], i: int, p: Peel) -> int | None:
    return skip_options(words, i + 1, "a")


def _h_time(words: Sequence[Word], i: int, p: Peel) -> int | None:
    return skip_options(words, i + 1, "fo", ("--format", "--output"))


def _h_stdbuf(words: Sequence[Word], i: int, p: Peel) -> int | None:
    return skip_options(words, i + 1, "ioe", ("--input", "--output", "--error"))


def _h_ionice(words: Sequence[Word], i: int, p: Peel) -> int | None:
    return skip_options(words, i + 1, "cn", ("--class", "--classdata"), stop="pP")


def _h_chrt(words: Sequence[Word], i: int, p: Peel) -> int | None:
    j = skip_options(
        words, i + 1, "TPD", ("--sched-runtime", "--sched-period", "--sched-deadline"), "p"
    )
    if j is not None and j < len(words) and words[j].value.isdigit():
        j += 1
    return j


def _h_taskset(words: Sequence[Word], i: int, p: Peel) -> int | None:
    j = skip_options(words, i + 1, stop="p")
    return None if j is None else j + 1  # the mask or cpu list


def _h_caffeinate(words: Sequence[Word], i: int, p: Peel) -> int | None:
    return skip_options(words, i + 1, "tw")


def _h_busybox(words: Sequence[Word], i: int, p: Peel) -> int | None:
    return None if i + 1 < len(words) and words[i + 1].value.startswith("-") else i + 1


def _h_chroot(words: Sequence[Word], i: int, p: Peel) -> int | None:
    j = skip_options(words, i + 1, "", ("--userspec", "--groups"))
    return None if j is None else j + 1  # NEWROOT


def _h_fakeroot(words: Sequence[Word], i: int, p: Peel) -> int | None:
    return skip_options(words, i + 1, "lsi", ("--lib", "--faked"))


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
    return skip_options(words, i + 2, "pw", long_arg)


def _h_pkexec(words: Sequence[Word], i: int, p: Peel) -> int | None:
    return skip_options(words, i + 1, "", ("--user",))


_SYSTEMD_RUN_LONG = (
    "--unit", "--property", "--description", "--slice", "--setenv", "--uid", "--gid", "--machine",
    "--host", "--working-directory", "--nice", "--service-type", "--on-active", "--on-boot",
    "--on-startup", "--on-unit-active", "--on-unit-inactive", "--on-calendar", "--timer-property",
    "--path-property", "--socket-property", "--capsule",
)  # fmt: skip


def _h_systemd_run(words: Sequence[Word], i: int, p: Peel) -> int | None:
    return skip_options(words, i + 1, "upEMHC", _SYSTEMD_RUN_LONG)


def _h_flock(words: Sequence[Word], i: int, p: Peel) -> int | None:
    """`flock [options] FILE COMMAND…`; None for `flock … -c SCRIPT` (its script is walked as a
    `-c` runner's, `nested.DASH_C_RUNNERS`) and for `flock FD` (runs nothing)."""
    j = i + 1
    while j < len(words) and words[j].value.startswith("-") and words[j].value != "-":
        v = words[j].value
        if v == "--":
            j += 1
            break
        if v in ("-c", "--command"):
            return None
        j += 2 if v in ("-w", "--timeout", "-E", "--conflict-exit-code") else 1
    if j + 1 < len(words) and words[j + 1].value in ("-c", "--command"):
        return None
    return j + 1  # the FILE


def _short_args(with_arg: str, long_with_arg: tuple[str, ...] = ()) -> Handler:
    """A handler for a program that runs its operands as a command after options, `with_arg` and
    `long_with_arg` naming the options that take a separate value."""

    def handler(words: Sequence[Word], i: int, p: Peel) -> int | None:
        return skip_options(words, i + 1, with_arg, long_with_arg)

    return handler


def _h_gdb(words: Sequence[Word], i: int, p: Peel) -> int | None:
    """`gdb … --args PROGRAM ARGS…` runs PROGRAM (without --args gdb runs no command line)."""
    for j in range(i + 1, len(words)):
        if words[j].value == "--args":
            return j + 1
    return None


#: Tracing, sandboxing and resource-limiting programs that run their operands as a command: peeled
#: for security only (RTK never rewrites behind them), each with the options that take a value.
_RUNNERS: dict[str, Handler] = {
    "strace": _short_args("abeEIoOpPsSuX"),
    "ltrace": _short_args("aADeFlnopsuwx"),
    "valgrind": _short_args(""),
    "xvfb-run": _short_args(
        "efnpsw", ("--error-file", "--auth-file", "--server-num", "--server-args")
    ),
    "dbus-run-session": _short_args("", ("--config-file", "--dbus-daemon")),
    "torsocks": _short_args("upaP"),
    "firejail": _short_args(""),
    "unshare": _short_args("S", ("--propagation", "--setgroups", "--map-user", "--map-group")),
    "setpriv": _short_args(""),
    "nsenter": _short_args("tSG"),
    "numactl": _short_args("NmCpi"),
    "cpulimit": _short_args("lpe"),
    "trickle": _short_args("duwtln"),
    "proxychains": _short_args("f"),
    "proxychains4": _short_args("f"),
    "gdb": _h_gdb,
}


HANDLERS: dict[str, Handler] = {
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
    "rtk": _h_rtk,
    "arch": _h_arch,
    "runuser": _h_runuser,
    "uv run": _h_uv_run,
    "coproc": _h_plain,
    "busybox": _h_busybox,
    "chroot": _h_chroot,
    "fakeroot": _h_fakeroot,
    "pkexec": _h_pkexec,
    "systemd-run": _h_systemd_run,
    "flock": _h_flock,
    **_RUNNERS,
}
