"""git's command lines read as git's parse-options reads them: the subcommand after git's own
options, each long option of the subcommand expanded to the name git resolves (any unambiguous
prefix counts: `git reset --ha` is `--hard`, `git push --mir` is `--mirror`), the values of the
options that take one (`--conflict merge`, `-b NAME`) told apart from the operands.

The tables are git 2.39's (`git SUB --git-completion-helper-all`, the `no-` forms included): a
name ending in `=` takes a value, as the next word unless given with `=`; an option with an
optional value (`--track[=…]`) takes it only with `=`. A long option git finds ambiguous
(`git push --forc`: --force, --force-with-lease or --force-if-includes) makes git refuse the whole
command, so nothing of it runs; an option these tables do not know is kept as typed.

`NEWER` adds the options of later git releases that 2.39 refuses as unknown, read as those
releases read them: `-U`/`--unified` and `--inter-hunk-context` of checkout, restore and reset take
a number (`#`), so `git checkout --unified 3 main` names no path, and `git restore --unified
--staged f` is refused (git wants a number), as every release refuses it.
"""

from __future__ import annotations

from functools import lru_cache

from rtk_policy.util import record

#: git's own options (before the subcommand) that take the next word as their value
GLOBAL_WITH_VALUE = frozenset(
    {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--exec-path",
     "--super-prefix"}
)  # fmt: skip

_LONG = {
    "push": (
        "verbose quiet repo= all mirror delete tags dry-run porcelain force force-with-lease "
        "force-if-includes recurse-submodules= thin receive-pack= exec= set-upstream progress "
        "prune no-verify follow-tags signed atomic push-option= ipv4 ipv6 verify"
    ),
    "reset": (
        "quiet no-refresh mixed soft hard merge keep recurse-submodules patch intent-to-add "
        "pathspec-from-file= pathspec-file-nul refresh"
    ),
    "branch": (
        "verbose quiet track set-upstream set-upstream-to= unset-upstream color remotes "
        "contains= no-contains= with= without= abbrev all delete move copy list show-current "
        "create-reflog edit-description force merged= no-merged= column sort= points-at= "
        "ignore-case recurse-submodules format="
    ),
    "clean": "quiet dry-run force interactive exclude=",
    "restore": (
        "source= staged worktree ignore-unmerged overlay quiet recurse-submodules progress "
        "merge conflict= ours theirs patch ignore-skip-worktree-bits pathspec-from-file= "
        "pathspec-file-nul"
    ),
    "checkout": (
        "guess overlay quiet recurse-submodules progress merge conflict= detach track force "
        "orphan= overwrite-ignore ignore-other-worktrees ours theirs patch "
        "ignore-skip-worktree-bits pathspec-from-file= pathspec-file-nul"
    ),
    "switch": (
        "create= force-create= guess discard-changes quiet recurse-submodules progress merge "
        "conflict= detach track force orphan= overwrite-ignore ignore-other-worktrees"
    ),
    "rebase": (
        "onto= keep-base no-verify quiet verbose no-stat signoff "
        "committer-date-is-author-date reset-author-date ignore-date ignore-whitespace "
        "whitespace= force-rebase no-ff continue skip abort quit edit-todo show-current-patch "
        "apply merge interactive preserve-merges rerere-autoupdate empty= keep-empty "
        "autosquash update-refs gpg-sign autostash exec= allow-empty-message rebase-merges "
        "fork-point strategy= strategy-option= root reschedule-failed-exec "
        "reapply-cherry-picks verify stat ff"
    ),
    "merge": (
        "stat summary log squash commit edit cleanup= ff ff-only rerere-autoupdate "
        "verify-signatures strategy= strategy-option= message= file= into-name= verbose quiet "
        "abort quit continue allow-unrelated-histories progress gpg-sign autostash "
        "overwrite-ignore signoff no-verify verify"
    ),
}
#: options of later git releases (module docstring); `#`: takes a number
NEWER = {sub: "unified# inter-hunk-context#" for sub in ("checkout", "restore", "reset")}
#: the options git 2.39 does not let be negated with `no-` (the others it does)
_NO_NEGATION = {
    "push": "verify",
    "reset": "refresh",
    "branch": "contains no-contains with without merged no-merged",
    "clean": "exclude",
    "restore": "ours theirs",
    "checkout": "ours theirs",
    "rebase": "continue skip abort quit edit-todo show-current-patch apply merge interactive "
    "empty verify stat ff no-verify no-stat no-ff",
    "merge": "verify ff-only file",
}
#: the short options that take a value (the rest of their cluster, else the next word)
SHORT_VALUES = {
    "push": "o", "branch": "u", "clean": "e", "restore": "sU", "checkout": "bBU", "switch": "cC",
    "rebase": "xsXC", "merge": "sXmF", "reset": "U",
}  # fmt: skip


