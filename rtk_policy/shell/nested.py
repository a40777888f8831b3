"""Code that a simple command runs itself: `bash -c SCRIPT`, `eval ...`, `trap ACTION`, `xargs CMD`,
`find -exec CMD ;`, and the command of a tool runner (`poetry run CMD`, `bundle exec CMD`,
`direnv exec DIR CMD`, `mise exec -- CMD`, ...).

Each helper looks at a peeled command's words and says where the nested code is; the walker in
`parser.py` parses it recursively.
"""

from __future__ import annotations

from collections.abc import Sequence

from rtk_policy.shell.model import Redirect
from rtk_policy.shell.words import Word, make_word
from rtk_policy.shell.wrapper_options import skip_options

SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "yash", "busybox", "fish"})
_SHELL_OPT_WITH_ARG = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
_XARGS_WITH_ARG = "aEdIiLlnPs"
_XARGS_OPTIONAL_ARG = "eil"  # -e[EOF] -i[REPL] -l[N]: the value must be glued
_XARGS_LONG_WITH_ARG = (  # --eof[=E], --replace[=R], --max-lines[=N] take a value only glued
    "--arg-file",
    "--delimiter",
    "--max-args",
    "--max-procs",
    "--max-chars",
    "--process-slot-var",
)
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


#: the files that are a process's stdin (`bash /dev/stdin <<< …` reads its script there)
STDIN_FILES = ("/dev/stdin", "/proc/self/fd/0", "/dev/fd/0")


def shell_script(words: Sequence[Word]) -> tuple[Word | None, Word | None]:
    """For `bash [opts] -c SCRIPT`, return (SCRIPT word, SCRIPT word); (None, operand) otherwise.

    `words` starts at the shell's program word. The second value is the first operand, a script
    file when there is no `-c` (None when there is none: then the shell reads its script on stdin;
    with one, a here-string is data, not the script).
    """
    if words and words[0].value.rsplit("/", 1)[-1] == "busybox":
        words = words[1:]
    has_c = False
    i, n = 1, len(words)
    while i < n:
        v = words[i].value
        if v == "--":
            i += 1
            break
        if v in _SHELL_OPT_WITH_ARG:
            i += 2
            continue
        if v == "--command" and i + 1 < n:  # fish
            return words[i + 1], words[i + 1]
        if v.startswith("--command="):
            _, _, raw = words[i].raw.partition("=")
            script = make_word(raw, words[i].end - len(raw))
            return script, script
        if v.startswith("--"):
            i += 1
            continue
        if len(v) > 1 and v[0] in "-+":
            if v[0] == "-" and "c" in v[1:]:
                has_c = True
            i += 1
            continue
        break
    if i < n:
        return (words[i] if has_c else None), words[i]
    return None, None


def here_input(redirects: Sequence[Redirect], bodies: Sequence[str]) -> str | None:
    """Return the text fed on stdin by a here-string or heredoc, if any."""
    for r in redirects:
        if r.op == "<<<":
            return r.target
    return bodies[0] if bodies else None


def eval_script(args: Sequence[Word]) -> tuple[str | None, bool]:
    """For `eval ARGS`: (joined literal script, False), or (None, True) for a dynamic argument."""
    if any(a.dynamic for a in args):
        return None, True
    if not args:
        return None, False
    return " ".join(a.value for a in args), False


def trap_action(args: Sequence[Word]) -> Word | None:
    """For `trap [-lp] [--] ACTION SIGSPEC...`: the ACTION, code bash runs when a signal (or EXIT)
    comes; None when there is none (one operand is a signal to reset, `-` resets, `-l`/`-p`
    list)."""
    i = 0
    while i < len(args) and args[i].value in ("-l", "-p", "-lp", "-pl"):
        i += 1
    if i < len(args) and args[i].value == "--":
        i += 1
    if len(args) - i < 2 or args[i].value in ("", "-"):
        return None
    return args[i]


