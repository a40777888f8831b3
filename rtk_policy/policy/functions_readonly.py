"""Claude Code's read-only set, as data: commands Claude Code runs without asking (CEL
`claude_read_only`).

Claude Code auto-allows read-only commands (`ls`, `cat`, `git status`, `git log`, …) but not their
`rtk …` forms, so a rewrite with no decision turns each into an approval prompt. The
`claude-read-only` rule (policies/claude-permissions.yaml) answers allow for the commands below, as
RTK's exit 0 does, so `rtk git status` runs unprompted where `git status` would have.

This is a strict subset of Claude Code 2.1's own set (its `readOnlyValidation`: commands allowed
with any arguments, and per-command tables of safe flags), limited to the programs the rewrite
registry rewrites, and stricter where Claude Code's conditions are subtle: an allow here lets the
command run unasked, so a command that Claude Code would have asked about must never be in it.
The conditions, for every command:

- the program is typed as its bare name (`/bin/ls` is not `ls`), with no env prefix, wrapper or
  negation, at the top level (not in a subshell, group, substitution or background job);
- no file redirect (`> f`, `< f`; `2>&1` and `2>/dev/null` are fine) and none of
  `$ ` { } ( ) < >` in the text (no expansion, substitution or brace list);
- every operand that names a path stays inside the working folder: no absolute path outside the
  project, no `~`, no `..` step;
- per program, only the flags listed (a flag with a value takes its value; short flags may be
  bundled when none takes a value); `find` without `-delete`, `-exec`, `-ok`, `-fprint*`, `-fls`;
  no custom `--format`/`--pretty` for git (Claude Code refuses some);
- unquoted globs only for `ls cat head tail wc diff du df grep`; no `gh` argument naming another
  host or repository; at most 10,000 characters.

Not covered (asked as before): `git` with global options (`git -C dir status`), `sed`, `jq`,
`xargs`.
"""

from __future__ import annotations

import posixpath

from rtk_policy.policy.functions import Function

ANY = None  #: every flag is fine (Claude Code allows these commands with any arguments)
_N, _V, _NUM = "none", "value", "number"

_LOG_FLAGS = {
    **dict.fromkeys(
        "--oneline --graph --decorate --no-decorate --relative-date --all --branches --tags "
        "--remotes --stat --numstat --shortstat --name-only --name-status --color --no-color "
        "--patch -p --no-patch --no-ext-diff -s --abbrev-commit --first-parent --merges "
        "--no-merges --reverse --follow --topo-order --date-order".split(),
        _N,
    ),
    **dict.fromkeys(
        "--date --since --after --until --before --author --committer --grep "
        "--pretty --format --diff-filter -S -G".split(),
        _V,
    ),
    **dict.fromkeys("--max-count -n --skip".split(), _NUM),
}
_DIFF_FLAGS = {
    **dict.fromkeys(
        "--cached --staged --stat --numstat --shortstat --name-only --name-status --color "
        "--no-color --no-ext-diff --quiet --exit-code --check -p -u -s -M -C -R --summary "
        "--word-diff --ignore-all-space --ignore-space-change --ignore-blank-lines --minimal "
        "--patience --histogram".split(),
        _N,
    ),
    **dict.fromkeys("--diff-filter --word-diff-regex --relative -S -G".split(), _V),
}
_SHOW_FLAGS = {
    **dict.fromkeys(
        "--oneline --decorate --no-decorate --stat --numstat --shortstat --name-only "
        "--name-status --color --no-color --patch -p --no-patch --no-ext-diff -s "
        "--abbrev-commit --quiet --raw".split(),
        _N,
    ),
    **dict.fromkeys("--date --diff-filter".split(), _V),
}
_GREP_FLAGS = {
    **dict.fromkeys(
        "-E -F -G -P -H -I -L -R -a -c -h -i -l -n -o -q -r -s -v -w -x -z --count "
        "--extended-regexp --fixed-strings --files-with-matches --files-without-match "
        "--ignore-case --invert-match --line-number --no-filename --only-matching --quiet "
        "--recursive --with-filename --word-regexp --line-regexp".split(),
        _N,
    ),
    **dict.fromkeys("-e --regexp --include --exclude --exclude-dir --color --colour".split(), _V),
    **dict.fromkeys(
        "-A -B -C -m --after-context --before-context --context --max-count".split(), _NUM
    ),
}
_RG_FLAGS = {
    **dict.fromkeys(
        "-i --ignore-case -S --smart-case -F --fixed-strings -w --word-regexp -v --invert-match "
        "-c --count -l --files-with-matches --files-without-match -n --line-number -o "
        "--only-matching -H -h --heading --no-heading -q --quiet --column --hidden --no-ignore "
        "-u -a --text --json --stats".split(),
        _N,
    ),
    **dict.fromkeys("-e --regexp -g --glob -t --type -T --type-not --color".split(), _V),
    **dict.fromkeys(
        "-A -B -C -m -d --after-context --before-context --context --max-count --max-depth".split(),
        _NUM,
    ),
}
_TREE_FLAGS = {
    **dict.fromkeys(
        "-a -d -l -f -x -h -s -D -F -C -n -Q -p -u -g -t -r -A -i --noreport "
        "--dirsfirst --gitignore --prune".split(),
        _N,
    ),
    **dict.fromkeys("-P -I".split(), _V),
    **dict.fromkeys("-L".split(), _NUM),
}
_GH_REPO = {"-R": _V, "--repo": _V}
_GH_LIST = {
    **_GH_REPO,
    "--state": _V,
    "-s": _V,
    "--author": _V,
    "--assignee": _V,
    "--label": _V,
    "--limit": _NUM,
    "-L": _NUM,
    "--search": _V,
}

