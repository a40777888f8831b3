"""The fast path: a source made only of plain words joined by `&&`, `||`, `|` and `;`, split without
tree-sitter.

Most commands an agent runs are `git status`, `cargo test --release 2>&1 | tail -5 && git diff`,
`git commit -m "fix: x"`: no expansion, no file redirect, one line. For such a source the syntax
tree is fully determined by the text, so `commands` cuts it with two regexes (the commonest,
unquoted words with blank-separated operators, with none: `_single_command`) and the walker emits
exactly the drafts the tree walk would (same words, redirects, operators, pipeline stages); when
none of them runs code, `assemble._plain` also knows the rest of the walk's findings. A plain word
is made of `[A-Za-z0-9_./:,+@%=-]` and quoted parts ('...' without a line break, "..." without `$`,
backquote, backslash or line break); an argument may also hold `~ * ?` or be the redirect `2>&1`.
Anything outside the narrow shape returns None and takes the tree-sitter walk: any other character
unquoted (a dollar, a backslash, a backquote, `> < & ( ) { } [ # !`, a line break, non-ASCII), a
reserved or declaration word as a program (`if`, `time`, `export`, also `for"x"`), a program or
assignment word tree-sitter-bash misreads (see `_ASSIGNMENT`), an operator at the start or end (a
trailing `;` excepted), `&`, `|&`, a pipeline stage starting with an assignment, more than
`MAX_COMMANDS` commands. `tests/test_shell_speedups.py` checks that both paths give identical
`CommandLine`s on every corpus and on generated variants.
"""

from __future__ import annotations

from rtk_policy.shell.model import Redirect
from rtk_policy.shell.words import Word, make_word
from rtk_policy.util import record
from rtk_policy.util.lazy_re import lazy

#: A quoted part of a word: single quotes hold anything but a line break; double quotes no
#: expansion, escape or line break either.
_QUOTED = r"""'[^'\n\r]*'|"[^"\\$`\n\r]*\""""
_WORD_CHARS = "[A-Za-z0-9_./:,+@%=~*?-]"


def _rest(chars: str) -> str:
    """The rest of a word: runs of `chars` and quoted parts, unrolled (`c*(?:q c*)*`) so that no
    two quantifiers compete for the same characters."""
    return rf"{chars}*(?:(?:{_QUOTED}){chars}*)*"


_WORD = rf"(?:{_WORD_CHARS}|{_QUOTED}){_rest(_WORD_CHARS)}"  #: any word of a plain source
#: Where a statement starts, tree-sitter-bash's lexer looks for an assignment and misreads some
#: words (`x@y` and `a+:` are ERROR nodes, a lone `-` vanishes, `y=||x` swallows the operator), so
#: a command is assignments of a narrow shape, then a program word of a narrow shape, then
#: arguments, which may hold any plain character but a leading `=` (`a ==` at the end is an ERROR),
#: also `~` and the globs `*` `?`, or be the redirect `2>&1`.
#: No two quantifiers compete for the same characters (`_rest`), so a long input that is not plain
#: fails in linear time with plain greedy quantifiers. (Possessive quantifiers would say the same,
#: but they match differently before later CPython 3.11 bug-fix releases: Debian 12's 3.11.2.)
_VALUE_CHARS = "[A-Za-z0-9_./:,=-]"
_ASSIGNMENT = rf"[A-Za-z_][A-Za-z0-9_]*\+?=(?:{_VALUE_CHARS}|{_QUOTED}){_rest(_VALUE_CHARS)}"
_PROGRAM = rf"(?:[A-Za-z0-9_./]|{_QUOTED}){_rest('[A-Za-z0-9_./-]')}"
_ARGUMENT = rf"(?:[A-Za-z0-9_./:,+@%~*?-]|{_QUOTED}){_rest(_WORD_CHARS)}"
#: (`_ASSIGNMENT` is tried first: `_PROGRAM` matches the `a` of `a=b`.)
_COMMAND = rf"(?:{_ASSIGNMENT}[ \t]+)*(?:{_ASSIGNMENT}|{_PROGRAM}(?:[ \t]+(?:2>&1|{_ARGUMENT}))*)"
_OP = r"&&|\|\||\||;"
_OPERATORS = frozenset({"&&", "||", "|", ";"})  #: the tokens `_OP` matches
_SHAPE = lazy(
    globals(), "_SHAPE", rf"[ \t]*{_COMMAND}(?:[ \t]*(?:{_OP})[ \t]*{_COMMAND})*[ \t]*(?:;[ \t]*)?"
)
_TOKEN = lazy(globals(), "_TOKEN", rf"2>&1|{_WORD}|{_OP}")
_ASSIGNMENT_RE = lazy(globals(), "_ASSIGNMENT_RE", _ASSIGNMENT)
#: the part of a word before its first quote
_UNQUOTED_HEAD = lazy(globals(), "_UNQUOTED_HEAD", r"[^'\"]*")
#: Words tree-sitter-bash reads as grammar (keywords, declaration commands) or that the walker
#: treats specially before parsing (`time`, `coproc`): a source with one as a program word takes the
#: tree walk (as an argument, `echo done`, it is a plain word).
RESERVED = frozenset(
    {
        "if",
        "then",
        "else",
        "elif",
        "fi",
        "case",
        "esac",
        "for",
        "select",
        "in",
        "while",
        "until",
        "do",
        "done",
        "function",
        "time",
        "coproc",
        "declare",
        "typeset",
        "export",
        "readonly",
        "local",
        "unset",
        "unsetenv",
    }
)
MAX_COMMANDS = 1000  #: well below the walker's MAX_SEGMENTS, so its list limits never apply
_new_tuple = tuple.__new__


