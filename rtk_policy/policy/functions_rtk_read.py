"""CEL functions of the RTK registry for reading commands: the `rtk read` form of head/tail/cat
(§3.10) and the checks of pipeline stages (§3.4), registered on every backend like
`functions_rtk.py`'s."""

from __future__ import annotations

from functools import lru_cache

from rtk_policy.policy.functions import Function
from rtk_policy.policy.functions_rtk import (
    IFS,
    collapse_continuations,
    split_words,
    trim_ifs,
    word_value,
)
from rtk_policy.util.lazy_re import lazy

# ---------------------------------------------------------------------------------------------
# head / tail / cat → rtk read (§3.10)

_OPERAND_RE = lazy(globals(), "_OPERAND_RE", r"^[\w.\-/~+@:,=]+$")


def _plain_operand(raw: str) -> bool:
    """A file operand `rtk read` can take as written: word characters and . _ / - ~ + @ : , =."""
    return bool(_OPERAND_RE.match(raw)) and not raw.startswith("-")


def _redirect_word(word: str) -> bool:
    """Whether `word` begins as a redirection does: digits, then `<`, `>` or `&`."""
    return word.lstrip("0123456789")[:1] in ("<", ">", "&")


@lru_cache(maxsize=1024)
def rtk_read(text: str) -> str:
    """The `rtk read …` form of a head/tail/cat command, "" when RTK keeps it native."""
    typed = trim_ifs(collapse_continuations(text))
    spans = split_words(typed)
    words = [w for w, _ in spans]
    if len(words) < 2 or any(_redirect_word(w) for w in words):
        return ""
    program, args = words[0], words[1:]
    if program == "cat":
        return _cat(args, typed[spans[1][1] :])
    if program in ("head", "tail"):
        return _head_tail(program, args)
    return ""


def _cat(args: list[str], rest: str) -> str:
    """`rtk read` and cat's arguments as typed (`rest`), when they are files and at most `-n`."""
    operands = 0
    for raw in args:
        value = word_value(raw)
        if value.startswith("-") and value != "-":
            if raw != "-n":
                return ""
        else:
            operands += 1
    return "rtk read " + rest if operands else ""


def _head_tail(program: str, args: list[str]) -> str:
    count, files, i = "", [], 0
    while i < len(args):
        raw = args[i]
        if raw[:1] == "-" and raw[1:].isascii() and raw[1:].isdigit():  # -[0-9]+
            count = raw[1:]
        elif raw in ("-n", "--lines") and i + 1 < len(args):
            count, i = args[i + 1], i + 1
        elif raw.startswith("--lines="):
            count = raw[len("--lines=") :]
        elif raw.startswith("-n") and raw[2:].isdigit():
            count = raw[2:]
        elif _plain_operand(raw):
            files.append(raw)
        else:
            return ""
        i += 1
    if len(files) != 1 or (count and not count.isdigit()):
        return ""
    if not count:
        if program == "tail":
            return ""
        count = "10"
    flag = "--head-lines" if program == "head" else "--tail-lines"
    return f"rtk read {files[0]} {flag} {count}"


def rtk_spaced(suffix: str) -> str:
    """A trailing-redirect suffix with one space before it when it was glued to the last word."""
    return " " + suffix if suffix and suffix[0] not in IFS else suffix


# ---------------------------------------------------------------------------------------------
# pipelines (§3.4)


def rtk_tail_follows(argv: list[str]) -> bool:
    """True when a tail command follows its input: -f, -F, bundles holding f/F, --follow or an
    unambiguous prefix of it (`--f`, `--fo=x`)."""
    for arg in argv[1:]:
        if arg == "--":
            break
        if arg.startswith("--"):
            name = arg[2:].split("=", 1)[0]
            if name and "follow".startswith(name):
                return True
        elif arg.startswith("-") and ("f" in arg[1:] or "F" in arg[1:]):
            return True
    return False


def _short_bundles(argv: list[str]) -> list[str]:
    """Short option bundles of a grep/rg command, stopping at `--` and after `-e`/`-f` operands."""
    out: list[str] = []
    skip = False
    for arg in argv[1:]:
        if skip:
            skip = False
            continue
        if arg == "--":
            break
        if arg.startswith("-") and not arg.startswith("--") and len(arg) > 1:
            out.append(arg[1:])
            if arg[-1] in "ef" and len(arg) == 2:
                skip = arg[-1] == "e"
    return out


def rtk_search_pattern_file(argv: list[str]) -> bool:
    """grep/rg reads its patterns from a file (-f, --file, --file=)."""
    longs = any(a == "--file" or a.startswith("--file=") for a in argv[1:])
    return longs or any("f" in b for b in _short_bundles(argv))


_FILE_LIST_LONG = ("--files", "--files-with-matches", "--files-without-match", "--files-with-match")


def rtk_search_lists_files(argv: list[str]) -> bool:
    """grep/rg prints file names instead of lines (-l, -L, --files, --files-with-matches, …)."""
    if any(a.split("=", 1)[0] in _FILE_LIST_LONG for a in argv[1:]):
        return True
    # a bundle that also counts (-lc) prints counts, which the filter keeps
    return any(("l" in b or "L" in b) and "c" not in b for b in _short_bundles(argv))


_S, _B, _LS = "string", "bool", "list<string>"

#: The functions of this module (see rtk_policy.policy.functions for the mechanism).
FUNCTIONS: tuple[Function, ...] = (
    Function("rtk_read", (_S,), _S, rtk_read),
    Function("rtk_spaced", (_S,), _S, rtk_spaced),
    Function("rtk_tail_follows", (_LS,), _B, rtk_tail_follows),
    Function("rtk_search_pattern_file", (_LS,), _B, rtk_search_pattern_file),
    Function("rtk_search_lists_files", (_LS,), _B, rtk_search_lists_files),
)
