"""Programs that launch commands given to them in their own grammar: GNU `parallel` (a command and
its `:::` argument lists), the `-I` replacement of `xargs`, `tmux` (`new-session CMD`,
`send-keys KEYS`), `at`/`batch` and `crontab` (a script or crontab lines on stdin), and
`docker|podman run IMAGE CMD`.

Each reader looks at a peeled command's words and says what runs; the walker (`simple.py`)
parses it as nested code.
"""

from __future__ import annotations

from collections.abc import Sequence

from rtk_policy.shell.words import Word, make_word
from rtk_policy.shell.wrapper_options import skip_options
from rtk_policy.util import record
from rtk_policy.util.lazy_re import lazy

#: the most values of an argument list (or lines of a pipe) a runner's command is tried with
MAX_VALUES = 32
#: GNU parallel's separators of argument lists (`::::` lists name files of arguments)
_PARALLEL_LISTS = frozenset({":::", ":::+", "::::", "::::+"})
_PARALLEL_SHORT = "aCdEIjJnNLPsS"
_PARALLEL_LONG = (
    "--jobs", "--sshlogin", "--sshloginfile", "--slf", "--results", "--res", "--arg-file",
    "--delimiter", "--colsep", "--joblog", "--tmpdir", "--workdir", "--wd", "--max-args",
    "--max-replace-args", "--max-lines", "--timeout", "--retries", "--delay", "--env", "--memfree",
    "--load", "--tagstring", "--tag-string", "--basefile", "--bf", "--transferfile", "--tf",
    "--return", "--halt", "--block", "--header", "--profile", "--termseq", "--limit", "--nice",
    "--rpl", "--sqlmaster", "--sqlworker", "--sqlandworker", "--ssh", "--shellquote",
)  # fmt: skip
_PARALLEL_INFO = frozenset({"--version", "--help", "-h", "--citation", "--number-of-cpus",
                            "--number-of-cores", "--number-of-sockets", "--max-line-length-allowed",
                            "--minversion", "--record-env", "--dry-run", "--embed"})  # fmt: skip
#: GNU parallel's replacement strings: {} {.} {/} {//} {/.} {#} {%} and the numbered {1} {2.} …
_PLACEHOLDER = lazy(globals(), "_PLACEHOLDER", r"\{[0-9]*(?:\.|/|//|/\.|#|%)?\}")


@record.frozen(eq=False)
class ParallelJob:
    """What `parallel [options] [COMMAND…] [::: ARGS…]…` runs: `command` (empty when the arguments,
    or stdin's lines, are the commands), the `values` of its literal argument lists, whether some
    arguments are unknown here (`::::` files, stdin), and its replacement string (`-I R`)."""

    command: list[Word]
    values: list[str]
    unknown: bool
    replace: str | None


def parallel_job(words: Sequence[Word]) -> ParallelJob | None:
    """Read a `parallel` command (None for `--version`, `--help`, `--dry-run` …: nothing runs)."""
    n = len(words)
    i = skip_options(words, 1, _PARALLEL_SHORT, _PARALLEL_LONG) or n
    options = [w.value for w in words[1:i]]
    if _PARALLEL_INFO.intersection(options):
        return None
    command_end = next((k for k in range(i, n) if words[k].value in _PARALLEL_LISTS), n)
    command = list(words[i:command_end])
    values: list[str] = []
    unknown = command_end == n  # no argument list: the arguments are stdin's lines
    k = command_end
    while k < n:
        sep = words[k].value
        k += 1
        while k < n and words[k].value not in _PARALLEL_LISTS:
            if sep.startswith("::::") or words[k].dynamic:
                unknown = True
            elif len(values) < MAX_VALUES:
                values.append(words[k].value)
            k += 1
    return ParallelJob(command, values, unknown, replace_option(options))


def has_placeholder(words: Sequence[Word], replace: str | None) -> bool:
    """Whether a runner's command words hold its replacement string (`{}`, or `-I R`'s R)."""
    if replace is not None:
        return any(replace in w.value for w in words)
    return any("{" in w.value and _PLACEHOLDER.search(w.value) for w in words)


def substitute(words: Sequence[Word], value: str, replace: str) -> list[Word]:
    """The command words of `xargs -I R CMD…` with every R made `value`."""
    out: list[Word] = []
    for w in words:
        if replace and replace in w.value:
            new = w.value.replace(replace, value)
            w = w._replace(value=new, raw=new)
        out.append(w)
    return out