class PlainRedirect(record.NamedTuple):
    """A `2>&1` of a plain command, with what the walker reads from a redirect node: its
    `Redirect`, its offsets and its (empty) heredoc body."""

    redirect: Redirect
    start: int
    end: int
    body: str = ""


STDERR_TO_STDOUT = Redirect(op=">&", fd=2, target="&1", is_file=False)
#: One command of a plain source: its words, its redirects, and the operators before and after it
#: ("" at an end).
PlainCommand = tuple[list[Word], list[PlainRedirect], str, str]


def commands(text: str, not_single: bool = False) -> list[PlainCommand] | None:
    """The commands of `text` when it has the plain shape, in source order; None when it has not
    (`not_single`: the caller knows `single_words(text)` is None)."""
    if len(text) > 2 * MAX_COMMANDS and (
        text.count("|") + text.count("&") + text.count(";") > 2 * MAX_COMMANDS + 2
    ):
        return None  # surely too many commands (or quoted operators): no regex over all of it
    single = _single_command(text, not_single)
    if single is not None:
        return single
    if _SHAPE.fullmatch(text) is None:
        return None
    out: list[PlainCommand] = []
    words: list[Word] = []
    redirects: list[PlainRedirect] = []
    before = ""
    program = True  # the next word that is not an assignment is a program word
    special = "'" in text or '"' in text or "*" in text or "?" in text  # else words need no dequote
    for m in _TOKEN.finditer(text):
        raw = m[0]  # a token is an operator, 2>&1 or a word: no word holds `&`, `|`, `;` or `>`
        if raw in _OPERATORS:
            out.append((words, redirects, before, raw))
            words, redirects, before, program = [], [], raw, True
            continue
        start = m.start()
        if raw == "2>&1":  # after the program word
            redirects.append(PlainRedirect(STDERR_TO_STDOUT, start, start + 4))
            continue
        quoted = special and ("'" in raw or '"' in raw)
        if program and ("=" not in raw or _ASSIGNMENT_RE.fullmatch(raw) is None):
            # tree-sitter reads `for"x"` as `for "x"`
            if (_UNQUOTED_HEAD.match(raw)[0] if quoted else raw) in RESERVED:
                return None
            program = False
        if quoted and "*" not in raw and "?" not in raw:
            words.append(_quoted_word(raw, start))
        elif special and (quoted or "*" in raw or "?" in raw):
            words.append(make_word(raw, start))
        else:  # no quoting: the value is the word as typed
            words.append(_new_tuple(Word, (raw, raw, start, start + len(raw), False, False, False)))
    if words:
        out.append((words, redirects, before, ""))
    if len(out) > MAX_COMMANDS or ("|" in text and "=" in text and not _stages_ok(out)):
        return None
    return out


