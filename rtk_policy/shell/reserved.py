"""Reserved words tree-sitter-bash misreads before a compound command: `! if …`, `time ( … )`.

tree-sitter-bash reads `! if true; then rm -rf /; fi` as the negated command `if true` followed by
the commands `then rm -rf /` and `fi`, and `time { rm -rf /; }` as the program `time` with the words
`{ rm -rf /`. Bash reads a compound command. `parse` finds these shapes in the syntax tree, blanks
the reserved words (`!`, `time`, `-p`, `--`) with spaces of the same byte length and parses again,
so that offsets stay valid and the compound's commands become segments. The statements that followed
a blanked `!` are remembered in `Source.negated_at` so that their segments stay `negated`; a blanked
`coproc` in `Source.coproc_at`. `misread` finds, after the walk, the commands other misreadings made
(the tree reports no error for them): the parser then treats the input as a syntax error.
"""

from __future__ import annotations

from rtk_policy.shell.simple import RUN_BY_EXEC
from rtk_policy.shell.source import Source
from rtk_policy.util.lazy_re import lazy

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rtk_policy.shell.draft import Draft

#: Words that open a compound command (after `!` or the reserved `time`).
_COMPOUND_OPENERS = frozenset(
    {"if", "while", "until", "for", "case", "select", "function", "{", "[[", "(("}
)
_HINT = lazy(globals(), "_HINT", rb"(?:^|[\s;&|(){}`])(?:!|time|coproc)[\s(]")
#: a coprocess name: `coproc NAME { …; }` (bash reads a NAME only before a compound command)
_NAME = lazy(globals(), "_NAME", r"[A-Za-z_][A-Za-z0-9_]*")
MAX_PASSES = 4


def parse(src: Source) -> Any:
    """Parse `src`, re-parsing with misread reserved words blanked; returns the root node."""
    root = src.parse()
    if not _HINT.search(src.data):
        return root
    for _ in range(MAX_PASSES):
        spans, negated = _misread(src, root)
        if not spans:
            break
        data = bytearray(src.parse_data)
        for s, e in spans:
            data[s:e] = b" " * (e - s)
        src.parse_data = bytes(data)
        src.negated_at = src.negated_at | negated
        src.coproc_at = src.coproc_at | {s for s, _ in spans if src.data.startswith(b"coproc", s)}
        root = src.parse()
    return root


def _misread(src: Source, root: Any) -> tuple[list[tuple[int, int]], frozenset[int]]:
    """Byte spans of misread reserved words, and the starts of statements a `!` negates."""
    spans: list[tuple[int, int]] = []
    negated: set[int] = set()
    stack = [root]
    while stack:
        n = stack.pop()
        if n.type == "negated_command":
            kids = n.children
            inner = next((c for c in kids if c.is_named), None)
            if inner is not None and kids[0].type == "!" and _opens_compound(src, inner):
                spans.append((kids[0].start_byte, kids[0].end_byte))
                negated.add(inner.start_byte)
        elif n.type == "command":
            spans.extend(_reserved_time(src, n) or _coproc(src, n))
        stack.extend(c for c in n.children if c.child_count)
    return spans, frozenset(negated)


def _word(src: Source, node: Any) -> bytes:
    """The bytes of a node as parsed (blanked words read as blanks)."""
    return src.parse_data[node.start_byte : node.end_byte]


def _opens_compound(src: Source, node: Any) -> bool:
    """A `command` node whose program word is a compound opener (tree-sitter's misreading)."""
    if node.type != "command" or not node.child_count:
        return False
    head = node.children[0]
    return head.type == "command_name" and _opener(_word(src, head).decode("latin-1"))


def _opener(text: str) -> bool:
    """A word that opens a compound command; tree-sitter-bash reads `{ {` (nested groups) as one
    word, so its first blank-separated part counts."""
    parts = text.split(None, 1)
    return bool(parts) and parts[0] in _COMPOUND_OPENERS