def fill(text: str, value: str, replace: str | None) -> str:
    """A command line with its replacement string made `value` (`-I R`'s R, else GNU parallel's
    `{}` family), or `value` added as its last argument when it has none."""
    from shlex import quote  # imported on first use: a cold hook seldom meets a launcher

    quoted = quote(value)
    if replace is not None:
        filled = text.replace(replace, quoted) if replace else text
    else:
        filled = _PLACEHOLDER.sub(lambda _m: quoted, text) if "{" in text else text
    return filled if filled != text else f"{text} {quoted}"


def replace_option(options: Sequence[str]) -> str | None:
    """The replacement string of `xargs`/`parallel` options: `-I R`, `-IR`, `-i[R]`,
    `--replace[=R]`, BSD's `-J R` (None without one)."""
    replace = None
    for k, v in enumerate(options):
        if v in ("-I", "-J") and k + 1 < len(options):  # -J R: BSD/macOS
            replace = options[k + 1]
        elif v.startswith("-I") and len(v) > 2:
            replace = v[2:]
        elif v.startswith("--replace"):
            replace = v.partition("=")[2] or "{}"
        elif v.startswith("-i") and not v.startswith("--"):
            replace = v[2:] or "{}"
    return replace


def echoed_lines(words: Sequence[Word]) -> list[str] | None:
    """The lines `echo WORDS` or `printf FORMAT [ARGS]` writes, when its words are literal (None
    when they are not, or for a form this reader does not know)."""
    if not words or any(w.dynamic for w in words):
        return None
    name, args = words[0].value.rsplit("/", 1)[-1], [w.value for w in words[1:]]
    if name == "echo":
        while args and args[0] in ("-n", "-e", "-E", "-ne", "-en"):
            args = args[1:]
        return _lines(" ".join(args))
    if name == "printf" and args:
        fmt, rest = args[0], args[1:]
        if "%" not in fmt:
            return _lines(fmt)
        if fmt in ("%s\\n", "%s\n") and rest:
            return rest[:MAX_VALUES]
    return None


def _lines(text: str) -> list[str]:
    return [line for line in text.replace("\\n", "\n").split("\n") if line][:MAX_VALUES]


#: tmux commands that run a shell command given as their last operands, with the options of each
#: that take a value (global options come before the command)
_TMUX_RUNS = {
    "new-session": "cDeFfnstxy", "new": "cDeFfnstxy", "new-window": "cDeFnt", "neww": "cDeFnt",
    "split-window": "celFlpt", "splitw": "celFlpt", "respawn-pane": "cet", "respawnp": "cet",
    "respawn-window": "cet", "respawnw": "cet", "run-shell": "dt", "run": "dt",
    "display-popup": "bcdehsSTtwxy", "popup": "bcdehsSTtwxy", "pipe-pane": "t", "pipep": "t",
}  # fmt: skip
_TMUX_SEND = frozenset({"send-keys", "send"})
#: key names send-keys types as a key, not as text
_TMUX_KEYS = lazy(
    globals(),
    "_TMUX_KEYS",
    r"(?:[CMS]-)*(?:Enter|KPEnter|Escape|Tab|BTab|BSpace|Space|Up|Down|Left|Right|Home|End|"
    r"PageUp|PageDown|PgUp|PgDn|PPage|NPage|IC|DC|F[0-9]+|[A-Za-z\[\]\\^_@?])",
)


def tmux_scripts(words: Sequence[Word]) -> list[Word]:
    """The shell commands a `tmux` command runs or types: the global `-c CMD`, the operands of
    `new-session`/`new-window`/`split-window`/`run-shell`/… (joined by spaces, as tmux hands them to
    the shell), and the text `send-keys` types (key names dropped). A dynamic word stays one."""
    at = skip_options(words, 1, "cfLST")
    out: list[Word] = []
    for k in range(1, min(at or 1, len(words)) - 1):
        if words[k].value == "-c":
            out.append(words[k + 1])
    if at is None or at >= len(words):
        return out
    sub = words[at].value
    if sub in _TMUX_RUNS:
        start = skip_options(words, at + 1, _TMUX_RUNS[sub])
        return out + _joined(words[start:] if start is not None else ())
    if sub in _TMUX_SEND:
        start = skip_options(words, at + 1, "Nt")
        literal = any(w.value.startswith("-") and "l" in w.value for w in words[at + 1 : start])
        keys = [
            w for w in words[start or len(words) :] if literal or not _TMUX_KEYS.fullmatch(w.value)
        ]
        return out + _joined(keys)
    return out


def _joined(words: Sequence[Word]) -> list[Word]:
    """Words as the one command text a shell is handed; a dynamic word stands for them all (the
    walker then knows the text is made at run time)."""
    dynamic = [w for w in words if w.dynamic]
    if dynamic or len(words) <= 1:
        return dynamic[:1] or list(words)
    text = " ".join(w.value for w in words)
    return [Word(text, text, words[0].start, words[-1].end, False, False, True)]


