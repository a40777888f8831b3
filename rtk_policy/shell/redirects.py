"""Redirections: tree-sitter redirect nodes → `Redirect` values (op, fd, target, is_file)."""

from __future__ import annotations

from rtk_policy.shell.benign import here_string_head
from rtk_policy.shell.model import Redirect
from rtk_policy.shell.source import Source
from rtk_policy.shell.words import Word, make_word

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Protocol

    class ReadRedirect(Protocol):
        """What the walker reads of a redirect once found: a `RedirectNode`, or the plain path's
        `plainpath.PlainRedirect`."""

        @property
        def redirect(self) -> Redirect: ...  # noqa: D102
        @property
        def start(self) -> int: ...  # noqa: D102
        @property
        def end(self) -> int: ...  # noqa: D102
        @property
        def body(self) -> str: ...  # noqa: D102

REDIRECT_TYPES = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
_LIST_OPS = frozenset({"&&", "||", ";", "&", "|", "|&"})
_STATEMENTS = frozenset(
    {
        "command",
        "pipeline",
        "list",
        "redirected_statement",
        "subshell",
        "compound_statement",
        "negated_command",
        "if_statement",
        "while_statement",
        "for_statement",
        "case_statement",
        "function_definition",
        "declaration_command",
        "test_command",
    }
)
_DUP_OPS = frozenset({">&", "<&", ">&-", "<&-"})
_NOT_FILES = frozenset({"/dev/null"})
_OP_CHARS = frozenset("<>&|-")


def is_file_target(op: str, target: str) -> bool:
    """True when a redirect with operator `op` and dequoted `target` opens a real file."""
    if op in ("<<", "<<-", "<<<"):
        return False
    if target in _NOT_FILES:
        return False
    if target.startswith("&") and (target[1:].isdigit() or target[1:] == "-"):
        return False
    return True


class RedirectNode:
    """One redirect node read into a `Redirect`, its span, extra argument words and heredoc body."""

    __slots__ = ("redirect", "start", "end", "extra_words", "body", "node", "inner", "statements")

    def __init__(self, src: Source, node: Any) -> None:
        self.node = node
        self.extra_words: list[Word] = []
        self.inner: list[Any] = []  #: redirect nodes tree-sitter nests in a heredoc's (`<<EOF >f`)
        #: (operator, node) of commands tree-sitter nests in a heredoc's (`cat <<EOF | rm -rf /`)
        self.statements: list[tuple[str, Any]] = []
        op_before = ""
        self.body = ""
        op, fd, target = "", -1, ""
        start, end = src.span(node)
        dest_seen = False
        for c in node.children:
            t = c.type
            if t == "file_descriptor":
                fd = _int(src.slice(c))
            elif not c.is_named or (
                t == "ERROR" and not dest_seen and _OP_CHARS.issuperset(src.slice(c))
            ):
                if not dest_seen:
                    op += src.slice(c)
                elif t in _LIST_OPS:
                    op_before = t
            elif t == "heredoc_body":
                self.body = src.slice(c)
            elif t in REDIRECT_TYPES:
                self.inner.append(c)
            elif dest_seen and t in _STATEMENTS:
                self.statements.append((op_before, c))
            elif t == "heredoc_start":  # its delimiter is the target: later words are arguments
                dest_seen = True
            elif t in ("heredoc_end", "comment"):
                continue
            elif not dest_seen:
                dest_seen = True
                w = make_word(src.slice(c), src.char(c.start_byte))
                target = w.value
                end = w.end
            else:
                self.extra_words.append(make_word(src.slice(c), src.char(c.start_byte)))
        prev = node.prev_sibling if op == "<" else None
        if prev is not None and here_string_head(src, prev):  # `cmd >f <<< word` (see benign.py)
            op, start = "<<<", src.char(prev.start_byte)
        if op in ("<<", "<<-"):
            target = ""
        elif op in (">&", "<&") and (target.isdigit() or target == "-"):
            target = "&" + target
        elif op in (">&-", "<&-"):
            target = "&-"
        self.redirect = Redirect(op, fd, target, is_file_target(op, target))  # (positional: fast)
        self.start = start
        self.end = src.span(node)[1] if op in ("<<", "<<-") else end


def _int(text: str) -> int:
    """Parse a file descriptor number; -1 when it is not one ({var} forms)."""
    return int(text) if text.isdigit() and len(text) < 10 else -1


def read_redirects(src: Source, node: Any) -> list[RedirectNode]:
    """The redirect `node` and the redirects nested in it, in source order."""
    out: list[RedirectNode] = []
    stack = [node]
    while stack:
        rn = RedirectNode(src, stack.pop())
        out.append(rn)
        stack.extend(reversed(rn.inner))
    return out
