"""Redirected statements: trailing redirects go to the command bash gives them to.

tree-sitter-bash reads `ls && echo x > /dev/sda` as `(ls && echo x) > /dev/sda` and `ls | cat > f`
as `(ls | cat) > f`; bash binds the redirect to the last simple command. `RedirectedMixin` hands
such redirects to the rightmost statement of the list or pipeline, where they become part of that
command's segment (its `redirects` and `suffix`).

A redirect on a compound command (`while …; done < .env`, `{ …; } > /dev/sda`, `( … ) 2>&1`) applies
to every command inside it, so it is added to the `redirects` of every segment the compound yields,
nested ones included (their `text` and `suffix` stay as typed: the redirect lies outside them). The
`CommandLine` facts (`has_file_redirect`, …) count it once.
"""

from __future__ import annotations

from collections.abc import Sequence

from rtk_policy.shell.draft import Ctx, Draft
from rtk_policy.shell.redirects import REDIRECT_TYPES, read_redirects
from rtk_policy.shell.simple import SKIP_TYPES
from rtk_policy.shell.source import Source
from rtk_policy.util import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rtk_policy.shell.redirects import ReadRedirect

_SIMPLE = frozenset({"command", "variable_assignment"})
_CHAINS = frozenset({"list", "pipeline", "negated_command"})


class Span(record.NamedTuple):
    """A byte span standing in for a node (a command together with redirects outside its node)."""

    start_byte: int
    end_byte: int


class RedirectedMixin:
    """Redirected statements for the walker (expects the attributes `parser.Walker` sets)."""

    drafts: list[Draft]
    compound_redirects: list[tuple[Any, int]]
    trailing: dict[tuple[int, int, int, str], tuple[list[Any], int]]

    def statement(self, src: Source, node: Any, ctx: Ctx) -> None:  # pragma: no cover - Walker
        """Dispatch one statement (implemented by the walker)."""
        raise NotImplementedError

    def simple(
        self, src: Source, kids: Sequence[Any], span: Any, ctx: Ctx
    ) -> None:  # pragma: no cover
        """Emit one simple command (implemented by the walker)."""
        raise NotImplementedError

    def emit(self, src: Source, words: list, redirs: Sequence[ReadRedirect], start: int, end: int,
             ctx: Ctx) -> int:  # pragma: no cover  # fmt: skip
        """Append one draft (implemented by the walker)."""
        raise NotImplementedError

    def substitutions(self, src: Source, node: Any, ctx: Ctx) -> None:  # pragma: no cover
        """Walk the substitutions below a node (implemented by the walker)."""
        raise NotImplementedError

    def redirected(self, src: Source, node: Any, ctx: Ctx) -> None:
        """A redirected statement: its body with its redirects."""
        redirs = [c for c in node.children if c.type in REDIRECT_TYPES]
        self.with_redirects(src, node.child_by_field_name("body"), redirs, node, ctx)

    def take_trailing(self, src: Source, node: Any, ctx: Ctx) -> bool:
        """Walk `node` with the redirects a misread list left for it; False when there are none."""
        hit = self.trailing.pop((id(src), node.start_byte, node.end_byte, node.type), None)
        if hit is None:
            return False
        redirs, end = hit
        self.with_redirects(src, node, redirs, Span(node.start_byte, end), ctx)
        return True

    def with_redirects(
        self, src: Source, body: Any, redirs: list[Any], span: Any, ctx: Ctx
    ) -> None:
        """Walk `body` with `redirs` (nodes) typed after it; `span` covers both."""
        while body is not None and body.type == "redirected_statement":
            own = [c for c in body.children if c.type in REDIRECT_TYPES]
            redirs = own + redirs
            body = body.child_by_field_name("body")
        if body is None or body.type in _SIMPLE:
            kids = list(body.children) if body is not None and body.type == "command" else []
            if body is not None and body.type == "variable_assignment":
                kids = [body]
            self.simple(src, kids + redirs, span, ctx)
            return
        first = len(self.drafts)
        last = _rightmost(body) if body.type in _CHAINS else None
        if last is not None:
            key = (id(src), last.start_byte, last.end_byte, last.type)
            self.trailing[key] = (redirs, span.end_byte)
            self.statement(src, body, ctx)
            if self.trailing.pop(key, None) is None:
                return  # the last command took them
            # not reached (a limit stopped the walk): the redirects count for the whole chain
        else:
            self.statement(src, body, ctx)
        self._compound_redirects(src, redirs, first, ctx)

    def _compound_redirects(self, src: Source, redirs: list[Any], first: int, ctx: Ctx) -> None:
        """Note redirects of a compound command and add them to the segments it yielded."""
        inner = self.drafts[first:]
        for r in redirs:
            for rn in read_redirects(src, r):
                self.compound_redirects.append((rn.redirect, src.absolute(rn.start)))
                for d in inner:
                    d.redirects.append((rn.redirect, -1, -1))
                if rn.extra_words:  # tree-sitter's reading of `} >f cmd ...`: a command
                    words = rn.extra_words
                    self.emit(src, list(words), [rn], rn.start, words[-1].end, ctx)
            self.substitutions(src, r, ctx)


def _rightmost(node: Any) -> Any:
    """The last statement of a list / pipeline / negation chain (None when there is none)."""
    cur = node
    while cur.type in _CHAINS:
        kids = [c for c in cur.children if c.is_named and c.type not in SKIP_TYPES]
        if not kids:
            return None
        cur = kids[-1]
    return cur
