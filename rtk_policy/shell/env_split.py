"""GNU `env -S STRING`: the words env splits STRING into, as the text of the command it runs.

env replaces the -S word by the words of STRING and goes on with the words after it, so
`env -S 'PATH=/usr/bin' git reset --hard` runs `git reset --hard` and `env -S 'rm -rf' /` runs
`rm -rf /`. STRING is not shell code: blanks separate words, '…' is literal but for `\\` and `\\'`,
"…" and bare text decode `\\t \\n \\v \\f \\r \\\\ \\" \\' \\$ \\# \\_` (`\\_` is a blank outside
double quotes, a space inside), `\\c` ends STRING, `#` at a word's start begins a comment, and
`${NAME}` is expanded from the environment (`$NAME` is an error, as any other escape is).
"""

from __future__ import annotations

from collections.abc import Sequence

from rtk_policy.shell.words import Word

_ESCAPES = {"t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r"}
_LITERAL = "\\\"'$#"  #: characters a backslash stands for as themselves


def env_command(string: Word, rest: Sequence[Word]) -> Word:
    """The command `env -S STRING REST…` runs, as a word whose value is its bash text: `env`, the
    words of STRING quoted, then REST as typed (env reads options and assignments in STRING too:
    `env -S '-i A=1' rm -rf /`); STRING itself as bash, with REST, when env would refuse it."""
    words = split(string.value)
    head = string.value if words is None else " ".join(["env", *words])
    text = " ".join([head, *(w.raw for w in rest)]) if rest else head
    return string._replace(value=text, dynamic=string.dynamic or any(w.dynamic for w in rest))


def split(text: str) -> list[str] | None:
    """The words of an `env -S` string, each quoted for bash (a `${NAME}` as `"${NAME}"`); None
    for a string env refuses (an unknown escape, `$NAME`, an open quote)."""
    words: list[str] = []
    word: list[str] = []  #: the current word: literal characters and `"${NAME}"` pieces
    started = False
    quote = ""
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if not quote and c in " \t\n\v\f\r":
            if started:
                words.append(_quoted(word))
            word, started = [], False
            i += 1
            continue
        if not quote and c == "#" and not started:
            break
        if c in "'\"" and (not quote or quote == c):
            quote = "" if quote else c
            started = True
            i += 1
            continue
        if c == "\\" and i + 1 < n and (quote != "'" or text[i + 1] in "\\'"):
            e = text[i + 1]
            if e == "c" and not quote:
                break
            if e == "_" and not quote:
                if started:
                    words.append(_quoted(word))
                word, started = [], False
            elif e in _ESCAPES and quote != "'" or e in _LITERAL or e == "_":
                word.append(_ESCAPES.get(e, " " if e == "_" else e))
                started = True
            else:
                return None
            i += 2
            continue
        if c == "$" and quote != "'":
            end = text.find("}", i)
            if not text.startswith("${", i) or end < 0:
                return None
            word.append('"' + text[i : end + 1] + '"')
            started = True
            i = end + 1
            continue
        word.append(c)
        started = True
        i += 1
    if quote:
        return None
    if started:
        words.append(_quoted(word))
    return words


def _quoted(pieces: list[str]) -> str:
    """A word's pieces as one bash word: runs of literal characters quoted (`shlex.quote`), the
    `"${NAME}"` pieces (more than one character each) as they are."""
    from shlex import quote  # only an `env -S` command gets here

    out: list[str] = []
    run: list[str] = []
    for piece in [*pieces, ""]:
        if len(piece) == 1:
            run.append(piece)
            continue
        if run:
            out.append(quote("".join(run)))
            run = []
        out.append(piece)
    return "".join(out) or "''"
