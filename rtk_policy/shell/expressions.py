"""Test and arithmetic commands, `[[ … ]]` and `(( … ))`, as RTK's walker reads them (§3.3).

Inside them nothing is a command: `||`, `&&`, `;`, `(` and `)` belong to the expression, so no
`rtk` may be put there. tree-sitter-bash does not always see them (`time [[ -f a || ls ]]` is read
as the program `time` and a second command `ls ]]`), so the spans are found on the text:

- `[[` is a test command when it is a whole word in command position (at the start of a line, after
  an operator, `(`, `{`, `)`, or a reserved word: `!`, `time` and its `-p`/`--`, `if`, `then`,
  `elif`, `else`, `while`, `until`, `do`); it ends at the next whole word `]]` (`*]]` is a word of
  the expression). With no `]]` on the line, the rest of the line is the expression.
- `for NAME in …` and `select NAME in …`: the words of the list are word text, up to the `;`, `&`,
  `|` or newline that ends it (`for x in git status` runs no `git`).
- `((` in command position is an arithmetic command when the `)` that closes its second `(` is
  followed at once by another `)`; otherwise it opens two subshells (`((ls) )`). With no `)` to
  close the second `(` on the line, the rest of the line is the expression.
"""

from __future__ import annotations

from collections.abc import Sequence

from rtk_policy.shell.walk import line_of

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~4 ms on a cold hook)
if TYPE_CHECKING:
    from typing import Any

#: words after which the next word is still in command position
_RESERVED = frozenset({"!", "time", "if", "then", "elif", "else", "while", "until", "do"})
_TIME_OPTIONS = frozenset({"-p", "--"})
_BLANKS = " \t"
_ENDS = " \t\n;&|)"


def expression_spans(text: str) -> tuple[list[tuple[int, int]], list[int]]:
    """The (start, end) offsets of every test or arithmetic expression in `text`, and the offsets
    of the openers that no closer ends on their line."""
    text = blank_continuations(text)
    spans: list[tuple[int, int]] = []
    open_ended: list[int] = []
    at_command, after_time, i, n = True, False, 0, len(text)
    while i < n:
        c = text[i]
        if c in _BLANKS:
            i += 1
            continue
        if c in ";&|({)\n":
            if c == "(" and text.startswith("((", i) and at_command:
                close = _arithmetic_end(text, i)
                if close == -1:
                    open_ended.append(i)
                    i = _line_end(text, i)
                    continue
                if close:
                    spans.append((i + 2, close))
                    i, at_command = close + 2, False
                    continue
            at_command, after_time = True, False
            i += 1
            continue
        end = _word_end(text, i)
        if end == i:  # a redirection operator: `>`, `<`
            at_command, after_time, i = False, False, i + 1
            continue
        word = text[i:end]
        if at_command and word == "[[":
            close = _test_end(text, end)
            if close < 0:
                open_ended.append(i)
                i = _line_end(text, i)
                continue
            spans.append((end, close))
            i, at_command, after_time = close + 2, False, False
            continue
        if at_command and word in ("for", "select"):
            words = _list_of(text, end)  # `for x in a b`: the words after `in` are word text
            if words is not None:
                spans.append(words)
                i, at_command, after_time = words[1], False, False
                continue
        keep = word in _RESERVED or (after_time and word in _TIME_OPTIONS)
        after_time = word == "time" or (after_time and word == "-p")
        at_command = at_command and keep
        i = end
    return spans, open_ended


def mark_expressions(
    text: str, starts: Sequence[int], drafts: Sequence[Any], bad: dict[int, str]
) -> None:
    """Refuse the line of a `[[` or `((` that nothing closes on it (RTK reads the rest of the line
    as its expression), and mark the drafts inside a `[[ … ]]`, a `(( … ))` or a `for … in` word
    list (`expressions`)."""
    spans, open_ended = expression_spans(text)
    for off in open_ended:
        bad.setdefault(line_of(starts, off), "unterminated test or arithmetic command")
    if spans:
        for d in drafts:
            off = d.src.absolute(d.start) if d.src.base >= 0 else -1
            if any(start <= off < end for start, end in spans):
                d.no_rewrite = d.no_rewrite or "inside a test or arithmetic expression"


