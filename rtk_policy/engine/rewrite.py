"""Assembling the rewritten command from the per-segment rewrite results (reference §3.3–§3.6).

`assemble_rewrite` is pure: it splices each selected replacement into the input at its segment's
offsets, so separators, whitespace and everything not rewritten stay byte for byte, and it applies
RTK's pipeline model (§3.4): the final `grep`/`rg` stage when its rule is final-safe; otherwise the
producer, only when every consumer is a safe consumer and the producer's rule is producer-safe;
middle stages never; `|&` leaves the whole pipeline alone.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from operator import attrgetter

from rtk_policy.policy.functions_rtk import collapse_continuations, trim_ifs
from rtk_policy.policy.model import Evaluation, SegmentResult
from rtk_policy.shell.model import CommandLine, Segment
from rtk_policy.shell.words import spelt_otherwise

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeAlias

    #: the segments whose text a rewrite replaces, with their replacements, by offset
    Replacements: TypeAlias = "list[tuple[Segment, str]]"

_FINAL_SAFE = ("final", "both")
#: a segment result's winning rewrite (read by `map`: no generator per command)
_REWRITE = attrgetter("rewrite")
_PRODUCER_SAFE = ("producer", "both")


def assemble_rewrite(command_line: CommandLine, evaluation: Evaluation) -> str | None:
    """The rewritten command, or None when RTK would not rewrite it (§3.6).

    A lone command already run through `rtk` gives the text itself (identity).
    """
    changed = replacements(command_line, evaluation)
    return None if changed is None else splice(command_line, changed)


def replacements(command_line: CommandLine, evaluation: Evaluation) -> Replacements | None:
    """The (segment, replacement) pairs that change the text, by offset; None when RTK refuses
    the whole input."""
    if command_line.rewrite_refused:
        return None
    if not any(map(_REWRITE, evaluation.results)):  # a RuleResult is never false
        return []  # every replacement is a segment's rewrite (`_rewrite_of`)
    results = {r.segment_index: r for r in evaluation.results}
    found: list[tuple[Segment, str]] = []
    for group in _pipelines(command_line.segments):
        found.extend(_choose(group, results))
    text = command_line.text
    return sorted(
        [(seg, new) for seg, new in found if text[seg.start : seg.end] != new], key=_start
    )


def _start(pair: tuple[Segment, str]) -> int:
    """Where the segment of a (segment, replacement) pair starts."""
    return pair[0].start


def splice(command_line: CommandLine, changed: Replacements) -> str | None:
    """The text with the `replacements` spliced in, normalised as RTK does; with none, the
    identity (or None)."""
    if not changed:
        return _identity(command_line)
    return _normalise(spliced(command_line.text, changed))


def spliced(text: str, changed: Replacements) -> str:
    """`text` with each segment's span replaced (no normalisation)."""
    out, last = [], 0
    for seg, new in changed:
        out.append(text[last : seg.start])
        out.append(new)
        last = seg.end
    out.append(text[last:])
    return "".join(out)


def _normalise(text: str) -> str:
    """RTK's whole-input normalisation: line continuations collapsed, IFS whitespace trimmed."""
    return trim_ifs(collapse_continuations(text))


def _rewritable(segment: Segment) -> bool:
    return segment.rewritable and 0 <= segment.start <= segment.end


def _pipelines(segments: Sequence[Segment]) -> Iterator[list[Segment]]:
    """Group the rewritable segments into pipelines (a lone command is a pipeline of one)."""
    group: list[Segment] = []
    for seg in filter(_rewritable, segments):
        joins = (
            group
            and seg.pipeline_size > 1
            and group[-1].pipeline_size == seg.pipeline_size
            and seg.pipeline_index > group[-1].pipeline_index
        )
        if not joins:
            if group:
                yield group
            group = []
        group.append(seg)
    if group:
        yield group


def _rewrite_of(seg: Segment, results: dict[int, SegmentResult]) -> tuple[str, str] | None:
    """(replacement, pipeline role) of the segment's winning rewrite rule, when it changes the
    text."""
    result = results.get(seg.index)
    hit = result.rewrite if result is not None else None
    if hit is None or hit.rewrite is None or hit.rewrite == seg.text:
        return None
    return hit.rewrite, hit.rule.pipeline


def _choose(group: list[Segment], results: dict[int, SegmentResult]) -> list[tuple[Segment, str]]:
    """The replacements RTK's pipeline model allows in one pipeline."""
    size = group[0].pipeline_size
    if size <= 1:
        chosen = _rewrite_of(group[0], results)
        return [(group[0], chosen[0])] if chosen else []
    if any(seg.pipe_stderr for seg in group):
        return []
    stages = {seg.pipeline_index: seg for seg in group}
    final = stages.get(size - 1)
    final_rw = _rewrite_of(final, results) if final is not None else None
    if final is not None and final_rw is not None and final_rw[1] in _FINAL_SAFE:
        return [(final, final_rw[0])]
    producer = stages.get(0)
    if producer is None or len(stages) != size:
        return []
    consumers_safe = all(
        (r := results.get(stages[i].index)) is not None and r.safe_consumer for i in range(1, size)
    )
    producer_rw = _rewrite_of(producer, results)
    if consumers_safe and producer_rw is not None and producer_rw[1] in _PRODUCER_SAFE:
        return [(producer, producer_rw[0])]
    return []


def _identity(command_line: CommandLine) -> str | None:
    """The input itself when it is one simple command already run through `rtk`, else None."""
    top = [s for s in command_line.segments if s.depth == 0]
    if command_line.multiline or len(top) != 1:
        return None
    seg = top[0]
    if not (seg.program == "rtk" or seg.wrappers[:1] == ("rtk",)) or seg.pipeline_size != 1:
        return None
    text = _normalise(command_line.text)
    if seg.program == "rtk":  # as typed: `RTK …` runs rtk only on some file systems
        spelt = spelt_otherwise(seg.program_path)
    else:
        spelt = spelt_otherwise(next((w for w in seg.prefix.split() if "=" not in w), ""))
    if spelt:
        return None
    return text if _normalise(seg.text) == text else None
