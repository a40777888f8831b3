"""The tree walk: tree-sitter-bash syntax tree → `Draft`s for every simple command, nested ones
included.

Lists and pipelines are flattened iteratively; nesting (subshells, groups, substitutions, bash -c,
eval) is bounded by `MAX_DEPTH` and structural recursion by `MAX_LEVEL`, so no input can exhaust the
stack. The stage's entry point is `assemble.parse_command_line`, which imports this module when an
input first needs the walk.
"""

from __future__ import annotations

from collections.abc import Sequence

from rtk_policy.shell import plainpath, reserved
from rtk_policy.shell.aliases import AliasesMixin
from rtk_policy.shell.benign import only_benign_errors
from rtk_policy.shell.compound import RedirectedMixin
from rtk_policy.shell.draft import MAX_SEGMENTS, Ctx, Draft, with_ops, with_pipe
from rtk_policy.shell.functions import Definition, FunctionsMixin
from rtk_policy.shell.launch_walk import LaunchMixin
from rtk_policy.shell.pipes import PipelineMixin
from rtk_policy.shell.plainpath import PlainCommand
from rtk_policy.shell.simple import SKIP_TYPES, CommandsMixin, nest
from rtk_policy.shell.source import Source
from rtk_policy.shell.treeshape import error_parts, flatten
from rtk_policy.shell.values_walk import ValuesMixin
from rtk_policy.shell.words import make_word
from rtk_policy.shell.wrappers import prefix_words

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_DEPTH = 50
MAX_LEVEL = 120
MAX_REPARSES = 8
_OPS = frozenset({"&&", "||", ";", "&", ";;", ";&", ";;&", "|", "|&"})
_CONTAINERS = frozenset(
    {
        "program",
        "do_group",
        "else_clause",
        "elif_clause",
        "case_item",
        "if_statement",
        "while_statement",
        "for_statement",
        "c_style_for_statement",
        "case_statement",
    }
)


def _fallback() -> Any:
    """The recovery lexer (`fallback.py`), imported on first need: a well-formed input never needs
    it, and a cold hook deciding one plain command should not pay for it."""
    from rtk_policy.shell import fallback

    return fallback