def xargs_command(words: Sequence[Word]) -> Sequence[Word]:
    """The command words `xargs [options] CMD ...` runs (empty when it runs the default echo)."""
    i, n = 1, len(words)
    while i < n:
        v = words[i].value
        if v == "--":
            return words[i + 1 :]
        if not v.startswith("-") or v == "-":
            return words[i:]
        if v.startswith("--"):
            key = v.split("=", 1)[0]
            i += 2 if ("=" not in v and key in _XARGS_LONG_WITH_ARG) else 1
            continue
        letter = v[1]
        if letter in _XARGS_WITH_ARG and letter not in _XARGS_OPTIONAL_ARG and len(v) == 2:
            i += 2
        else:
            i += 1
    return ()


def find_exec_commands(words: Sequence[Word]) -> list[Sequence[Word]]:
    """Return the commands of every `-exec/-execdir/-ok/-okdir CMD ... ;|+` in a find command."""
    out: list[Sequence[Word]] = []
    i, n = 1, len(words)
    while i < n:
        if words[i].value in _FIND_EXEC:
            j = i + 1
            while (
                j < n
                and words[j].value != ";"
                and not (words[j].value == "+" and words[j - 1].value == "{}")
            ):
                j += 1
            if j > i + 1:
                out.append(words[i + 1 : j])
            i = j + 1
        else:
            i += 1
    return out


DASH_C_RUNNERS = frozenset({"su", "runuser", "flock", "script", "sg"})
_WATCH_WITH_ARG = "nq"


def dash_c_script(name: str, words: Sequence[Word]) -> Word | None:
    """The command string of `su -c CMD`, `runuser -c`, `flock FILE -c CMD`, `script -c CMD`,
    `sg GROUP -c CMD`."""
    if name not in DASH_C_RUNNERS:
        return None
    for k, w in enumerate(words[1:], start=1):
        v = w.value
        if v == "--":  # what follows is the command's own (`runuser -u U -- psql -c …`)
            return None
        if v in ("-c", "--command") and k + 1 < len(words):
            return words[k + 1]
        if v.startswith("--command="):
            _, _, raw = w.raw.partition("=")
            return make_word(raw, w.end - len(raw))
    return None


def watch_command(words: Sequence[Word]) -> list[str]:
    """The command `watch [options] CMD ...` runs through `sh -c`: its words joined by spaces, and
    joined as typed when that differs (`watch sh -c 'rm -rf /'` is read both ways)."""
    i, n = 1, len(words)
    while i < n:
        v = words[i].value
        if v == "--":
            i += 1
            break
        if not v.startswith("-") or v == "-":
            break
        i += 2 if (len(v) == 2 and v[1] in _WATCH_WITH_ARG) or v == "--interval" else 1
    return command_texts(words[i:])


def command_texts(words: Sequence[Word]) -> list[str]:
    """The command line a program hands a shell when it joins its operands by spaces: their text
    as typed joined (quoting kept), then, when it differs, their values joined, so that neither
    reading of `sh -c 'rm -rf /'` is missed (the walker reads the second quietly: it may not
    parse). Empty when there are no words."""
    texts = [" ".join(w.raw for w in words), " ".join(w.value for w in words)]
    return [t for k, t in enumerate(texts) if t.strip() and t not in texts[:k]]


class Runner:
    """How a tool runner's words lead to what it runs: `subcommands` that run it (none when the
    program itself does), the options that take a separate value, the operands before the command
    (`direnv exec DIR`, `aws-vault exec PROFILE`), whether only `--` starts the command (`mise exec
    TOOL@VERSION… -- CMD`: what precedes `--` are tools), the options whose value is a shell script
    (`npx -c SCRIPT`, `nix-shell --run SCRIPT`), and whether its operands are a command at all
    (`nix-shell`'s are packages and paths)."""

    __slots__ = (
        "subcommands", "short", "long", "operands", "after_dashes_only", "scripts", "argv",
        "delegates",
    )  # fmt: skip

    def __init__(
        self,
        subcommands: tuple[str, ...] = (),
        with_value: tuple[str, ...] = (),
        operands: int = 0,
        after_dashes_only: bool = False,
        scripts: tuple[str, ...] = (),
        argv: bool = True,
        delegates: dict[str, str] | None = None,
    ) -> None:
        #: subcommands read by another runner from there on (`docker compose …`: `docker-compose`)
        self.delegates = delegates or {}
        self.subcommands = frozenset(subcommands) | frozenset(self.delegates)
        self.scripts = frozenset(scripts)
        valued = (*with_value, *scripts)
        #: the options that take a value, as `skip_options` reads them: short letters, long names
        self.short = "".join(o[1] for o in valued if len(o) == 2 and o[1] != "-")
        self.long = tuple(o for o in valued if o.startswith("--"))
        self.operands = operands
        self.after_dashes_only = after_dashes_only
        self.argv = argv


