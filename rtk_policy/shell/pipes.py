"""Pipelines: the stages of each pipeline in a chain tree-sitter folded together, with their index,
size, neighbouring operators, and the redirects tree-sitter hung on an enclosing node.

`treeshape.pipe_groups` gives bash's reading of the node (`a | b 2>&1 | c` is one pipeline of three
stages, `a | b && c` is `(a | b) && c`); `PipelineMixin.pipeline` walks it.
"""

from __future__ import annotations

from rtk_policy.shell.draft import MAX_SEGMENTS, Ctx, Draft, with_ops, with_pipe
from rtk_policy.shell.source import Source
from rtk_policy.shell.treeshape import PipeGroup, Stage, pipe_groups, statement_body

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class PipelineMixin:
    """Pipelines for the walker (expects the attributes and methods `parser.Walker` has)."""

    drafts: list[Draft]
    trailing: dict[tuple[int, int, int, str], tuple[list[Any], int]]
    line_refusals: list[tuple[int, str]]
    pipe_ids: int

    def statement(self, src: Source, node: Any, ctx: Ctx) -> None:  # pragma: no cover - Walker
        """Dispatch one statement (implemented by the walker)."""
        raise NotImplementedError

    def error(self, message: str) -> None:  # pragma: no cover - Walker
        """Record a parse problem (implemented by the walker)."""
        raise NotImplementedError

    def _compound_redirects(self, src: Source, redirs: list[Any], first: int, ctx: Ctx) -> None:
        """Note redirects of a compound command (implemented by `RedirectedMixin`)."""
        raise NotImplementedError  # pragma: no cover

    def pipeline(self, src: Source, node: Any, ctx: Ctx) -> None:
        """Walk every pipeline of the chain in `node`, in source order."""
        groups = pipe_groups(node, 2 * MAX_SEGMENTS + 2)
        for g, group in enumerate(groups):
            if len(self.drafts) >= MAX_SEGMENTS:
                self.error("too many commands")
                break
            sub = with_ops(
                ctx,
                group.op_before or ctx.op_before,
                groups[g + 1].op_before if g + 1 < len(groups) else ctx.op_after,
            )
            if len(group.stages) == 1:
                self.stage(src, group.stages[0], sub)
            else:
                self.pipe_stages(src, group, sub)

    def pipe_stages(self, src: Source, group: PipeGroup, ctx: Ctx) -> None:
        """Walk the stages of one pipeline with their index, size and neighbouring operators."""
        stages, ops = group.stages, group.ops
        self.pipe_ids += 1
        pid, size, stderr = self.pipe_ids, len(stages), "|&" in ops
        if src.base >= 0 and any(
            statement_body(s.node).type in ("subshell", "compound_statement") for s in stages
        ):
            start = src.absolute(src.char(stages[0].node.start_byte))
            self.line_refusals.append((start, "group in a pipeline"))
        for k, stage in enumerate(stages):
            if len(self.drafts) >= MAX_SEGMENTS:
                self.error("too many commands")
                break
            sub = with_ops(
                with_pipe(ctx, pid, k, size, stderr),
                ops[k - 1] if 0 < k <= len(ops) else ("|" if k else ctx.op_before),
                ops[k] if k < len(ops) else ("|" if k < size - 1 else ctx.op_after),
            )
            if statement_body(stage.node).type not in ("command", "negated_command"):
                sub = sub._replace(no_rewrite=sub.no_rewrite or "compound joined to a pipe")
            self.stage(src, stage, sub)

    def stage(self, src: Source, stage: Stage, ctx: Ctx) -> None:
        """Walk one statement of a chain, with the redirects typed after it that bash gives it."""
        node = stage.node
        if not stage.redirs:
            self.statement(src, node, ctx)
            return
        key = (id(src), node.start_byte, node.end_byte, node.type)
        outer = self.trailing.get(key)  # an enclosing redirected statement's (typed later)
        redirs = list(stage.redirs) + (list(outer[0]) if outer else [])
        self.trailing[key] = (redirs, max(stage.end, outer[1]) if outer else stage.end)
        first = len(self.drafts)
        self.statement(src, node, ctx)
        if self.trailing.pop(key, None) is not None:  # a limit stopped the walk: count them anyway
            if outer:
                self.trailing[key] = outer
            self._compound_redirects(src, list(stage.redirs), first, ctx)