def _list_of(text: str, i: int) -> tuple[int, int] | None:
    """The span of the word list of a `for`/`select` whose keyword ends at `i` (`for NAME in …`,
    up to the `;`, `&`, `|` or newline that ends it), None when no `in` follows the name."""
    found: list[tuple[int, int]] = []
    j, n = i, len(text)
    while j < n and len(found) < 2:
        while j < n and text[j] in _BLANKS:
            j += 1
        end = _word_end(text, j)
        if end == j:
            return None
        found.append((j, end))
        j = end
    if len(found) < 2 or text[found[1][0] : found[1][1]] != "in":
        return None
    stop = j
    while stop < n and text[stop] not in ";&|\n":
        stop = max(_word_end(text, stop), stop + 1)
    return j, stop


def blank_continuations(text: str) -> str:
    """`text` with each backslash-newline turned into blanks of the same length (RTK joins the
    lines first, §3.1 step 3), so offsets stay those of `text`."""
    if "\\\n" not in text:
        return text
    return text.replace("\\\r\n", "   ").replace("\\\n", "  ")


def _word_end(text: str, i: int) -> int:
    """The end of the word at `i` (quotes and backslashes kept inside it)."""
    quote, n = "", len(text)
    while i < n:
        c = text[i]
        if quote:
            if c == quote:
                quote = ""
            elif c == "\\" and quote == '"':
                i += 1
        elif c == "\\":
            i += 1
        elif c in "'\"":
            quote = c
        elif c in _ENDS or c in "(<>":
            break
        i += 1
    return min(i, n)


def _line_end(text: str, i: int) -> int:
    end = text.find("\n", i)
    return len(text) if end < 0 else end


def _test_end(text: str, i: int) -> int:
    """The offset of the word `]]` closing a `[[` whose word ends at `i` (-1: none on the line)."""
    n = len(text)
    while i < n and text[i] != "\n":
        if text[i] in _BLANKS:
            i += 1
            continue
        end = _word_end(text, i)
        if end == i:  # an operator or parenthesis of the expression
            i += 1
            continue
        if text[i:end] == "]]":
            return i
        i = end
    return -1


def _arithmetic_end(text: str, i: int) -> int:
    """For `((` at `i`: the offset of the `))` that closes it, 0 when the `(`s open subshells, -1
    when the second `(` is not closed on the line."""
    depth, quote, j, n = 1, "", i + 2, len(text)
    while j < n:
        c = text[j]
        if quote:
            if c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c == "\n":
            return -1
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return j if text.startswith("))", j) else 0
        j += 1
    return -1


#: compound openers and the word that closes each
_CLOSER = {"while": "done", "until": "done", "for": "done", "select": "done", "if": "fi",
           "case": "esac", "{": "}", "[[": "]]"}  # fmt: skip


def coproc_body_end(text: str, at: int) -> int:
    """The end of the body of the `coproc` whose word starts at `at`: the closing `)` of a
    subshell, the closer of a compound command (after an optional NAME), or the operator that
    ends a simple command; the end of the line when nothing closes it (§3.3 `coproc`)."""
    text = blank_continuations(text)
    i = _skip_blanks(text, at + len("coproc"))
    first = text[i : _word_end(text, i)]
    if first not in _CLOSER and text[i : i + 1] != "(":
        after = _skip_blanks(text, _word_end(text, i))
        second = text[after : _word_end(text, after)]
        if second in _CLOSER or text[after : after + 1] == "(":
            i, first = after, second  # `coproc NAME while …` / `coproc NAME ( … )`
    if text[i : i + 1] == "(":
        return _paren_end(text, i)
    if first in _CLOSER:
        return _compound_end(text, i)
    return _simple_end(text, i)


def _skip_blanks(text: str, i: int) -> int:
    while i < len(text) and text[i] in _BLANKS:
        i += 1
    return i


def _paren_end(text: str, i: int) -> int:
    """The offset after the `)` that closes the `(` at `i` (the line's end when none does)."""
    depth, quote, j = 0, "", i
    while j < len(text) and (quote or text[j] != "\n"):
        c = text[j]
        if quote:
            quote = "" if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return _line_end(text, i)


def _compound_end(text: str, i: int) -> int:
    """The offset after the word that closes the compound command whose opener is at `i`."""
    pending: list[str] = []
    j = i
    while j < len(text) and text[j] != "\n":
        if text[j] in _BLANKS or text[j] in ";&|()<>":
            j += 1
            continue
        end = max(_word_end(text, j), j + 1)
        word = text[j:end]
        if word in _CLOSER:
            pending.append(_CLOSER[word])
        elif pending and word == pending[-1]:
            pending.pop()
            if not pending:
                return end
        j = end
    return _line_end(text, i)


def _simple_end(text: str, i: int) -> int:
    """The offset of the operator that ends the simple command starting at `i`."""
    j = i
    while j < len(text) and text[j] not in ";&|\n":
        j = max(_word_end(text, j), j + 1)
    return j