_CONDA = Runner(("run",), ("-n", "--name", "-p", "--prefix", "--cwd"))
_VERSION_MANAGER = Runner(("exec",))
_NPM_EXEC = ("-p", "--package", "-w", "--workspace")
#: `docker exec [options] CONTAINER CMD…` (and global options before `exec`)
_CONTAINER_EXEC = Runner(
    ("exec",),
    ("-e", "--env", "--env-file", "-u", "--user", "-w", "--workdir", "--detach-keys", "-H",
     "--host", "--context", "-c", "--config", "-l", "--log-level"),
    operands=1,
    delegates={"compose": "docker-compose"},
)  # fmt: skip
#: `docker-compose [options] exec|run [options] SERVICE CMD…` (also `docker compose …`)
_COMPOSE_EXEC = Runner(
    ("exec", "run"),
    ("-f", "--file", "-p", "--project-name", "--profile", "--env-file", "--project-directory",
     "--ansi", "--parallel", "-e", "--env", "-u", "--user", "-w", "--workdir", "--index",
     "--entrypoint", "-l", "--label", "--name", "--publish", "-v", "--volume", "--pull",
     "--cap-add", "--cap-drop"),
    operands=1,
)  # fmt: skip
#: Tool runners that run the command in their operands, by program name. Peeling them would lose
#: RTK's rewrite of the runner itself (`bundle exec rspec` → `rtk rspec`), so the command they run
#: becomes a nested segment instead, like the command of `xargs`.
RUNNERS: dict[str, Runner] = {
    "poetry": Runner(("run",), ("-C", "--directory", "-P", "--project")),
    "pipenv": Runner(("run",)),
    "pdm": Runner(("run",), ("-p", "--project", "-L", "--lockfile", "--venv")),
    "hatch": Runner(("run",), ("-e", "--env")),
    "rye": Runner(("run",), ("--pyproject",)),
    "pixi": Runner(("run", "exec"), ("-e", "--environment", "--manifest-path", "-s", "--spec")),
    "conda": _CONDA,
    "mamba": _CONDA,
    "micromamba": _CONDA,
    "bundle": Runner(("exec",), ("--gemfile",)),
    "asdf": _VERSION_MANAGER,
    "rbenv": _VERSION_MANAGER,
    "pyenv": _VERSION_MANAGER,
    "nodenv": _VERSION_MANAGER,
    "goenv": _VERSION_MANAGER,
    "jenv": _VERSION_MANAGER,
    "direnv": Runner(("exec",), operands=1),
    "mise": Runner(("exec", "x"), ("--command",), after_dashes_only=True, scripts=("-c",)),
    "rtx": Runner(("exec", "x"), after_dashes_only=True),
    "op": Runner(("run",), ("--env-file",)),
    "doppler": Runner(("run",), ("-p", "--project", "-c", "--config", "--token", "--mount")),
    "aws-vault": Runner(("exec",), ("-d", "--duration", "-r", "--region", "-t", "--mfa-token"), 1),
    "dotenv": Runner(("run",), ("-f", "--file", "-e", "-v", "-p")),
    "chronic": Runner(),
    "with-contenv": Runner(),
    "npx": Runner((), _NPM_EXEC, scripts=("-c", "--call")),
    "npm": Runner(("exec", "x"), _NPM_EXEC, scripts=("-c", "--call")),
    "pnpm": Runner(("exec", "dlx"), ("--filter", "-F", "--resume-from")),
    "yarn": Runner(("exec", "dlx"), ("-p", "--package")),
    "bunx": Runner((), ("-p", "--package")),
    "bun": Runner(("x",), ("-p", "--package")),
    "docker": _CONTAINER_EXEC,
    "podman": _CONTAINER_EXEC,
    "docker-compose": _COMPOSE_EXEC,
    "podman-compose": _COMPOSE_EXEC,
    "kubectl": Runner(
        ("exec",),
        ("-n", "--namespace", "-c", "--container", "--context", "--kubeconfig", "-f", "--filename"),
        after_dashes_only=True,
    ),
    "nix-shell": Runner(
        (),
        ("-p", "-I", "-A", "--attr", "--arg", "--argstr"),
        scripts=("--run", "--command"),
        argv=False,
    ),
}