class Walker(
    CommandsMixin, LaunchMixin, ValuesMixin, RedirectedMixin, PipelineMixin, FunctionsMixin,
    AliasesMixin,
):
    """Collects `Draft`s and whole-input facts while walking one input and its nested code."""

    def __init__(self, transparent: Sequence[str]) -> None:
        self.drafts: list[Draft] = []
        self.errors: list[str] = []
        self.compound_redirects: list[tuple[Any, int]] = []  # (Redirect, absolute start)
        self.trailing: dict[tuple[int, int, int, str], tuple[list[Any], int]] = {}
        self.line_refusals: list[tuple[int, str]] = []  # (absolute offset, reason)
        self.coproc_at: list[int] = []
        self.transparent = prefix_words(transparent)
        self.pipe_ids = 0  # pipelines numbered so far (0: no segment is in a pipeline)
        self._level = 0
        self._group_first = False
        self._after_close = False
        self._reparses = 0
        self._limited = 0  # how many times a depth limit dropped a statement or source
        self.runs_code = False  # a command runs nested code (`emit`; assemble._plain)
        self.start_values()
        self.start_functions()
        self.start_aliases()
        self._in_body = 0

    def error(self, message: str) -> None:
        """Record a parse problem (the first few are kept)."""
        if len(self.errors) < 5 and message not in self.errors:
            self.errors.append(message)

    # -- sources and containers -------------------------------------------------------------------

    def walk_source(
        self,
        src: Source,
        ctx: Ctx,
        not_plain: bool = False,
        plain: list[PlainCommand] | None = None,
    ) -> None:
        """Parse `src` with tree-sitter and walk every statement in it (`not_plain`: the caller
        knows `plainpath.commands` declines it; `plain`: the caller's `plainpath.commands` of
        it)."""
        if ctx.depth > MAX_DEPTH:
            self.error("nesting too deep")
            self._limited += 1
            return
        if plain is None and src.is_ascii and not not_plain:
            plain = plainpath.commands(src.text)
        root = reserved.parse(src) if plain is None else None
        if src.coproc_at and src.base >= 0:  # a blanked coproc: nothing after it is rewritten
            self.coproc_at.extend(src.absolute(src.char(at)) for at in sorted(src.coproc_at))
        first = len(self.drafts)
        limited = self._limited
        has_error = root is not None and root.has_error and not only_benign_errors(src, root)
        if has_error:
            self.error("syntax error")
        if root is None:
            self.plain_sequence(src, plain or [], ctx)
        else:
            self.sequence(src, root.children, ctx)
            if not has_error and reserved.misread(self.drafts, first, src):
                has_error = True
                self.error("syntax error")
        dropped = self._limited > limited  # a depth limit dropped code: the lexer looks again
        if (has_error or dropped or (src.has_cr and _fallback().has_lone_cr(src.text))) and (
            self._reparses < MAX_REPARSES
        ):
            self._reparses += 1
            self.recover(src, ctx, first)
        if len(self.drafts) == first and src.base == 0:  # never no segment for a command
            _fallback().best_effort(self, src, ctx)

    def recover(self, src: Source, ctx: Ctx, first: int) -> None:
        """Add the commands RTK's splitter finds that the walk missed (syntax errors, lone CR)."""
        _fallback().recover(self, src, ctx, first, MAX_SEGMENTS)

    def sequence(self, src: Source, children: Sequence[Any], ctx: Ctx) -> None:
        """Walk statements separated by list operators and newlines, in source order."""
        items: list[list[Any]] = []  # [node, op_before, op_after, background]
        pending = ""
        prev_end = -1
        for c in children:
            if not c.is_named:
                if c.type in _OPS:
                    if c.type == "&" and items:
                        items[-1][3] = True
                    pending = c.type
                    if items:
                        items[-1][2] = c.type
                elif c.type != "\n":
                    pending = ""
                continue
            if c.type in SKIP_TYPES:
                continue
            if not pending and items and b"\n" in src.data[prev_end : c.start_byte]:
                pending = "\n"
                items[-1][2] = items[-1][2] or "\n"
            if len(items) > MAX_SEGMENTS:
                self.error("too many commands")
                break
            items.append([c, pending, "", False])
            pending = ""
            prev_end = c.end_byte
        if items:
            items[0][1] = items[0][1] or ctx.op_before
            items[-1][2] = items[-1][2] or ctx.op_after
        for node, before, after, bg in items:
            if len(self.drafts) >= MAX_SEGMENTS:
                self.error("too many commands")
                break
            sub = ctx
            if before or after or bg:
                sub = with_ops(ctx, before, after, bg)
            self.statement(src, node, sub)
            self._after_close = node.type == "subshell" or (
                node.type == "ERROR" and node.child_count and node.children[-1].type == "subshell"
            )
        self._after_close = False

    def plain_sequence(self, src: Source, cmds: list[PlainCommand], ctx: Ctx) -> None:
        """Walk the commands of a plain source (`plainpath`) exactly as the tree walk would: the
        same operators, pipeline stages and limits, each command emitted like a simple command."""
        n = len(cmds)
        stage, size, pid = 0, 1, -1
        for k, (words, redirects, before, after) in enumerate(cmds):
            if len(self.drafts) >= MAX_SEGMENTS:
                self.error("too many commands")
                break
            sub = ctx
            if before == "|":
                stage += 1
            elif after == "|":  # the first stage of a pipeline
                self.pipe_ids += 1
                stage, size, pid = 0, 2, self.pipe_ids
                while k + size < n and cmds[k + size - 1][3] == "|":
                    size += 1
            if before == "|" or after == "|":
                sub = with_ops(ctx, before or ctx.op_before, after or ctx.op_after)
                sub = with_pipe(sub, pid, stage, size)
            elif before or after:
                sub = with_ops(ctx, before or ctx.op_before, after or ctx.op_after)
            if self._after_close:
                self._after_close = False
                if not sub.op_before:
                    sub = sub._replace(no_rewrite=sub.no_rewrite or "word after subshell close")
            if self._level >= MAX_LEVEL or sub.depth > MAX_DEPTH:
                self.error("nesting too deep")
                self._limited += 1
                continue
            self._level += 1
            try:
                end = max(words[-1].end, redirects[-1].end) if redirects else words[-1].end
                self.emit(src, words, redirects, words[0].start, end, sub)
            finally:
                self._level -= 1
        self._after_close = False

    def statement(self, src: Source, node: Any, ctx: Ctx) -> None:
        """Dispatch one statement node."""
        if len(self.drafts) >= MAX_SEGMENTS:
            self.error("too many commands")
            return
        if self._level >= MAX_LEVEL or ctx.depth > MAX_DEPTH:
            self.error("nesting too deep")
            self._limited += 1
            return
        if self._after_close:
            self._after_close = False
            if not ctx.op_before:
                ctx = ctx._replace(no_rewrite=ctx.no_rewrite or "word after subshell close")
        if src.negated_at and node.start_byte in src.negated_at:
            ctx = ctx._replace(negated=True)
        self._level += 1
        try:
            if not (self.trailing and self.take_trailing(src, node, ctx)):
                self._dispatch(src, node, ctx)
        finally:
            self._level -= 1

    def _dispatch(self, src: Source, node: Any, ctx: Ctx) -> None:
        t = node.type
        if t == "command":
            if not self.plain(src, node, ctx):
                self.simple(src, node.children, node, ctx)
        elif t == "redirected_statement":
            self.redirected(src, node, ctx)
        elif t == "list":
            self.sequence(src, flatten(node, "list", 2 * MAX_SEGMENTS + 2), ctx)
        elif t == "pipeline":
            self.pipeline(src, node, ctx)
        elif t == "negated_command":
            kids = [c for c in node.children if c.is_named and c.type not in SKIP_TYPES]
            for c in kids:
                self.statement(src, c, ctx._replace(negated=True))
        elif t == "subshell":
            saved = self.state()  # `( cd x; x=/ )`: the cd and the variable stay in the subshell
            scope = self.enter_scope(child=False)
            self.sequence(src, node.children, nest(ctx, "subshell"))
            self.scope = scope
            self.restore(saved)
        elif t == "compound_statement" and node.child_count and node.children[0].type == "((":
            # `(( x ))`: an arithmetic command is a segment too (§4.3), never rewritten (§3.3)
            self.test_command(src, node, ctx._replace(no_rewrite=ctx.no_rewrite or "arithmetic"))
        elif t == "compound_statement":
            self._group_first = True
            self.sequence(src, node.children, nest(ctx, "group"))
            self._group_first = False
        elif t == "function_definition":
            self.function(src, node, ctx)
        elif t == "for_statement":
            self.for_loop(src, node)
            self.sequence(src, node.children, ctx)
        elif t in _CONTAINERS:
            self.sequence(src, node.children, ctx)
        elif t in ("variable_assignment", "variable_assignments"):
            self.simple(src, [node] if t == "variable_assignment" else node.children, node, ctx)
        elif t in ("declaration_command", "unset_command"):
            self.simple(src, node.children, node, ctx)
        elif t == "test_command":
            self.test_command(src, node, ctx)
        elif t == "ERROR":
            self.error_node(src, node, ctx)
        else:
            self.substitutions(src, node, ctx)

    def function(self, src: Source, node: Any, ctx: Ctx) -> None:
        """A function definition: its body is nested code of origin "function" (remembered, so
        that a call is judged with its arguments)."""
        name = next((src.slice(c) for c in node.children if c.type == "word"), "")
        first, saved = len(self.drafts), self.state()
        unconditional = (
            not self._in_body
            and ctx.op_before not in ("&&", "||")
            and node.parent is not None
            and node.parent.type in ("program", "subshell", "compound_statement")
        )
        self.positional.append(None)  # the parameters of each call, not of the definition
        self._in_body += 1
        try:
            self._function_body(src, node, nest(ctx, "function", "function body"))
        finally:
            self._in_body -= 1
            self.positional.pop()
            self.restore(saved)  # a definition runs nothing
        if name:
            # a body in ( … ) runs in a subshell: its cd stays there (None: no scope to follow)
            shares = not any(c.type == "subshell" for c in node.children)
            self.functions[name] = (first, len(self.drafts), self.scope if shares else None)
            self.definitions.append(
                Definition(name, first, len(self.drafts), self.scope, unconditional)
            )

    def for_loop(self, src: Source, node: Any) -> None:
        """`for NAME in WORDS; do …`: NAME holds each of the words in the body."""
        name, raws, listed = "", [], False
        for c in node.children:
            if c.type == "variable_name":
                name = src.slice(c)
            elif c.type == "in":
                listed = True
            elif listed and c.is_named and c.type not in ("do_group", "comment"):
                raws.append(src.slice(c))
        if name:
            self.bind_loop(name, raws if listed else None)

    def _function_body(self, src: Source, node: Any, inner: Ctx) -> None:
        for c in node.children:
            if c.is_named and c.type in (
                "compound_statement",
                "subshell",
                "if_statement",
                "while_statement",
                "for_statement",
                "case_statement",
            ):
                kids = c.children if c.type in ("compound_statement", "subshell") else [c]
                self.sequence(src, kids, inner)

    def test_command(self, src: Source, node: Any, ctx: Ctx) -> None:
        """`[[ ... ]]`, `[ ... ]`, `(( ... ))`: one segment, its words the text split on blanks."""
        text = src.slice(node)
        base = src.char(node.start_byte)
        words, pos = [], 0
        for part in text.split():
            pos = text.index(part, pos)
            words.append(make_word(part, base + pos))
            pos += len(part)
        idx = self.emit(src, words, [], base, base + len(text), ctx)
        self.substitutions(src, node, ctx._replace(parent=idx))

    def error_node(self, src: Source, node: Any, ctx: Ctx) -> None:
        """Best effort in an ERROR node: statements, loose words as commands, quoted remainders."""
        self.error("syntax error")
        statements = error_parts(node)
        text = src.slice(node)
        quoted_rest = text[:1] in ("'", '"') and self._reparses < MAX_REPARSES
        if quoted_rest and not any(k == "node" and n.is_named for k, n in statements):
            self._reparses += 1
            start = src.char(node.start_byte) + 1
            self.walk_source(Source(text[1:], src.absolute(start)), ctx)
            return
        for kind, val in statements:
            if kind == "words":
                self.simple(src, val, None, ctx)
            elif val.is_named and val.type not in SKIP_TYPES:
                self.statement(src, val, ctx)

