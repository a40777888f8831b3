"""The walker's working record for one simple command, and its conversion into a `Segment`."""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter

from rtk_policy.shell.argv import argument_facts
from rtk_policy.shell.model import Redirect, Segment
from rtk_policy.shell.source import Source
from rtk_policy.shell.words import Word, basename
from rtk_policy.shell.wrappers import Peel
from rtk_policy.util import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

GRAMMAR_WORDS = frozenset({"{", "}", "!", "(", ")"})
PIPE_NEIGHBOURS = 100
MAX_SEGMENTS = 2_000  #: the walker stops collecting commands after this many
_RAW = attrgetter("raw")
_VALUE = attrgetter("value")
_NO_ARGUMENTS: tuple[str, tuple[str, ...], tuple[str, ...], tuple[str, ...]] = ("", (), (), ())


class Ctx(record.NamedTuple):
    """Where a command sits: nesting, list operators, pipeline stage, and walker restrictions."""

    depth: int = 0
    origin: str = "top"
    parent: int = -1
    negated: bool = False
    background: bool = False
    op_before: str = ""
    op_after: str = ""
    pipe_id: int = -1
    pipe_index: int = 0
    pipe_size: int = 1
    pipe_stderr: bool = False
    #: why RTK's walker never hands commands here to the rewrite ("" if it does)
    no_rewrite: str = ""
    #: an unknown value was taken as "/" in these commands (`Segment.guessed`)
    guess: bool = False


_new_tuple = tuple.__new__


def with_ops(ctx: Ctx, op_before: str, op_after: str, background: bool = False) -> Ctx:
    """`ctx._replace(op_before=…, op_after=…, background=ctx.background or background)` without
    the cost of `_replace` (a hot loop)."""
    return _new_tuple(Ctx, (*ctx[:4], ctx[4] or background, op_before, op_after, *ctx[7:]))


def with_pipe(ctx: Ctx, pipe_id: int, index: int, size: int, stderr: bool = False) -> Ctx:
    """`ctx._replace(pipe_id=…, pipe_index=…, pipe_size=…, pipe_stderr=stderr)`, as cheaply."""
    return _new_tuple(Ctx, (*ctx[:7], pipe_id, index, size, stderr, *ctx[11:]))


@record.mutable(compile_after=record.PER_COMMAND)
class Draft:
    """A simple command found by the walker, before it becomes a frozen `Segment`."""

    src: Source
    start: int
    end: int
    words: list[Word]
    redirects: list[tuple[Redirect, int, int]]
    ctx: Ctx
    peel: Peel
    lead_grammar: list[Word] = record.Factory(list)
    dynamic: bool = False
    no_rewrite: str = ""
    index: int = 0
    cwd: str = ""  #: `Segment.cwd`
    copy_of: int = -1  #: `Segment.copy_of`
    #: the subshells (> 0) and child shells (< 0) it runs in, outermost first (`shell/functions.py`)
    scope: tuple[int, ...] = ()
    uncalled: bool = False  #: `Segment.uncalled`

    @property
    def program_word(self) -> Word | None:
        """The program word after peeling, or None (assignment- or redirect-only command)."""
        i = self.peel.program_index
        return self.words[i] if i < len(self.words) else None

    @property
    def program(self) -> str:
        """The basename of the program, dequoted ("" when none)."""
        i = self.peel.program_index  # (`program_word`, without a second property call)
        return basename(self.words[i].value) if i < len(self.words) else ""


#: The `Segment` fields in the order `to_segment` passes them positionally (faster than keywords);
#: if the model's fields ever differ, `_new_segment` takes keywords instead.
_SEGMENT_FIELDS = (
    "index", "text", "start", "end", "program", "program_path", "argv", "args", "raw_words",
    "subcommand", "flags", "env", "wrappers", "prefix", "command", "suffix", "redirects",
    "match_text", "pipeline_index", "pipeline_size", "pipeline_before", "pipeline_after",
    "pipe_stderr", "operator_before", "operator_after", "background", "negated", "depth", "origin",
    "parent", "dynamic_program", "rewritable", "rewrite_refusal", "guessed", "cwd", "operands",
    "copy_of", "paths", "uncalled",
)  # fmt: skip
_POSITIONAL = tuple(f.name for f in record.fields(Segment)) == _SEGMENT_FIELDS


def _segment_by_keywords(*values: Any) -> Segment:
    """A `Segment` from its field values in `_SEGMENT_FIELDS` order, passed as keywords."""
    return Segment(**dict(zip(_SEGMENT_FIELDS, values, strict=True)))