def runner_script(words: Sequence[Word]) -> Word | None:
    """The shell script a tool runner (`RUNNERS`) is given in an option (`npx -c SCRIPT`,
    `nix-shell --run SCRIPT`, `mise exec -c SCRIPT`), else None."""
    runner = _runner(words)
    if runner is None or not runner.scripts:
        return None
    for k in range(1, len(words) - 1):
        if words[k].value == "--":
            break
        if words[k].value in runner.scripts:
            return words[k + 1]
    return None


def runner_command(words: Sequence[Word]) -> Sequence[Word]:
    """The command words a tool runner (`RUNNERS`) runs; empty when its words run none (another
    subcommand, `--help`, a script option, a form this reader does not know)."""
    runner = _runner(words)
    return _command_of(runner, words) if runner is not None else ()


def _command_of(runner: Runner, words: Sequence[Word]) -> Sequence[Word]:
    if not runner.argv:
        return ()
    i = 1
    if runner.subcommands:
        i = _skip(words, i, runner)  # `poetry -C dir run …`
        if words[i - 1].value == "--":  # `dotenv -e .env -- CMD` (dotenv-cli, no subcommand)
            return words[i:]
        if i >= len(words) or words[i].value not in runner.subcommands:
            return ()
        if words[i].value in runner.delegates:  # `docker compose exec …`
            return _command_of(RUNNERS[runner.delegates[words[i].value]], words[i:])
        i += 1
    if runner.after_dashes_only:
        dashes = next((j for j in range(i, len(words)) if words[j].value == "--"), None)
        return words[dashes + 1 :] if dashes is not None else ()
    start = i
    i = _skip(words, i, runner) + runner.operands
    if any(words[k].value in runner.scripts for k in range(start, min(i, len(words)))):
        return ()  # `npx -c SCRIPT`: the script is what runs (`runner_script`)
    if i < len(words) and words[i].value == "--":  # `aws-vault exec PROFILE -- CMD`
        i += 1
    return words[i:] if i < len(words) else ()


def _runner(words: Sequence[Word]) -> Runner | None:
    return RUNNERS.get(words[0].value.rsplit("/", 1)[-1]) if words else None


def _skip(words: Sequence[Word], i: int, runner: Runner) -> int:
    """The index after the runner's options from `i` (and after a `--` that ends them)."""
    found = skip_options(words, i, runner.short, runner.long)
    return len(words) if found is None else found  # no stop letters: never None


#: ssh options that take a value (glued, `-p22`, or the next word), and those that run no command
_SSH_WITH_VALUE = "BbcDEeFIiJLlmOoPpQRSWw"
_SSH_NO_COMMAND = "NWO"


def ssh_command(words: Sequence[Word]) -> str | None:
    """The command line `ssh [options] HOST [options] [COMMAND…]` hands the remote shell: its words
    joined by spaces, as ssh sends them. None when it runs none (a login shell, `-N`, `-W`,
    `-O`)."""
    at = skip_options(words, 1, _SSH_WITH_VALUE, stop=_SSH_NO_COMMAND)
    if at is None or at >= len(words):
        return None
    at = skip_options(words, at + 1, _SSH_WITH_VALUE, stop=_SSH_NO_COMMAND)  # after the host
    if at is None:
        return None
    text = " ".join(w.value for w in words[at:])
    return text if text.strip() else None
