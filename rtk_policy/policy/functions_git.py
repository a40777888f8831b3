"""CEL functions that read git's command lines as git reads them (`shell/git_options.py`: the
subcommand after git's own options, long options expanded from any unambiguous prefix, option
values told apart from operands).

- `git_options(args)`: the options of `git … SUB ARGS` (the words after `git`) as git resolves
  them: `--NAME` / `--NAME=VALUE` (a value given as the next word joined with `=`), short clusters
  as typed; [] when git refuses the command for an ambiguous option.
- `git_operands(args)`: its other words (not option values), and every word after `--`.
- `git_checkout_operands(args)`: the operands of `git … checkout ARGS` that name a tree-ish and
  paths: git_operands, less a value of `--recurse-submodules` typed as the next word
  (`--recurse-submodules on-demand main`; git 2.39 takes that value only as `=VALUE`, so it reads
  `on-demand` as a tree-ish, or, no ref being named so, as a path that must match a file: git
  refuses the command when one does not, and checks nothing out).
- `git_push_branches(args)`: the branches `git … push ARGS` updates on the remote, as the command
  itself names them: each refspec's destination (`main`, `HEAD:main`, `+refs/heads/main`,
  `feature:main`), a `--force-with-lease=main…` refname, `*` for `--all`/`--branches`/`--mirror`,
  and `HEAD` when it pushes the checked-out branch (no refspec, or `HEAD` as one).
- `git_restore_discards(args)`: whether `git … restore ARGS` may overwrite working-tree edits.
- `git_config_words(args, env)`: the words after `git` and, after them, each `KEY=VALUE` setting
  git reads from the command's environment `env` as it reads `-c KEY=VALUE`
  (GIT_CONFIG_PARAMETERS, GIT_CONFIG_COUNT with GIT_CONFIG_KEY_n/VALUE_n).

Only the words are read, never the repository: a decision depends on the command and the policies
alone, so the server's and the batch's memos of answers stay right.
"""

from __future__ import annotations

from rtk_policy.policy.functions import Function
from rtk_policy.shell.git_code import env_settings
from rtk_policy.shell.git_options import parse, subcommand_index

#: the values of --recurse-submodules (`git_checkout_operands`)
_RECURSE_VALUES = frozenset({"checkout", "on-demand", "yes", "no", "true", "false", "on", "off"})
#: git push's options that push every branch
_PUSH_ALL = frozenset({"--all", "--branches", "--mirror"})
_HEADS = "refs/heads/"
#: what git restore's location options set: (worktree, staged), None for unchanged
_RESTORE_WHERE = {"worktree": (True, None), "no-worktree": (False, None),
                  "staged": (None, True), "no-staged": (None, False),
                  "W": (True, None), "S": (None, True)}  # fmt: skip


def git_options(args: list[str]) -> list[str]:
    """The options of `git … SUB ARGS` as git resolves them (module docstring)."""
    parsed = parse(args)
    return list(parsed.options)


def git_operands(args: list[str]) -> list[str]:
    """The operands of `git … SUB ARGS`: neither options nor their values (module docstring)."""
    return list(parse(args).operands)


def git_checkout_operands(args: list[str]) -> list[str]:
    """The operands of `git … checkout ARGS` that name a tree-ish and paths (module docstring)."""
    parsed = parse(args)
    operands = list(parsed.operands)
    if operands and operands[0] in _RECURSE_VALUES and "--recurse-submodules" in parsed.options:
        return operands[1:]
    return operands


def _branch(ref: str) -> str:
    """The branch a ref names (`refs/heads/main` and `main` are `main`)."""
    return ref[len(_HEADS) :] if ref.startswith(_HEADS) else ref


def _destination(refspec: str) -> str:
    """The remote branch a refspec `[+]SRC[:DST]` updates (DST, else SRC)."""
    source, _, target = refspec.lstrip("+").partition(":")
    return _branch(target or source)


def _runs(args: list[str], sub: str) -> bool:
    """Whether the words after git name the subcommand `sub` (`parse(args).sub == sub`, without
    reading the subcommand's words: most git commands are not the one a function asks about)."""
    at = subcommand_index(args)
    return at < len(args) and args[at] == sub


def git_push_branches(args: list[str]) -> list[str]:
    """The remote branches `git … push ARGS` updates, as its words name them (module docstring);
    [] when the words are no push git runs."""
    if not _runs(args, "push"):
        return []
    parsed = parse(args)
    if parsed.sub != "push" or parsed.refused:
        return []
    found: list[str] = []
    for option in parsed.options:
        name, equals, value = option.partition("=")
        if name in _PUSH_ALL:
            found.append("*")
        elif name == "--force-with-lease" and equals:
            found.append(_branch(value.partition(":")[0]))
    refspecs = parsed.operands[1:]
    found += [_destination(refspec) for refspec in refspecs if refspec.lstrip("+")]
    if not refspecs and "*" not in found:
        found.append("HEAD")
    return found


def git_restore_discards(args: list[str]) -> bool:
    """Whether `git … restore ARGS` (the words after git) may overwrite working-tree edits: the
    location options applied in order (neither given: the worktree; `--staged` alone: the index
    only; `--no-staged` alone: git refuses), a pathspec or `--pathspec-from-file FILE` given, the
    values of `-s`/`--source`/`--pathspec-from-file`/`--conflict` not read as paths."""
    if not _runs(args, "restore"):
        return False
    parsed = parse(args)
    if parsed.sub != "restore" or parsed.refused:
        return False
    worktree: bool | None = None
    staged: bool | None = None
    paths = bool(parsed.operands)
    for option in parsed.options:
        if option.startswith("--"):
            name = option[2:].partition("=")[0]
            if name == "help":
                return False
            paths = paths or name == "pathspec-from-file"
            worktree, staged = _located(name, worktree, staged)
            continue
        for letter in option[1:]:
            if letter == "h":
                return False
            if letter == "s":  # -s TREE or -sTREE: the rest is its value
                break
            worktree, staged = _located(letter, worktree, staged)
    if worktree is None:
        worktree = staged is None
    return worktree and paths


def _located(
    option: str, worktree: bool | None, staged: bool | None
) -> tuple[bool | None, bool | None]:
    """(worktree, staged) after one option."""
    new_worktree, new_staged = _RESTORE_WHERE.get(option, (None, None))
    return (
        worktree if new_worktree is None else new_worktree,
        staged if new_staged is None else new_staged,
    )


def git_config_words(args: list[str], env: dict[str, str]) -> list[str]:
    """`args` and the `KEY=VALUE` settings git reads from environment `env` as command-line
    configuration (module docstring)."""
    if not env:
        return args
    return args + [f"{key}={value}" for key, value in env_settings(env)]


_LS = "list<string>"

FUNCTIONS: tuple[Function, ...] = (
    Function("git_options", (_LS,), _LS, git_options),
    Function("git_operands", (_LS,), _LS, git_operands),
    Function("git_checkout_operands", (_LS,), _LS, git_checkout_operands),
    Function("git_push_branches", (_LS,), _LS, git_push_branches),
    Function("git_restore_discards", (_LS,), "bool", git_restore_discards),
    Function("git_config_words", (_LS, "map<string,dyn>"), _LS, git_config_words),
)
