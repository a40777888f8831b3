"""Shell words: dequoting, expansion and glob detection, assignment and basename helpers.

The dequoter works on the word as typed, so it serves tree-sitter words and best-effort words cut
from ERROR nodes alike. Expansions (``$X``, ``${X}``, ``$(...)``, backticks) are kept verbatim in
the value and reported, so callers can tell a literal program name from a dynamic one.
"""

from __future__ import annotations

from rtk_policy.util import record
from rtk_policy.util.lazy_re import lazy

_NAME_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_SPECIAL_PARAMS = frozenset("0123456789@*#?$!-")
_GLOB_CHARS = frozenset("*?[")
_PLAIN_RUN = lazy(globals(), "_PLAIN_RUN", r"[^\\'\"$`]+")
#: A character `dequote` acts on: a word without one is its own value, static, no glob, unquoted.
_NEEDS_DEQUOTE = lazy(globals(), "_NEEDS_DEQUOTE", r"[\\'\"$`*?\[]")
_ASSIGNMENT_RE = lazy(globals(), "_ASSIGNMENT_RE", r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
#: the code after a backslash in `$'…'`: hex, octal, `\u` and `\U` escapes
_ANSI_CODE = lazy(
    globals(), "_ANSI_CODE", r"x[0-9A-Fa-f]{1,2}|[0-7]{1,3}|u[0-9A-Fa-f]{1,4}|U[0-9A-Fa-f]{1,8}"
)
_ANSI_SIMPLE = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


class Word(record.NamedTuple):
    """One shell word: as typed (`raw`), dequoted (`value`), its offsets and what it contains.

    A named tuple rather than a record: a 1 MiB command has ~350k words, and building them is most
    of the stage's own time.
    """

    raw: str  #: the word as typed
    value: str  #: the word after quote removal (expansions kept verbatim)
    start: int  #: the offset of `raw` in its source
    end: int  #: the offset just after `raw`
    dynamic: bool  #: contains an unquoted-or-double-quoted expansion ($X, ${X}, $( ), backticks)
    glob: bool  #: contains an unquoted glob character (* ? [)
    quoted: bool  #: contains a quote or a backslash escape


_new_tuple = tuple.__new__


def make_word(raw: str, start: int) -> Word:
    """Build a `Word` from its text as typed and its start offset."""
    if raw.isalnum() or _NEEDS_DEQUOTE.search(raw) is None:  # the common case: nothing to remove
        return _new_tuple(Word, (raw, raw, start, start + len(raw), False, False, False))
    value, dynamic, glob, quoted = dequote(raw)
    return Word(raw, value, start, start + len(raw), dynamic, glob, quoted)


def dequote(raw: str) -> tuple[str, bool, bool, bool]:
    """Remove shell quoting from `raw`: returns (value, has_expansion, has_glob, was_quoted)."""
    if not raw or raw.isalnum():
        return raw, False, False, False
    out: list[str] = []
    dynamic = glob = quoted = False
    i, n = 0, len(raw)
    while i < n:
        c = raw[i]
        if c == "\\":
            quoted = True
            if i + 1 < n:
                if raw[i + 1] == "\n":
                    i += 2
                    continue
                if raw.startswith("\r\n", i + 1):
                    i += 3
                    continue
                out.append(raw[i + 1])
            i += 2
        elif c == "'":
            quoted = True
            j = raw.find("'", i + 1)
            j = n if j < 0 else j
            out.append(raw[i + 1 : j])
            i = j + 1
        elif c == '"':
            quoted = True
            i, dyn = _double_quoted(raw, i + 1, out)
            dynamic = dynamic or dyn
        elif c == "$" and i + 1 < n and raw[i + 1] == "'":
            quoted = True
            i = _ansi_c(raw, i + 2, out)
        elif c == "$" and i + 1 < n and raw[i + 1] == '"':
            quoted = True
            i, dyn = _double_quoted(raw, i + 2, out)
            dynamic = dynamic or dyn
        elif c == "$" or c == "`":
            i, dyn = _expansion(raw, i, out)
            dynamic = dynamic or dyn
        else:
            m = _PLAIN_RUN.match(raw, i)
            j = m.end() if m and m.end() > i else i + 1
            run = raw[i:j]
            if not glob and any(g in run for g in _GLOB_CHARS):
                glob = True
            out.append(run)
            i = j
    return "".join(out), dynamic, glob, quoted


def _double_quoted(raw: str, i: int, out: list[str]) -> tuple[int, bool]:
    """Dequote a "..." body starting at `i`; return the index after the closing quote."""
    n = len(raw)
    dynamic = False
    while i < n:
        c = raw[i]
        if c == '"':
            return i + 1, dynamic
        if c == "\\" and i + 1 < n:
            nxt = raw[i + 1]
            if nxt == "\n":
                i += 2
                continue
            out.append(nxt if nxt in '"\\$`' else "\\" + nxt)
            i += 2
        elif c == "$" or c == "`":
            i, dyn = _expansion(raw, i, out)
            dynamic = dynamic or dyn
        else:
            out.append(c)
            i += 1
    return n, dynamic


def _expansion(raw: str, i: int, out: list[str]) -> tuple[int, bool]:
    """Copy the `$...` or backtick expansion at `i` to `out` as written; return the index after it
    and whether it is dynamic (anything but a lone `$`)."""
    j = expansion_end(raw, i)
    out.append(raw[i:j])
    return j, j > i + 1 or raw[i] == "`"


def _ansi_c(raw: str, i: int, out: list[str]) -> int:
    """Decode a $'...' body starting at `i`; return the index after the closing quote."""
    n = len(raw)
    while i < n:
        c = raw[i]
        if c == "'":
            return i + 1
        if c == "\\" and i + 1 < n:
            nxt = raw[i + 1]
            if nxt in _ANSI_SIMPLE:
                out.append(_ANSI_SIMPLE[nxt])
                i += 2
                continue
            m = _ANSI_CODE.match(raw, i + 1)
            if m:
                code = m.group(0)
                base, digits = (8, code) if code[0] in "01234567" else (16, code[1:])
                try:
                    out.append(chr(int(digits, base)))
                except (ValueError, OverflowError):
                    out.append("\ufffd")
                i += 1 + len(code)
                continue
            out.append("\\" + nxt)
            i += 2
        else:
            out.append(c)
            i += 1
    return n


def expansion_end(raw: str, i: int) -> int:
    """Return the end of the expansion starting at raw[i] ("$" or "`"); i+1 for a lone "$"."""
    n = len(raw)
    if raw[i] == "`":
        j = i + 1
        while j < n and raw[j] != "`":
            j += 2 if raw[j] == "\\" else 1
        return min(j + 1, n)
    if i + 1 >= n:
        return i + 1
    c = raw[i + 1]
    if c in "({":
        return _balanced_end(raw, i + 1, c, ")" if c == "(" else "}")
    if c in _NAME_START:
        j = i + 2
        while j < n and (raw[j].isalnum() or raw[j] == "_") and raw[j].isascii():
            j += 1
        return j
    if c in _SPECIAL_PARAMS:
        return i + 2
    return i + 1


def _balanced_end(raw: str, i: int, open_c: str, close_c: str) -> int:
    """The index after the bracket matching raw[i], skipping quotes; len(raw) if unbalanced."""
    depth, j, n = 0, i, len(raw)
    while j < n:
        c = raw[j]
        if c == "\\":
            j += 2
            continue
        if c == "'":
            k = raw.find("'", j + 1)
            j = n if k < 0 else k + 1
            continue
        if c == open_c:
            depth += 1
        elif c == close_c:
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return n


def assignment_name(raw: str) -> str | None:
    """Return NAME (with "+" for +=) when `raw` is a shell assignment word NAME=value, else None."""
    if "=" not in raw:
        return None
    m = _ASSIGNMENT_RE.match(raw)
    if not m:
        return None
    name = m.group(0)[:-1]
    return name


def split_assignment(value: str) -> tuple[str, str]:
    """Split a dequoted assignment "NAME=value" into (NAME, value); "NAME+" keeps the "+"."""
    name, _, rest = value.partition("=")
    return name, rest


def basename(path: str) -> str:
    """The last path component of `path` ("rm" for "/bin/rm"); `path` itself if it ends in "/"."""
    if "/" not in path:
        return path
    return path.rsplit("/", 1)[-1] or path


def program_name(value: str) -> str:
    """The program a program word names, as the packs name programs: its basename, lower-cased and
    without `.exe` (and, for a Windows path `C:\\…\\git.exe`, its last part) when it is spelt as
    a case-insensitive file system (macOS's default) or Git for Windows also finds it: `RM` and
    `rm.exe` run rm there. `spelt_otherwise` tells whether the word was folded."""
    name = basename(value)
    if name.islower() and "\\" not in name and not name.endswith(".exe"):
        return name  # the common case: nothing to fold
    if "\\" in name and name[1:2] == ":" and name[:1].isalpha():
        name = name.rsplit("\\", 1)[-1]
    if not name.replace(".", "a").replace("-", "a").replace("_", "a").replace("+", "a").isalnum():
        return name  # `$EDITOR`, `A=1`, `"x y"`: no program name a file system would fold
    name = name.lower()
    return name[:-4] if name.endswith(".exe") and len(name) > 4 else name


def spelt_otherwise(value: str, name: str | None = None) -> bool:
    """Whether a program word names its program in another spelling (`program_name` folds it);
    `name` is its `program_name` when the caller knows it (`Peel.program`)."""
    return (program_name(value) if name is None else name) != basename(value)


#: why a command whose program is spelt otherwise is never rewritten (`RM`, `git.exe`, `HEAD`:
#: the rewrite of `HEAD url`, lwp-request on Linux, to `rtk head` would change the command)
SPELT_OTHERWISE = "program spelt otherwise (case, .exe or a Windows path)"


def is_path_spelled(word: Word) -> bool:
    """True when the word names its program by a path ("/usr/bin/env", "./x"), not a bare name."""
    return "/" in word.value
