"""A quote-aware character scan of the raw input, the way RTK's lexer sees it (reference §3.1–§3.2,
§4.6).

One linear pass records what RTK decides on text rather than on a syntax tree: substitutions outside
single quotes, unquoted process substitutions and heredoc operators, ANSI-C quoting divergence,
unquoted newlines (physical line breaks; a backslash-newline is a continuation, not a break) and
whether a quote is left open. Comments are not special here, as in RTK's lexer: an apostrophe in a
comment opens a quote.
"""

from __future__ import annotations

from rtk_policy.util import record
from rtk_policy.util.lazy_re import lazy

_SPECIAL = lazy(globals(), "_SPECIAL", r"[\\`$\"'\n<>]")
_DQ_SPECIAL = lazy(globals(), "_DQ_SPECIAL", r"[\\`$\"]")


@record.mutable(compile_after=record.PER_COMMAND)
class Scan:
    """Facts about the raw text."""

    command_sub: bool = False  #: `$(` (not `$((`) or a backtick outside single quotes
    arith: bool = False  #: `$((` outside single quotes
    process_sub: bool = False  #: unquoted `<(` or `>(`
    heredoc: bool = False  #: unquoted `<<` (also the start of `<<<`)
    ansi_c_divergence: bool = False  #: `$'...\'...'`
    ansi_c_multiline_escape: bool = False  #: such a string also spans lines
    open_quote: bool = False  #: the input ends inside a quote
    breaks: list[int] = record.Factory(list)  #: offsets of unquoted newlines


#: what `scan` finds in a plain source (`plainpath.commands`): nothing, since a plain source holds
#: no backslash, expansion, `<`, line break or unbalanced quote, and single quotes hide the rest
_PLAIN = Scan()


def plain_scan() -> Scan:
    """The `Scan` of every plain source (one shared object: read it, never change it)."""
    return _PLAIN


def scan(text: str) -> Scan:
    """Scan `text` once; never raises."""
    s = Scan(False, False, False, False, False, False, False, [])  # positional: no binding
    i, n = 0, len(text)
    dq = False  # inside "..."
    while i < n:
        m = (_DQ_SPECIAL if dq else _SPECIAL).search(text, i)
        if m is None:
            break
        i = m.start()
        c = text[i]
        if c == "\\":
            i += 3 if text.startswith("\r\n", i + 1) else 2
            continue
        if c == "`":
            s.command_sub = True
        elif c == "$" and i + 1 < n and text[i + 1] == "(":
            if text.startswith("((", i + 1):
                s.arith = True
            else:
                s.command_sub = True
        elif dq:
            if c == '"':
                dq = False
        elif c == '"':
            dq = True
        elif c == "'":
            if i > 0 and text[i - 1] == "$" and _unescaped_dollar(text, i - 1):
                i = _ansi_c(text, i + 1, s)
                continue
            j = text.find("'", i + 1)
            if j < 0:
                s.open_quote = True
                return s
            i = j + 1
            continue
        elif c == "\n":
            s.breaks.append(i)
        elif c in "<>" and i + 1 < n:
            nxt = text[i + 1]
            if nxt == "(":
                s.process_sub = True
            elif c == "<" and _next_significant(text, i + 1) == "<":
                s.heredoc = True
        i += 1
    s.open_quote = s.open_quote or dq
    return s


def _unescaped_dollar(text: str, k: int) -> bool:
    """True when the "$" at `k` is not itself escaped by a backslash."""
    back = 0
    while k - back - 1 >= 0 and text[k - back - 1] == "\\":
        back += 1
    return back % 2 == 0


def _ansi_c(text: str, i: int, s: Scan) -> int:
    """Skip a $'...' body from `i`; note escaped quotes. Returns the index after the close."""
    n = len(text)
    escaped_quote = newline = False
    while i < n:
        c = text[i]
        if c == "\\" and i + 1 < n:
            if text[i + 1] == "'":
                escaped_quote = True
            i += 2
            continue
        if c == "\n":
            newline = True
        if c == "'":
            break
        i += 1
    else:
        s.open_quote = True
    if escaped_quote:
        s.ansi_c_divergence = True
        s.ansi_c_multiline_escape = s.ansi_c_multiline_escape or newline
    return i + 1


def _next_significant(text: str, i: int) -> str:
    """The character at `i`, looking through backslash-newline continuations."""
    n = len(text)
    while i < n and text[i] == "\\" and i + 1 < n and text[i + 1] in "\r\n":
        i += 3 if text.startswith("\r\n", i + 1) else 2
    return text[i] if i < n else ""