def _table(sub: str) -> dict[str, bool]:
    """Subcommand `sub`'s long options of git 2.39, each with whether it takes a value."""
    fixed = set(_NO_NEGATION.get(sub, "").split())
    table = {name.rstrip("="): name.endswith("=") for name in _LONG[sub].split()}
    for name in list(table):
        if name not in fixed:
            negated = name[3:] if name.startswith("no-") else "no-" + name
            table.setdefault(negated, False)
    return table


#: git 2.39's long options per subcommand: whether each takes a value
TABLES_239: dict[str, dict[str, bool]] = {sub: _table(sub) for sub in _LONG}
#: those and the later releases' (`NEWER`), as the parser reads them
TABLES: dict[str, dict[str, bool]] = {
    sub: {**table, **{n.rstrip("#"): True for n in NEWER.get(sub, "").split()}}
    for sub, table in TABLES_239.items()
}
#: the long options whose value must be a number (git refuses the command otherwise)
_NUMERIC = frozenset(n.rstrip("#") for names in NEWER.values() for n in names.split())


def expand_long(word: str, table: dict[str, bool]) -> str | None:
    """The long option `--word[=value]` stands for in `table` (its full name without dashes; a
    unique prefix counts, as in git), None when git refuses it as ambiguous; a name the table
    does not know is kept as typed."""
    name = word[2:].split("=", 1)[0]
    if name in table:
        return name
    found = [known for known in table if known.startswith(name)]
    return found[0] if len(found) == 1 else (None if found else name)


@record.frozen(compile_after=record.PER_COMMAND)
class Parsed:
    """A git command line as git reads it (module docstring)."""

    sub: str  #: the subcommand ("" when there is none)
    options: tuple[str, ...]  #: long ones as `--NAME` or `--NAME=VALUE`; short clusters as typed
    operands: tuple[str, ...]  #: the other words, and every word after `--`
    refused: bool  #: an ambiguous long option: git runs nothing


def subcommand_index(args: list[str] | tuple[str, ...]) -> int:
    """The index of the subcommand in the words after `git` (len(args) when there is none)."""
    i = 0
    while i < len(args):
        word = args[i]
        if word in GLOBAL_WITH_VALUE:
            i += 2
        elif word.startswith("-") and word != "-":
            i += 1
        else:
            return i
    return i


def parse(args: list[str]) -> Parsed:
    """`git ARGS` (the words after git) as git's parse-options reads its subcommand's words."""
    return _parse(tuple(args))


@lru_cache(maxsize=256)
def _parse(args: tuple[str, ...]) -> Parsed:
    at = subcommand_index(args)
    sub = args[at] if at < len(args) else ""
    table, shorts = TABLES.get(sub, {}), SHORT_VALUES.get(sub, "")
    words = args[at + 1 :]
    options: list[str] = []
    operands: list[str] = []
    i = 0
    while i < len(words):
        word, i = words[i], i + 1
        if word == "--":
            operands += words[i:]
            break
        if word.startswith("--"):
            name = expand_long(word, table)
            if name is None:
                return Parsed(sub, (), (), True)
            value = word.partition("=")[2] if "=" in word else None
            if value is None and table.get(name) and i < len(words):
                value, i = words[i], i + 1
            if name in _NUMERIC and name in table and not _number(value):
                return Parsed(sub, (), (), True)
            options.append(f"--{name}" if value is None else f"--{name}={value}")
        elif word.startswith("-") and len(word) > 1:
            options.append(word)
            letters = word[1:]
            cut = next((k for k, letter in enumerate(letters) if letter in shorts), -1)
            if cut == len(letters) - 1 and i < len(words):
                i += 1  # `-b NAME`: the value is the next word
        else:
            operands.append(word)
    return Parsed(sub, tuple(options), tuple(operands), False)


def _number(value: str | None) -> bool:
    """Whether git reads `value` as a number (`3`, `-1`)."""
    return value is not None and value.lstrip("-").isdigit()