def _quoted_word(raw: str, start: int) -> Word:
    """`make_word(raw, start)` for a plain word with quotes and no `*` or `?`: quoted, static, no
    glob, and when it holds one kind of quote only, its value is the word without them (a plain
    quoted part holds no escape or expansion, single quotes no `'`, double quotes no `"`)."""
    if "'" not in raw:
        value = raw.replace('"', "")
    elif '"' not in raw:
        value = raw.replace("'", "")
    else:  # `"don't"`: the dequoter tells the quotes apart
        return make_word(raw, start)
    return _new_tuple(Word, (raw, value, start, start + len(raw), False, False, True))


#: `_PROGRAM` and `_ARGUMENT` without quotes or globs (`_single_command`)
_PROGRAM_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./-")
_ARGUMENT_CHARS = _PROGRAM_CHARS | frozenset(":,+@%=~")
_SINGLE_CHARS = _ARGUMENT_CHARS | frozenset(" \t")


def single_words(text: str, base: int = 0) -> list[Word] | None:
    """The words of `text` when it is one command of unquoted words without globs (`git status`,
    `ls -la src/`): a program word of `_PROGRAM` characters not starting with `-` (so not an
    assignment), arguments of `_ARGUMENT` characters not starting with `=`, blanks around them.
    `_SHAPE` matches such a source and `_TOKEN` cuts it at its blanks, so the words are those
    `commands` finds; None for any other source (and for a blank one). `base` is added to the
    words' offsets (`text` is then a slice of the source starting there)."""
    if not _SINGLE_CHARS.issuperset(text):
        return None
    if "\t" in text:
        text = text.replace("\t", " ")
    if " =" in text:  # an argument starting with `=` (a program word never does: not `_PROGRAM`)
        return None
    words: list[Word] = []
    start = base
    for raw in text.split(" "):
        if raw:
            if not words and (
                raw[0] == "-" or not _PROGRAM_CHARS.issuperset(raw) or raw in RESERVED
            ):
                return None
            words.append(_new_tuple(Word, (raw, raw, start, start + len(raw), False, False, False)))
        start += len(raw) + 1
    return words or None


_SEQUENCE_CHARS = _SINGLE_CHARS | frozenset("&|;")


def _single_command(text: str, not_single: bool = False) -> list[PlainCommand] | None:
    """`commands(text)` without a regex for the commonest sources: one command of unquoted words
    without globs (`single_words`), or several joined by `&&`, `||`, `|` and `;` with blanks
    around each operator (`cd app && npm test`, `ls -la | head -20`); None for any other source
    (an operator glued to a word, at the start or the end, or after another, a quote, a glob,
    `2>&1`, an assignment: `commands` then runs the regexes); `not_single`: `single_words(text)`
    is known to be None."""
    words = None if not_single else single_words(text)
    if words is not None:
        return [(words, [], "", "")]
    if not _SEQUENCE_CHARS.issuperset(text):
        return None
    out: list[PlainCommand] = []
    before = ""
    piece = at = 0  # where the current command starts; where the next blank-separated token does
    for raw in text.replace("\t", " ").split(" "):
        if raw in _OPERATORS:
            words = single_words(text[piece:at], piece)
            if words is None:  # an operator at the start or after another, or a word not plain
                return None
            out.append((words, [], before, raw))
            before, piece = raw, at + len(raw)
        at += len(raw) + 1
    words = single_words(text[piece:], piece) if out else None
    if words is None or len(out) >= MAX_COMMANDS:
        return None
    out.append((words, [], before, ""))
    return out


def _stages_ok(cmds: list[PlainCommand]) -> bool:
    """False when a pipeline stage starts with an assignment: tree-sitter may read the stage as an
    assignment statement, which the walker marks as a compound joined to a pipe."""
    return not any(
        (before == "|" or after == "|") and "=" in words[0].raw for words, _, before, after in cmds
    )