_new_segment = Segment if _POSITIONAL else _segment_by_keywords


def _glued_end(text: str, i: int) -> int:
    """The end of the run of form feeds and vertical tabs at `i`: bash reads them as part of the
    word before them (`bun install\\f` has the argument `install\\f`, §3.5 step 9)."""
    while i < len(text) and text[i] in "\f\v":
        i += 1
    return i


def to_segment(d: Draft, pipes: dict[int, tuple[str, ...]], refusal: str) -> Segment:
    """Freeze a draft into a `Segment`; `pipes` comes from `stage_programs`."""
    src, words, start, end, p = d.src, d.words, d.start, d.end, d.peel
    text, base = src.text, src.base
    i = p.program_index
    cmd_words = words[i:] if i else words
    argv = tuple(map(_VALUE, cmd_words))
    raw_words = tuple(map(_RAW, cmd_words))
    args = argv[1:]
    last_end = words[-1].end if words else (d.lead_grammar[-1].end if d.lead_grammar else start)
    if text[last_end : last_end + 1] in ("\f", "\v"):  # word bytes to bash, blanks to tree-sitter
        last_end = _glued_end(text, last_end)
        end = max(end, last_end)
    if cmd_words:
        program_path = argv[0]
        program = p.program  # `program_name(program_path)`
        cut = cmd_words[0].start
        command = text[cut:last_end]
    else:
        if words and d.redirects:
            last_end = max(last_end, start)
        program_path = program = command = ""
        cut = last_end
    sub, flags, operands, paths = argument_facts(program, args, d.cwd) if args else _NO_ARGUMENTS
    (depth, origin, parent, negated, background, op_before, op_after, pipe_id, pipe_index,
     pipe_size, pipe_stderr, _, guess) = d.ctx  # fmt: skip
    before, after = _pipe_neighbours(pipes, pipe_id, pipe_index) if pipe_id >= 0 else ((), ())
    return _new_segment(
        d.index,
        text[start:end],
        -1 if base < 0 else base + start,
        -1 if base < 0 else base + end,
        program,
        program_path,
        argv,
        args,
        raw_words,
        sub,
        flags,
        tuple(p.env) if p.env else (),
        tuple(p.wrappers) if p.wrappers else (),
        text[start:cut],
        command,
        text[max(last_end, cut) : end],
        tuple([r for r, _, _ in d.redirects]) if d.redirects else (),
        match_text(words) if i else _joined(raw_words),
        pipe_index,
        pipe_size,
        before,
        after,
        pipe_stderr,
        op_before,
        op_after,
        background,
        negated,
        depth,
        origin,
        parent,
        d.dynamic,
        not refusal or refusal == "assignment after uv run",
        refusal,
        guess,
        d.cwd,
        operands,
        d.copy_of,
        paths,
        d.uncalled,
    )


def match_text(words: Sequence[Word]) -> str:
    """The words as typed, single-spaced, with grammar words dropped (redirects are not words)."""
    return _joined(list(map(_RAW, words)))


def _joined(raws: Sequence[str]) -> str:
    """`raws` single-spaced, grammar words dropped (`match_text` of words typed as `raws`)."""
    if GRAMMAR_WORDS.isdisjoint(raws):
        return " ".join(raws)
    return " ".join(r for r in raws if r not in GRAMMAR_WORDS)


def _pipe_neighbours(
    pipes: dict[int, tuple[str, ...]], pipe_id: int, k: int
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Programs of the stages before and after stage `k` of a pipeline (at most 100 each side)."""
    progs = pipes.get(pipe_id)
    if progs is None:
        return (), ()
    return progs[max(0, k - PIPE_NEIGHBOURS) : k], progs[k + 1 : k + 1 + PIPE_NEIGHBOURS]


def stage_programs(drafts: Sequence[Draft]) -> dict[int, tuple[str, ...]]:
    """Map each pipeline id to the program of each of its stages (the first command of a stage)."""
    stages: dict[int, dict[int, str]] = {}
    sizes: dict[int, int] = {}
    for d in drafts:
        if d.ctx.pipe_id >= 0:
            stage = stages.setdefault(d.ctx.pipe_id, {})
            stage.setdefault(d.ctx.pipe_index, d.peel.program)
            sizes[d.ctx.pipe_id] = d.ctx.pipe_size
    return {pid: tuple(got.get(j, "") for j in range(sizes[pid])) for pid, got in stages.items()}
