"""A regex lexer that splits text into simple commands the way RTK's permission splitter does
(§4.3).

It is the safety net for input tree-sitter cannot parse (and for lone carriage returns, which bash
keeps inside words but RTK treats as separators): every command it finds that the tree walk missed
becomes an extra segment, so `! >out;rm -rf /` still shows policies an `rm`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from rtk_policy.shell.draft import Ctx, Draft
from rtk_policy.shell.model import Redirect
from rtk_policy.shell.redirects import is_file_target
from rtk_policy.shell.source import Source
from rtk_policy.shell.words import Word, basename, make_word
from rtk_policy.shell.wrappers import peel

_TOKEN = re.compile(
    r"""
    (?P<ws>[ \t\v\f]+|\\\r?\n)
  | (?P<sep>(?:[ \t\v\f]*(?:\r?\n|\r|;;&|;;|;&|&&|\|\||\|&|[;&|()]))+)
  | (?P<redir>(?:[0-9]+|\{[A-Za-z_][A-Za-z0-9_]*\})?(?:&>>|&>|>>|>&|>\||<<<|<<-|<<|<&|<>|>|<)(?!\())
  | (?P<word>(?:[^\s;&|()<>"'`\\$]+|\\.|'[^']*'?|"(?:[^"\\]|\\.)*"?|`(?:[^`\\]|\\.)*`?
        |\$\((?:[^()]|\([^()]*\))*\)?|\$\{[^}]*\}?|\$'(?:[^'\\]|\\.)*'?
        |[<>]\((?:[^()]|\([^()]*\))*\)?|\$)+)
  | (?P<other>.)
    """,
    re.VERBOSE | re.DOTALL,
)
#: how deep the lexer looks into substitutions inside substitutions
MAX_NESTING = 8
_LEADING = frozenset(
    {"{", "}", "!", "if", "then", "else", "elif", "do", "while", "until", "time", "coproc"}
    | {"function"}
)
#: the reserved words `case` and `esac` where a word starts
_CASE_WORD = re.compile(r"(?<![^\s;&|(`])(?:case|esac)(?![^\s;&|)])")
#: the options of the reserved word `time` (`time -p -- rm -rf /` runs rm), in this order
_TIME_OPTIONS = frozenset({"-p", "--"})


class LexRedirect:
    """A redirect found by the lexer (same attributes the walker reads from tree-sitter ones)."""

    __slots__ = ("redirect", "start", "end", "body")

    def __init__(self, op_text: str, target: Word | None, start: int) -> None:
        m = re.match(r"([0-9]*)(.*)", op_text, re.DOTALL)
        fd_text, op = (m.group(1), m.group(2)) if m else ("", op_text)
        value = target.value if target else ""
        if op in (">&", "<&") and (value.isdigit() or value == "-"):
            value = "&" + value
        if op in ("<<", "<<-"):
            value = ""
        fd = int(fd_text) if fd_text and len(fd_text) < 10 else -1
        self.redirect = Redirect(op=op, fd=fd, target=value, is_file=is_file_target(op, value))
        self.start = start
        self.end = target.end if target else start + len(op_text)
        self.body = ""


def commands(
    text: str, lo: int = 0, hi: int | None = None
) -> Iterator[tuple[list[Word], list[LexRedirect], int, int]]:
    """Yield (words, redirects, start, end) for every simple command in `text[lo:hi]` (positions
    stay those of `text`)."""
    words: list[Word] = []
    redirs: list[LexRedirect] = []
    pending: tuple[str, int] | None = None
    after_time = False  # the words so far are a reserved `time` [-p]: its options come next
    after_function = False  # the word so far is `function`: a function's name comes next
    start = -1
    end = 0
    for m in _TOKEN.finditer(text, lo, len(text) if hi is None else hi):
        kind = m.lastgroup
        if kind == "ws":
            continue
        if kind in ("sep", "other"):
            if pending:
                redirs.append(LexRedirect(pending[0], None, pending[1]))
                pending = None
            if words or redirs:
                yield words, redirs, start, end
            words, redirs, start, after_time, after_function = [], [], -1, False, False
            continue
        if start < 0:
            start = m.start()
        end = m.end()
        if kind == "redir":
            if pending:
                redirs.append(LexRedirect(pending[0], None, pending[1]))
            pending = (m.group(0), m.start())
            continue
        w = make_word(m.group(0), m.start())
        if pending:
            redirs.append(LexRedirect(pending[0], w, pending[1]))
            pending = None
            continue
        if not words and after_function:  # `function NAME { …; }`: the name is no program
            after_function = False
            continue
        if not words and (w.raw in _LEADING or (after_time and w.raw in _TIME_OPTIONS)):
            after_time = w.raw == "time" or (after_time and w.raw == "-p")
            after_function = w.raw == "function"
            continue
        after_time = False
        words.append(w)
    if pending:
        redirs.append(LexRedirect(pending[0], None, pending[1]))
    if words or redirs:
        yield words, redirs, start, end


def has_lone_cr(text: str) -> bool:
    """True when `text` holds a carriage return not followed by a newline."""
    return "\r" in text and re.search(r"\r(?!\n)", text) is not None


def recover(walker: Any, src: Source, ctx: Ctx, first: int, limit: int) -> None:
    """Emit, through `walker`, every command of `src` the tree walk (drafts from `first`) missed."""
    seen = {
        (d.program_word.start, d.program)
        for d in walker.drafts[first:]
        if d.src is src and d.program_word is not None
    }
    safe = ctx._replace(no_rewrite=ctx.no_rewrite or "recovered from a syntax error")
    spans = [(0, len(src.text))]
    for _ in range(MAX_NESTING + 1):  # the text, then the bodies of its substitutions, ...
        inner: list[tuple[int, int]] = []
        for lo, hi in spans:
            # from the text, not from the lexer's words: a word ends at the first `)` of
            # `$( case a in a) rm -rf /;; esac )`, the scan of the text reads the case patterns
            inner.extend(substitution_bodies(src.text, lo, hi))
            for words, redirs, start, end in commands(src.text, lo, hi):
                if len(walker.drafts) >= limit:
                    walker.error("too many commands")
                    return
                p = peel(words, walker.transparent)
                prog = words[p.program_index] if p.program_index < len(words) else None
                if prog is None or (prog.start, basename(prog.value)) in seen:
                    continue
                seen.add((prog.start, basename(prog.value)))
                walker.emit(src, words, redirs, start, end, safe)
        spans = inner


def substitution_bodies(text: str, lo: int, hi: int) -> list[tuple[int, int]]:
    """The (start, end) of the code inside each `$( )`, `<( )`, `>( )` and backquote pair of
    `text[lo:hi]` (outermost only; single-quoted text has none)."""
    found = []
    i = lo
    while i < hi:
        c = text[i]
        if c == "\\":
            i += 2
        elif c == "'":
            close = text.find("'", i + 1, hi)
            i = hi if close < 0 else close + 1
        elif c in "$<>" and text.startswith("(", i + 1) and not text.startswith("((", i + 1):
            close = _closing(text, i + 2, hi)
            found.append((i + 2, close))
            i = close + 1
        elif c == "`":
            close = i + 1
            while close < hi and text[close] != "`":
                close += 2 if text[close] == "\\" else 1
            found.append((i + 1, min(close, hi)))
            i = close + 1
        else:
            i += 1
    return found


def _closing(text: str, lo: int, hi: int) -> int:
    """The index of the `)` closing a group opened just before `lo` (`hi` when it is missing).

    Parentheses between `case` and `esac` are the patterns' (`case a in a) rm -rf /;; esac`): they
    neither open nor close the group.
    """
    depth, cases = 1, 0
    i = lo
    while i < hi:
        c = text[i]
        if c in "ce" and (m := _CASE_WORD.match(text, i, hi)) is not None:
            cases = cases + 1 if m[0] == "case" else max(cases - 1, 0)
            i = m.end()
            continue
        if cases == 0 and c == "(":
            depth += 1
        elif cases == 0 and c == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return hi


def best_effort(walker: Any, src: Source, ctx: Ctx) -> None:
    """One segment for a command that gave none (`((`, `)`, `}`): the lexer's words, else the text.

    Permission rules run per segment; without one, a rule such as the baseline's parse-error ask
    would never see the input.
    """
    lines = (line.strip() for line in src.text.splitlines())
    if not any(line and not line.startswith("#") for line in lines):
        return  # blank or comments only
    words = [w for ws, _, _, _ in commands(src.text) for w in ws]
    if not words:
        stripped = src.text.strip()
        if not stripped:
            return
        words = [make_word(stripped, src.text.index(stripped))]
    safe = ctx._replace(no_rewrite=ctx.no_rewrite or "best effort after a parse error")
    if walker.emit(src, list(words), [], words[0].start, words[-1].end, safe) < 0:
        d = Draft(src, words[0].start, words[-1].end, words, [], safe, peel(words))  # only `)`…
        d.no_rewrite, d.index = safe.no_rewrite, len(walker.drafts)
        walker.drafts.append(d)
