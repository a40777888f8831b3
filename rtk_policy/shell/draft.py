"""The walker's working record for one simple command, and its conversion into a `Segment`."""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter
from typing import NamedTuple

import attrs

from rtk_policy.shell.argv import flags, subcommand
from rtk_policy.shell.model import Redirect, Segment
from rtk_policy.shell.source import Source
from rtk_policy.shell.words import Word, basename
from rtk_policy.shell.wrappers import Peel

GRAMMAR_WORDS = frozenset({"{", "}", "!", "(", ")"})
PIPE_NEIGHBOURS = 100
MAX_SEGMENTS = 2_000  #: the walker stops collecting commands after this many
_RAW = attrgetter("raw")
_VALUE = attrgetter("value")


class Ctx(NamedTuple):
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
    no_rewrite: str = (
        ""  #: why RTK's walker never hands commands here to the rewrite ("" if it does)
    )


@attrs.define(slots=True)
class Draft:
    """A simple command found by the walker, before it becomes a frozen `Segment`."""

    src: Source
    start: int
    end: int
    words: list[Word]
    redirects: list[tuple[Redirect, int, int]]
    ctx: Ctx
    peel: Peel
    lead_grammar: list[Word] = attrs.Factory(list)
    dynamic: bool = False
    no_rewrite: str = ""
    index: int = 0

    @property
    def program_word(self) -> Word | None:
        """The program word after peeling, or None (assignment- or redirect-only command)."""
        i = self.peel.program_index
        return self.words[i] if i < len(self.words) else None

    @property
    def program(self) -> str:
        """The basename of the program, dequoted ("" when none)."""
        w = self.program_word
        return basename(w.value) if w else ""


def to_segment(d: Draft, pipes: dict[int, tuple[str, ...]], refusal: str) -> Segment:
    """Freeze a draft into a `Segment`; `pipes` comes from `stage_programs`."""
    src, text = d.src, d.src.text
    prog = d.program_word
    i = d.peel.program_index
    cmd_words = d.words[i:]
    argv = tuple(map(_VALUE, cmd_words))
    last_end = (
        d.words[-1].end if d.words else (d.lead_grammar[-1].end if d.lead_grammar else d.start)
    )
    if d.words and d.redirects and not prog:
        last_end = max(last_end, d.start)
    cut = prog.start if prog else last_end
    program_path = prog.value if prog else ""
    before, after = _pipe_neighbours(d, pipes)
    return Segment(
        index=d.index,
        text=text[d.start : d.end],
        start=src.absolute(d.start),
        end=src.absolute(d.end),
        program=basename(program_path) if prog else "",
        program_path=program_path,
        argv=argv,
        args=argv[1:],
        raw_words=tuple(map(_RAW, cmd_words)),
        subcommand=subcommand(basename(program_path), argv[1:]) if prog else "",
        flags=flags(argv[1:]),
        env=tuple(d.peel.env),
        wrappers=tuple(d.peel.wrappers),
        prefix=text[d.start : cut],
        command=text[cut:last_end] if prog else "",
        suffix=text[max(last_end, cut) : d.end],
        redirects=tuple(r for r, _, _ in d.redirects),
        match_text=match_text(d.words),
        pipeline_index=d.ctx.pipe_index,
        pipeline_size=d.ctx.pipe_size,
        pipeline_before=before,
        pipeline_after=after,
        pipe_stderr=d.ctx.pipe_stderr,
        operator_before=d.ctx.op_before,
        operator_after=d.ctx.op_after,
        background=d.ctx.background,
        negated=d.ctx.negated,
        depth=d.ctx.depth,
        origin=d.ctx.origin,
        parent=d.ctx.parent,
        dynamic_program=d.dynamic,
        rewritable=not refusal or refusal == "assignment after uv run",
        rewrite_refusal=refusal,
    )


def match_text(words: Sequence[Word]) -> str:
    """The words as typed, single-spaced, with grammar words dropped (redirects are not words)."""
    raws = list(map(_RAW, words))
    if GRAMMAR_WORDS.isdisjoint(raws):
        return " ".join(raws)
    return " ".join(r for r in raws if r not in GRAMMAR_WORDS)


def _pipe_neighbours(
    d: Draft, pipes: dict[int, tuple[str, ...]]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Programs of the earlier and later stages of the draft's pipeline (at most 100 each side)."""
    progs = pipes.get(d.ctx.pipe_id)
    if progs is None:
        return (), ()
    k = d.ctx.pipe_index
    return progs[max(0, k - PIPE_NEIGHBOURS) : k], progs[k + 1 : k + 1 + PIPE_NEIGHBOURS]


def stage_programs(drafts: Sequence[Draft]) -> dict[int, tuple[str, ...]]:
    """Map each pipeline id to the program of each of its stages (the first command of a stage)."""
    stages: dict[int, dict[int, str]] = {}
    sizes: dict[int, int] = {}
    for d in drafts:
        if d.ctx.pipe_id >= 0:
            stages.setdefault(d.ctx.pipe_id, {}).setdefault(d.ctx.pipe_index, d.program)
            sizes[d.ctx.pipe_id] = d.ctx.pipe_size
    return {pid: tuple(got.get(j, "") for j in range(sizes[pid])) for pid, got in stages.items()}
