"""Values bash knows before it runs a command: parameter expansion with the variables, positional
parameters and loop values the command itself set, brace expansion, and a line continuation
inside a word.

`expand_word` reads one word as typed and gives the words bash would run instead, with each
alternative value a variable may hold (`x=/ ... x=build`). A variable the command does not set is
unknown: it is taken as "/" (`GUESS`) and the alternative is marked guessed, so that a deny rule
that would match on it asks (`Segment.guessed`). Variables the policies read by name (`$HOME`,
`$PWD`, `$TMPDIR`, …) are kept as typed, and so is what cannot be known here without guessing a
path (`$(…)` but of an `echo` of literal words, `$?`, `$#`, `${#x}`).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import product

from rtk_policy.shell.braces import brace_expand, has_braces
from rtk_policy.shell.words import dequote, expansion_end
from rtk_policy.util import record
from rtk_policy.util.lazy_import import lazy_function

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rtk_policy.shell.known_output import known_output
else:  # on first use: only a substitution in a value needs it
    known_output = lazy_function(globals(), "known_output", "rtk_policy.shell.known_output")

#: the value an unknown variable is guessed to be: the worst case of the path rules
GUESS = "/"
#: variables the policies read by name, kept as typed unless the command sets them
KEEP = frozenset(
    {"HOME", "PWD", "OLDPWD", "TMPDIR", "TMP", "TEMP", "CLAUDE_PROJECT_DIR", "USER", "LOGNAME",
     "PATH", "SHELL", "RANDOM", "SECONDS", "LINENO", "BASH_SOURCE", "FUNCNAME", "IFS", "UID",
     "EUID", "HOSTNAME", "PPID", "BASHPID", "REPLY"}
)  # fmt: skip
#: of those, the ones that always hold an absolute path (`${PWD:0:1}` is "/")
ABSOLUTE = frozenset({"HOME", "PWD", "OLDPWD", "TMPDIR", "CLAUDE_PROJECT_DIR"})
MAX_ALTERNATIVES = 8  #: per word and per command
_FIELD = "\x00"  #: between the parameters of "$@", which stay words of their own

#: one alternative of an expansion: its text (None: kept as typed) and whether it was guessed
Choice = tuple[str | None, bool]
#: what a command knows: assigned names to their possible values (None: unknown)
Known = dict[str, tuple[str | None, ...]]


@record.frozen(eq=False, compile_after=record.PER_COMMAND)
class Expanded:
    """One alternative of a word: its fields (the words it becomes), whether a guess went into it,
    and whether a guess starts one of its fields (only then can it make a path like "/x")."""

    fields: list[str]
    guessed: bool
    guess_leads: bool
    changed: bool  #: an expansion in it was given a value


def needs_expansion(raw: str) -> bool:
    """Whether a word as typed holds something `expand_word` may change."""
    return "$" in raw or "`" in raw or "\\\n" in raw or ("{" in raw and ("," in raw or ".." in raw))


def expand_word(
    raw: str,
    known: Known,
    positional: Sequence[str] | None,
    assignment: bool = False,
) -> list[Expanded] | None:
    """The alternatives of a word as typed (at most `MAX_ALTERNATIVES`), or None when bash's value
    of it is not known better than as typed. `positional` holds $0, $1, … (None: unbound, as in a
    function body, whose calls are judged with their arguments). `assignment`: the value of
    NAME=VALUE (no splitting, no brace expansion)."""
    words = [raw] if assignment or not has_braces(raw) else brace_expand(raw)
    out: list[Expanded] = []
    changed = len(words) != 1 or words[0] != raw or "\\\n" in raw
    ifs = separators(known)
    for word in words:
        pieces = _pieces(word, known, positional)
        if pieces is None:
            return None
        if ifs is None and not assignment and any(p[0] == "exp" and not p[2] for p in pieces):
            return None  # an unquoted expansion split at separators the command set unknowably
        for combo in _combos(pieces):
            alt = _assemble(combo, split=not assignment, ifs=_BLANKS if ifs is None else ifs)
            changed = changed or alt.changed
            out.append(alt)
            if len(out) >= MAX_ALTERNATIVES:
                break
    return out if changed else None


# -- reading a word into pieces ------------------------------------------------------------------

Piece = tuple[str, object]  #: ("lit", text) | ("exp", [Choice…], quoted, typed)


def _pieces(raw: str, known: Known, positional: Sequence[str] | None) -> list | None:
    """The literal and expansion pieces of a word; None when it holds code (`$(…)`, backticks)."""
    out: list = []
    i, n = 0, len(raw)
    while i < n:
        c = raw[i]
        if c == "\\":
            if raw.startswith("\\\n", i):
                i += 2
                continue
            out.append(("lit", raw[i + 1 : i + 2]))
            i += 2
        elif c == "'":
            j = raw.find("'", i + 1)
            j = n if j < 0 else j
            out.append(("lit", raw[i + 1 : j]))
            i = j + 1
        elif c == "$" and raw.startswith("$'", i):
            j = _ansi_end(raw, i + 2)
            out.append(("lit", dequote(raw[i:j])[0]))
            i = j
        elif c == '"':
            i = _double(raw, i + 1, known, positional, out)
            if i < 0:
                return None
        elif c == "$" or c == "`":
            j = expansion_end(raw, i)
            choices = _parameter(raw[i:j], known, positional)
            if choices is None:
                return None
            out.append(("exp", choices, False, raw[i:j]))
            i = j
        else:
            j = i + 1
            while j < n and raw[j] not in "\\'\"$`":
                j += 1
            out.append(("lit", raw[i:j]))
            i = j
    return out


def _double(raw: str, i: int, known: Known, positional: Sequence[str] | None, out: list) -> int:
    """Read a "…" body from `i` into `out`; the index after it, or -1 when it holds code."""
    n = len(raw)
    while i < n:
        c = raw[i]
        if c == '"':
            return i + 1
        if c == "\\" and i + 1 < n:
            nxt = raw[i + 1]
            if nxt != "\n":
                out.append(("lit", nxt if nxt in '"\\$`' else "\\" + nxt))
            i += 2
        elif c == "$" or c == "`":
            j = expansion_end(raw, i)
            choices = _parameter(raw[i:j], known, positional)
            if choices is None:
                return -1
            out.append(("exp", choices, True, raw[i:j]))
            i = j
        else:
            out.append(("lit", c))
            i += 1
    return n


def _ansi_end(raw: str, i: int) -> int:
    """The index after a $'…' body that starts at `i`."""
    while i < len(raw):
        if raw[i] == "\\":
            i += 2
            continue
        if raw[i] == "'":
            return i + 1
        i += 1
    return len(raw)


# -- one parameter expansion ---------------------------------------------------------------------


def _parameter(text: str, known: Known, positional: Sequence[str] | None) -> list[Choice] | None:
    """The choices of `$name`, `${…}`, `$1`, `$@`: [(None, False)] keeps it as typed; None when it
    is code (`$(…)`, `$((…))`, backticks) whose output is not known (`known_output`)."""
    if text.startswith(("$(", "`")):
        out = known_output(text)
        return None if out is None else [(out, False)]
    if text == "$" or len(text) < 2:
        return [(text, False)]
    if not text.startswith("${"):
        return _lookup(text[1:], known, positional)
    body = text[2:-1] if text.endswith("}") else text[2:]
    if body.startswith(("#", "!")) and len(body) > 1:
        return [(None, False)]  # a length or an indirection: not a path the command shows
    name, op = _split_name(body)
    base = _lookup(name, known, positional)
    if not op or base is None:
        return base
    return [_operate(choice, name, op, known, positional) for choice in base][:MAX_ALTERNATIVES]


def _split_name(body: str) -> tuple[str, str]:
    """`x:-/` → ("x", ":-/"); `1` → ("1", ""); `@` → ("@", "")."""
    if body[:1] in "@*#?$!-0123456789" and body[:1]:
        if body[:1].isdigit():
            k = 1
            while k < len(body) and body[k].isdigit():
                k += 1
            return body[:k], body[k:]
        return body[:1], body[1:]
    k = 0
    while k < len(body) and (body[k].isalnum() or body[k] == "_"):
        k += 1
    return body[:k], body[k:]


def _lookup(name: str, known: Known, positional: Sequence[str] | None) -> list[Choice]:
    """The choices of a parameter by name (no operator)."""
    if not name:
        return [(None, False)]
    if name[0].isdigit() or name in ("@", "*", "#"):
        if positional is None:
            return [(None, False)]
        if name == "#":
            return [(str(max(0, len(positional) - 1)), False)]
        if name in ("@", "*"):  # "$@" keeps each parameter a word of its own (`_FIELD`)
            return [((_FIELD if name == "@" else " ").join(positional[1:]), False)]
        k = int(name)
        return [(positional[k] if k < len(positional) else "", False)]
    if name in known:
        values = known[name]
        return [(GUESS, True) if v is None else (v, False) for v in values] or [("", False)]
    if name in KEEP or not (name[0].isalpha() or name[0] == "_"):
        return [(None, False)]
    return [(GUESS, True)]


def _operate(
    choice: Choice, name: str, op: str, known: Known, positional: Sequence[str] | None
) -> Choice:
    """Apply a `${name…}` operator to one choice of its value."""
    value, guessed = choice
    for sign in (":-", ":=", "-", "="):
        if op.startswith(sign):
            word = _word_value(op[len(sign) :], known, positional)
            if value is None:
                return (None, False) if name in KEEP else (word, True)
            empty = value == "" or (guessed and sign.startswith(":"))
            if guessed:
                return (word if word is not None else GUESS, True)
            return (word, False) if empty and sign.startswith(":") else (value, False)
    if op.startswith((":+", "+")):
        word = _word_value(op[2:] if op.startswith(":") else op[1:], known, positional)
        if value is None or guessed:
            return (None, False) if value is None else (word, True)
        return (word if value else "", False)
    if op.startswith(":") and _substring(op[1:]) is not None:
        start, length = _substring(op[1:])  # type: ignore[misc]
        if value is None:
            absolute = name in ABSOLUTE and start == 0 and length is not None and length <= 1
            return ("/"[:length], False) if absolute else (GUESS, True)
        cut = value[start:] if length is None else value[start : start + length]
        return (cut, guessed)
    return (None, False) if value is None else (GUESS, True)


def _word_value(raw: str, known: Known, positional: Sequence[str] | None) -> str | None:
    """The value of the word in `${x:-WORD}` (its first alternative), None when not known."""
    alts = expand_word(raw, known, positional, assignment=True) if raw else None
    if alts is None:
        return dequote(raw)[0] if raw and "$" not in raw else ("" if not raw else None)
    return " ".join(alts[0].fields)


def _substring(spec: str) -> tuple[int, int | None] | None:
    """`0:1` → (0, 1), `2` → (2, None); None when it is not plain numbers."""
    parts = [p.strip() for p in spec.split(":")]
    try:
        nums = [int(p) for p in parts]
    except ValueError:
        return None
    if len(nums) == 1:
        return nums[0], None
    if len(nums) == 2:
        return nums[0], nums[1]
    return None


# -- putting a word together ---------------------------------------------------------------------


def _separates(char: str, ifs: str) -> bool:
    """Whether `char` (one character or "") ends a field where it starts or ends an expansion."""
    return char.isspace() if ifs == _BLANKS else bool(char) and char in ifs


def _combos(pieces: list) -> list[list]:
    """Every combination of the expansions' choices (at most `MAX_ALTERNATIVES`), each a list of
    ("lit", text) and ("exp", (choice, quoted, typed)) pieces."""
    slots = [[("exp", (c, p[2], p[3])) for c in p[1]] if p[0] == "exp" else [p] for p in pieces]
    out = []
    for combo in product(*slots):
        out.append([(kind, item) for kind, item in combo])
        if len(out) >= MAX_ALTERNATIVES:
            break
    return out


def separators(known: Known) -> str | None:
    """The characters unquoted expansions are split at: `IFS` as the command set it (" \\t\\n"
    when it did not); None when it set it to a value not known or to several."""
    values = known.get("IFS")
    if values is None:
        return _BLANKS
    return values[0] if len(set(values)) == 1 and values[0] is not None else None


def split_fields(text: str, ifs: str) -> list[str]:
    """The fields bash splits an unquoted expansion's `text` into at the `ifs` characters: blanks
    among them are trimmed and run together, each other one ends a field (`a,,b` is three)."""
    if ifs == _BLANKS:
        return text.split()
    if not ifs:
        return [text] if text else []
    blanks = "".join(c for c in ifs if c in _BLANKS)
    others = "".join(c for c in ifs if c not in _BLANKS)
    text = text.strip(blanks) if blanks else text
    if not text:
        return []
    import re  # only a command that sets IFS gets here

    white = f"[{re.escape(blanks)}]*" if blanks else ""
    parts = [f"{white}[{re.escape(others)}]{white}"] if others else []
    parts += [f"[{re.escape(blanks)}]+"] if blanks else []
    fields = re.split("|".join(parts), text)
    if fields and fields[-1] == "" and text[-1] in others:
        fields.pop()  # a separator at the end ends the last field, it starts none
    return fields


_BLANKS = " \t\n"


def _assemble(combo: list, split: bool, ifs: str = _BLANKS) -> Expanded:
    """The fields one combination of choices makes: unquoted expansions split at blanks, a word
    that only an unquoted empty expansion made vanishes."""
    fields = [""]
    guessed = leads = changed = False
    quoted_part = False
    for kind, item in combo:
        if kind == "lit":
            fields[-1] += item
            quoted_part = True
            continue
        (text, was_guessed), quoted, typed = item
        if text is None:
            text = typed
        else:
            changed = True
            if was_guessed:
                guessed = True
                leads = leads or fields[-1] == ""
        if (quoted or not split) and _FIELD in text and split:
            first, *rest = text.split(_FIELD)
            fields[-1] += first
            fields.extend(rest)
            quoted_part = True
            continue
        text = text.replace(_FIELD, " ")
        if quoted or not split:
            fields[-1] += text
            quoted_part = quoted_part or quoted
            continue
        parts = split_fields(text, ifs)
        if not parts:
            continue
        if _separates(text[:1], ifs) and fields[-1]:
            fields.append("")
        fields[-1] += parts[0]
        fields.extend(parts[1:])
        if _separates(text[-1:], ifs):
            fields.append("")
    if fields and fields[-1] == "" and len(fields) > 1:
        fields.pop()
    if fields == [""] and not quoted_part and split:
        fields = []
    return Expanded(fields, guessed, leads, changed)