#: (program, subcommand words...) → flag table (ANY: every flag). Longest key wins.
READ_ONLY: dict[tuple[str, ...], dict[str, str] | None] = {
    ("ls",): ANY,
    ("cat",): ANY,
    ("head",): ANY,
    ("tail",): ANY,
    ("wc",): ANY,
    ("diff",): ANY,
    ("du",): ANY,
    ("df",): ANY,
    ("find",): ANY,
    ("grep",): _GREP_FLAGS,
    ("egrep",): _GREP_FLAGS,
    ("fgrep",): _GREP_FLAGS,
    ("rg",): _RG_FLAGS,
    ("tree",): _TREE_FLAGS,
    ("git", "status"): {
        **dict.fromkeys(
            "--short -s --branch -b --porcelain --long --verbose -v --ignored".split(), _N
        ),
        "-u": _V,
        "--untracked-files": _V,
    },
    ("git", "log"): _LOG_FLAGS,
    ("git", "diff"): _DIFF_FLAGS,
    ("git", "show"): _SHOW_FLAGS,
    ("git", "branch"): dict.fromkeys(
        "-a --all -r --remotes -v -vv --verbose -l --list "
        "--show-current --no-color --color".split(),
        _N,
    ),
    ("git", "stash", "list"): {"--oneline": _N, "-n": _NUM, "--max-count": _NUM},
    ("git", "worktree", "list"): {"--porcelain": _N, "-v": _N, "--verbose": _N},
    ("docker", "ps"): {
        **dict.fromkeys("-a --all -q --quiet -s --size --no-trunc -l --latest".split(), _N),
        "-n": _NUM,
        "--last": _NUM,
    },
    ("docker", "images"): dict.fromkeys("-a --all -q --quiet --no-trunc --digests".split(), _N),
    ("docker", "logs"): {
        **dict.fromkeys("-t --timestamps --details".split(), _N),
        "--tail": _V,
        "-n": _V,
        "--since": _V,
        "--until": _V,
    },
    ("gh", "pr", "view"): {**_GH_REPO, "--comments": _N},
    ("gh", "pr", "list"): {**_GH_LIST, "--base": _V, "--head": _V, "--draft": _N},
    ("gh", "pr", "diff"): {**_GH_REPO, "--name-only": _N, "--patch": _N, "--color": _V},
    ("gh", "pr", "checks"): {**_GH_REPO, "--required": _N},
    ("gh", "pr", "status"): _GH_REPO,
    ("gh", "issue", "view"): {**_GH_REPO, "--comments": _N},
    ("gh", "issue", "list"): {**_GH_LIST, "--milestone": _V},
    ("gh", "run", "list"): {
        **_GH_REPO,
        "--limit": _NUM,
        "-L": _NUM,
        "--branch": _V,
        "-b": _V,
        "--workflow": _V,
        "-w": _V,
        "--status": _V,
        "-s": _V,
    },
    ("gh", "run", "view"): {
        **_GH_REPO,
        "--log": _N,
        "--log-failed": _N,
        "--verbose": _N,
        "-v": _N,
        "--job": _V,
        "-j": _V,
    },
    ("gh", "repo", "view"): _GH_REPO,
    ("gh", "release", "list"): {**_GH_REPO, "--limit": _NUM, "-L": _NUM},
    ("gh", "release", "view"): _GH_REPO,
}
#: find primaries that write, delete or run something
FIND_ACTIONS = frozenset(
    "-delete -rm -exec -execdir -ok -okdir -fprint -fprint0 -fprintf -fls -files0-from".split()
)
#: characters that make the text do more than it says (expansion, substitution, braces, grouping)
_ACTIVE = frozenset("$`{}()<>")
_GLOB_CHARS = frozenset("*?[")