def _coproc(src: Source, node: Any) -> list[tuple[int, int]]:
    """The span of `coproc` (with its NAME) read as a program before a compound command.

    tree-sitter-bash reads `coproc { rm -rf /; }` and `coproc while …; do …; done` as the program
    `coproc` with words; bash runs the compound command as a coprocess.
    """
    kids = node.children
    if len(kids) < 2 or kids[0].type != "command_name" or _word(src, kids[0]) != b"coproc":
        return []
    nxt = _word(src, kids[1]).decode("latin-1")
    if kids[1].type == "word" and _opener(nxt):
        return [(kids[0].start_byte, kids[0].end_byte)]
    if (
        len(kids) > 2
        and kids[1].type == "word"
        and _NAME.fullmatch(nxt)
        and kids[2].type == "word"
        and _opener(_word(src, kids[2]).decode("latin-1"))
    ):
        return [(kids[0].start_byte, kids[1].end_byte)]
    return []


def _reserved_time(src: Source, node: Any) -> list[tuple[int, int]]:
    """Spans of `time [-p] [--]` (repeated) read as a program before a compound command or `!`, or
    of a second `!` read as a program.

    `time time -v git status` is left alone: before a simple command `time` stays a wrapper.
    """
    kids = node.children
    if len(kids) < 2 or kids[0].type != "command_name":
        return []
    if _word(src, kids[0]) == b"!":  # `! ! x`: the second `!` read as a program; bash negates twice
        return [(kids[0].start_byte, kids[0].end_byte)]
    if _word(src, kids[0]) != b"time":
        return []
    spans: list[tuple[int, int]] = []
    k = 0
    while k < len(kids) and (k == 0 or (kids[k].type == "word" and _word(src, kids[k]) == b"time")):
        start, end = kids[k].start_byte, kids[k].end_byte
        k += 1
        for option in (b"-p", b"--"):
            if k < len(kids) and kids[k].type == "word" and _word(src, kids[k]) == option:
                end = kids[k].end_byte
                k += 1
        spans.append((start, end))
    if k >= len(kids):
        return []
    nxt = kids[k]
    text = _word(src, nxt).decode("latin-1")
    if nxt.type == "subshell" or (
        nxt.type == "word" and (_opener(text) or text in ("!", "coproc"))
    ):
        return spans
    return []


#: Unquoted, these are grammar to bash, never the name of the program a command runs.
_GRAMMAR_WORDS = frozenset(
    {"if", "then", "elif", "else", "fi", "do", "done", "case", "esac", "while", "until", "for"}
    | {"select", "in", "function", "{", "}"}
)


def misread(drafts: list[Draft], first: int, src: Source) -> bool:
    """A command of `src` (drafts from `first`) that tree-sitter-bash misread: a program word with
    an unquoted blank (`time { { rm -rf /; }; }` once gave the program `{ {`) or that is grammar
    (`! # c` newline `if …; then rm -rf /; fi` gave the programs `if`, `then`, `fi`), or words
    split by a bare line break (`ls` newline `\\dd …` was read as one command: bash runs `dd`).
    The input is then treated as a syntax error and the recovery lexer looks again."""
    text = src.text
    for draft in drafts[first:]:
        if draft.src is not src:
            continue
        word = draft.program_word
        if word is not None and not (word.quoted or word.dynamic):
            if " " in word.raw or "\t" in word.raw or "\n" in word.raw:
                return True
        words = draft.words
        if words and words[0].raw in _GRAMMAR_WORDS and draft.ctx.no_rewrite != RUN_BY_EXEC:
            return True  # in bash's command position (`xargs then` runs a program `then`)
        if src.has_newline:
            if any(w.raw[:1] == "\n" for w in words):  # `\n\\dd`: a word never starts so
                return True
            for before, after in zip(words, words[1:]):  # noqa: B905 - pairs of neighbours
                gap = text[before.end : after.start]
                if "\n" in gap and not gap.rstrip(" \t\n").endswith("\\"):
                    return True
    return False
