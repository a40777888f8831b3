"""Code git runs from its configuration: `git -c core.fsmonitor=CMD …`, `-c core.pager=…`,
`-c alias.x='!CMD'`, `git config alias.x '!CMD'`, and the environment (`GIT_SSH_COMMAND=CMD`).

Settings given through the environment (`GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=K
GIT_CONFIG_VALUE_0=V`, `GIT_CONFIG_PARAMETERS="'K=V'"`) count as `-c K=V` does: git reads them
as command-line configuration (`env_settings`).

`scripts` gives the shell commands git would hand to a shell; `alias_command` the git command an
alias that is not a shell command (`-c alias.nuke='reset --hard' nuke`) stands for.
"""

from __future__ import annotations

from collections.abc import Sequence

from rtk_policy.shell.git_options import GLOBAL_WITH_VALUE
from rtk_policy.shell.words import Word
from rtk_policy.util.lazy_re import lazy

#: configuration keys whose value git runs as a command (lower case; `*` is any subsection)
_CODE_KEY = lazy(
    globals(),
    "_CODE_KEY",
    r"(?i)(core\.(fsmonitor|pager|editor|sshcommand|askpass|gitproxy)|sequence\.editor"
    r"|diff\.external|diff\..+\.(textconv|command)|filter\..+\.(clean|smudge|process)"
    r"|merge\..+\.driver|credential(\..+)?\.helper|gpg(\..+)?\.program|uploadpack\.packobjectshook"
    r"|pager\..+|alias\..+|web\.browser|browser\..+\.cmd|remote\..+\.(uploadpack|receivepack)"
    r"|sendemail\.(smtpserver|.+\.tocmd|tocmd|cccmd))",
)
#: values that are a known pager, editor or plain ssh: nothing to walk (`git -c core.pager=cat`)
_BENIGN = lazy(
    globals(),
    "_BENIGN",
    r"[ \t]*(cat|less( -[A-Za-z]+)*|more|most|delta( --[a-z-]+)*|bat( --[a-z-]+)*|diff-so-fancy"
    r"|vim?|nvim|nano|emacs|code( --wait)?|subl( -w)?|true|false|ssh( [^;&|`$()<>]*)?)[ \t]*",
)
#: environment variables whose value git runs as a command
CODE_ENV = frozenset(
    {"GIT_SSH_COMMAND", "GIT_SSH", "GIT_EDITOR", "GIT_PAGER", "GIT_SEQUENCE_EDITOR",
     "GIT_EXTERNAL_DIFF", "GIT_ASKPASS", "GIT_PROXY_COMMAND"}
)  # fmt: skip
#: environment variables that hold configuration settings (`env_settings`)
CONFIG_ENV = frozenset({"GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT"})
_CONFIG_READS = frozenset(
    {"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--unset", "--unset-all", "--list",
     "-l", "--remove-section", "--rename-section", "get", "list", "unset", "--show-origin", "-e",
     "--edit", "edit"}
)  # fmt: skip


def runs_code(words: Sequence[Word]) -> bool:
    """Whether a git command may set configuration that runs code (a cheap test first)."""
    return any(w.value.startswith("-c") or w.value == "config" for w in words[1:])


def _code_value(key: str, value: str) -> str | None:
    """The shell command of KEY=VALUE, when the key is one git runs (an alias only with `!`)."""
    if not _CODE_KEY.fullmatch(key):
        return None
    if key.lower().startswith("alias."):
        value = value[1:] if value.startswith("!") else ""
    return value if value and not _BENIGN.fullmatch(value) else None


def env_settings(env: Sequence[tuple[str, str]] | dict[str, str]) -> list[tuple[str, str]]:
    """The settings git reads from the environment as command-line configuration: each
    `'KEY=VALUE'` (or `'KEY'='VALUE'`) of GIT_CONFIG_PARAMETERS, then GIT_CONFIG_KEY_<n> /
    GIT_CONFIG_VALUE_<n> for n below GIT_CONFIG_COUNT (git refuses the command when one is
    missing)."""
    names = dict(env.items() if isinstance(env, dict) else env)
    found: list[tuple[str, str]] = []
    text = names.get("GIT_CONFIG_PARAMETERS", "")
    if text.strip():
        from shlex import split  # imported on first use: seldom set

        try:
            found += [_pair(entry) for entry in split(text)]
        except ValueError:  # git refuses an unbalanced quote ("bogus format")
            pass
    count = names.get("GIT_CONFIG_COUNT", "").strip()
    for n in range(min(int(count), 64) if count.isdigit() else 0):
        key, value = names.get(f"GIT_CONFIG_KEY_{n}"), names.get(f"GIT_CONFIG_VALUE_{n}")
        if key is not None and value is not None:
            found.append((key, value))
    return found


def settings(
    words: Sequence[Word], env: Sequence[tuple[str, str]] = ()
) -> tuple[list[tuple[str, str]], int]:
    """The `-c KEY=VALUE` settings of a git command (those of its environment first) and the
    index of its subcommand."""
    found = env_settings(env) if any(name in CONFIG_ENV for name, _ in env) else []
    i, n = 1, len(words)
    while i < n:
        v = words[i].value
        if v == "-c" and i + 1 < n:
            found.append(_pair(words[i + 1].value))
            i += 2
        elif v.startswith("-c") and len(v) > 2:
            found.append(_pair(v[2:]))
            i += 1
        elif v in GLOBAL_WITH_VALUE:
            i += 2
        elif v.startswith("-") and v != "-":
            i += 1
        else:
            break
    return found, i


def _pair(text: str) -> tuple[str, str]:
    key, _, value = text.partition("=")
    return key, value


def scripts(words: Sequence[Word], env: Sequence[tuple[str, str]] = ()) -> list[str]:
    """The shell commands a git command would run from its settings and environment."""
    out = [v for name, v in env if name in CODE_ENV and v and not _BENIGN.fullmatch(v)]
    found, at = settings(words, env)
    out.extend(code for key, value in found if (code := _code_value(key, value)))
    if at < len(words) and words[at].value == "config":
        out.extend(_config_set(words[at + 1 :]))
    return out


def _config_set(args: Sequence[Word]) -> list[str]:
    """`git config [options] KEY VALUE` (also `config set KEY VALUE`) of a key git runs."""
    values = [w.value for w in args]
    if any(v in _CONFIG_READS for v in values):
        return []
    operands = [v for v in values if not v.startswith("-") and v != "set"]
    if len(operands) >= 2:
        code = _code_value(operands[0], operands[1])
        return [code] if code else []
    return []


def alias_command(words: Sequence[Word], env: Sequence[tuple[str, str]] = ()) -> list[Word]:
    """The git command `git -c alias.X=VALUE … X ARGS` runs when VALUE is not a shell command
    (`git VALUE… ARGS`); empty otherwise. `env`: the command's environment assignments."""
    found, at = settings(words, env)
    if at >= len(words):
        return []
    sub = words[at].value
    for key, value in found:
        if key.lower() == f"alias.{sub}".lower() and value and not value.startswith("!"):
            w = words[at]
            expanded = [Word(p, p, w.start, w.end, False, False, True) for p in value.split()]
            return [words[0], *expanded, *words[at + 1 :]]
    return []