#: programs Claude Code lets take unquoted globs (`ls *.py`); for the others a glob is refused
GLOB_PROGRAMS = frozenset("ls cat head tail wc diff du df grep egrep fgrep".split())
#: the longest command Claude Code analyses for read-only-ness
MAX_LENGTH = 10_000


def claude_read_only(argv: list[str], raw: list[str], text: str, cwd: str, project: str) -> bool:
    """True when Claude Code would run `argv` (typed as the words `raw`, the command `text`) in
    `cwd` without asking."""
    if not argv or len(text) > MAX_LENGTH or not _ACTIVE.isdisjoint(text.split(argv[0], 1)[-1]):
        return False
    if argv[0] not in GLOB_PROGRAMS and any(_unquoted_glob(word) for word in raw[1:]):
        return False
    if argv[0] == "gh" and any(_elsewhere(word) for word in argv[2:]):
        return False
    key = _key(argv)
    if key is None:
        return False
    table = READ_ONLY[key]
    operands = _operands(argv[len(key) :], table, argv[0])
    if operands is None:
        return False
    if argv[0] == "find" and any(arg in FIND_ACTIONS for arg in argv):
        return False
    return all(_stays_inside(word, cwd, project) for word in operands)


def _unquoted_glob(raw: str) -> bool:
    """A word with `*`, `?` or `[` outside quotes (bash expands it)."""
    if _GLOB_CHARS.isdisjoint(raw):  # most words: none of them at all
        return False
    quote, escaped = "", False
    for c in raw:
        if escaped:
            escaped = False
        elif c == "\\" and quote != "'":
            escaped = True
        elif quote:
            quote = "" if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c in "*?[":
            return True
    return False


def _elsewhere(word: str) -> bool:
    """A `gh` argument naming another host or repository (`://`, `@`, two or more `/`)."""
    return "://" in word or "@" in word or word.count("/") >= 2


def _key(argv: list[str]) -> tuple[str, ...] | None:
    for size in (3, 2, 1):
        key = tuple(argv[:size])
        if len(key) == size and key in READ_ONLY:
            return key
    return None


def _operands(args: list[str], table: dict[str, str] | None, program: str) -> list[str] | None:
    """The operands of `args` when every flag is in `table` (None: a flag that is not)."""
    if table is ANY:
        return [a for a in args if not a.startswith("-")]
    operands: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        index += 1
        if arg == "--":
            operands += args[index:]
            break
        if not arg.startswith("-") or arg == "-":
            operands.append(arg)
            continue
        name, sep, value = arg.partition("=")
        kind = table.get(name)
        if kind is None:
            if not sep and _bundle_ok(arg, table, program):
                continue
            return None
        if kind == _N:
            if sep:
                return None
            continue
        if not sep:
            if index >= len(args) or args[index].startswith("-"):
                return None
            value = args[index]
            index += 1
        if kind == _NUM and not value.isdigit():
            return None
    return operands


def _bundle_ok(arg: str, table: dict[str, str], program: str) -> bool:
    """`-abc` of flags that take no value; `-A3` (grep, rg) or `-5` (git log) with its number."""
    if program == "git" and arg[1:].isdigit():
        return True
    if table.get(arg[:2]) == _NUM and arg[2:].isdigit():
        return True
    return (
        len(arg) > 2
        and not arg.startswith("--")
        and all(table.get("-" + letter) == _N for letter in arg[1:])
    )


def _stays_inside(word: str, cwd: str, project: str) -> bool:
    """False for an operand that may name a path outside the working folder."""
    if word.startswith("~") or ".." in word.split("/"):
        return False
    if not word.startswith("/"):
        return True
    path = posixpath.normpath(word)
    for folder in (cwd, project):
        if folder and folder.startswith("/"):
            base = posixpath.normpath(folder)
            if path == base or path.startswith(base.rstrip("/") + "/"):
                return True
    return False


_S, _B, _LS = "string", "bool", "list<string>"

#: The functions of this module (see rtk_policy.policy.functions for the mechanism).
FUNCTIONS: tuple[Function, ...] = (
    Function("claude_read_only", (_LS, _LS, _S, _S, _S), _B, claude_read_only),
)