def at_reads_stdin(words: Sequence[Word]) -> bool:
    """Whether `at`/`batch` reads its job from stdin (no `-f FILE`, and not `-l`/`-r`/`-c`…)."""
    return not any(w.value.startswith(("-f", "-l", "-r", "-d", "-c", "-V")) for w in words[1:])


_CRON_SCHEDULE = lazy(
    globals(), "_CRON_SCHEDULE", r"[ \t]*(?:@[a-z]+|(?:[^ \t]+[ \t]+){4}[^ \t]+)[ \t]+(.*)"
)
_CRON_ENV = lazy(globals(), "_CRON_ENV", r"[ \t]*[A-Za-z_][A-Za-z0-9_]*[ \t]*=")


def crontab_reads_stdin(words: Sequence[Word]) -> bool:
    """Whether `crontab [-u USER] [-]` installs the crontab it reads from stdin."""
    rest = [w.value for w in words[1:]]
    if "-u" in rest:
        k = rest.index("-u")
        del rest[k : k + 2]
    return rest in ([], ["-"])


def crontab_commands(text: str) -> list[str]:
    """The commands of crontab lines: each line's text after its schedule (`@reboot` or five
    fields); comments and environment settings skipped."""
    out: list[str] = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#") or _CRON_ENV.match(line):
            continue
        m = _CRON_SCHEDULE.match(line)
        if m and m.group(1).strip():
            out.append(m.group(1).replace("%", "\n", 1).split("\n", 1)[0])
    return out


#: `docker run` / `podman run` options that take a value (`--entrypoint` is read apart)
_RUN_SHORT = "acehlmpuvw"
_RUN_LONG = (
    "--attach", "--add-host", "--annotation", "--blkio-weight", "--blkio-weight-device",
    "--cap-add", "--cap-drop", "--cgroup-parent", "--cgroupns", "--cidfile", "--cpu-period",
    "--cpu-quota", "--cpu-rt-period", "--cpu-rt-runtime", "--cpu-shares", "--cpus",
    "--cpuset-cpus", "--cpuset-mems", "--device", "--device-cgroup-rule", "--device-read-bps",
    "--device-read-iops", "--device-write-bps", "--device-write-iops", "--dns", "--dns-option",
    "--dns-search", "--domainname", "--env", "--env-file", "--entrypoint", "--expose", "--gpus",
    "--group-add", "--health-cmd", "--health-interval", "--health-retries",
    "--health-start-period", "--health-timeout", "--hostname", "--ip", "--ip6", "--ipc",
    "--isolation", "--kernel-memory", "--label", "--label-file", "--link", "--link-local-ip",
    "--log-driver", "--log-opt", "--mac-address", "--memory", "--memory-reservation",
    "--memory-swap", "--memory-swappiness", "--mount", "--name", "--network", "--net",
    "--network-alias", "--oom-score-adj", "--pid", "--pids-limit", "--platform", "--publish",
    "--pull", "--restart", "--runtime", "--security-opt", "--shm-size", "--stop-signal",
    "--stop-timeout", "--storage-opt", "--sysctl", "--tmpfs", "--ulimit", "--user", "--userns",
    "--uts", "--volume", "--volume-driver", "--volumes-from", "--workdir", "--detach-keys",
    "--arch", "--os", "--pod", "--secret", "--systemd", "--timezone", "--umask", "--variant",
)  # fmt: skip
_DOCKER_GLOBAL = ("-H", "--host", "--context", "-c", "--config", "-l", "--log-level")
CONTAINER_CLIS = frozenset({"docker", "podman", "nerdctl"})


def container_run_command(words: Sequence[Word]) -> list[Word]:
    """The command `docker|podman|nerdctl [global options] [container] run [options] IMAGE
    [CMD…]` runs in the container, its `--entrypoint` first; empty when the image's own command
    runs or the words are another subcommand."""
    at = skip_options(words, 1, "Hcl", _DOCKER_GLOBAL)
    if at is not None and at < len(words) and words[at].value == "container":
        at += 1
    if at is None or at >= len(words) or words[at].value != "run":
        return []
    n = len(words)
    i = skip_options(words, at + 1, _RUN_SHORT, _RUN_LONG) or n
    entry: Word | None = None
    for k in range(at + 1, i):
        v = words[k].value
        if v == "--entrypoint" and k + 1 < i:
            entry = words[k + 1]
        elif v.startswith("--entrypoint="):
            raw = words[k].raw.partition("=")[2]
            entry = make_word(raw, words[k].end - len(raw))
    rest = list(words[i + 1 :]) if i < n else []  # after the IMAGE
    if entry is not None and entry.value:
        return [entry, *rest]
    return rest
