"""Driving a replay: streaming the inputs through one evaluator, or through worker processes by chunks,
with a progress bar on a terminal."""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Iterable, Iterator
from itertools import islice
from typing import IO, Any

import attrs

from rtk_policy.replay.shadow import Evaluator, Tally
from rtk_policy.replay.sources import ReplayItem, read_file

CHUNK = 1000  #: commands per task sent to a worker process
AUTO_PARALLEL_BYTES = 8 * 1024 * 1024  #: inputs larger than this use every core when --jobs is 0
#: chunks a worker evaluates before it is replaced: cel-expr-python keeps ~170 bytes per call of a
#: Python-implemented CEL function, so a long-lived evaluator grows by a few KB per command
CHUNKS_PER_WORKER = 10


@attrs.frozen
class EngineSpec:
    """How to load the candidate and baseline engines (in this process or in a worker)."""

    policies: tuple[str, ...] | None  #: candidate policy paths, None = the search path
    baseline: tuple[str, ...] | None  #: baseline policy paths, None = the search path
    compare: bool  #: False when the baseline is the candidate itself (nothing to load twice)
    backend: str | None = None
    config: str | None = None
    claude_rules: bool = True


def make_evaluator(spec: EngineSpec) -> Evaluator:
    """Load the engines `spec` names into an `Evaluator`."""
    from rtk_policy.engine.pipeline import load_engine

    candidate = load_engine(
        list(spec.policies) if spec.policies else None, spec.backend, spec.config, strict=True
    )
    baseline = None
    if spec.compare:
        baseline = load_engine(
            list(spec.baseline) if spec.baseline else None, spec.backend, spec.config, strict=True
        )
    return Evaluator(candidate, baseline, spec.claude_rules)


def choose_jobs(jobs: int, files: list[str]) -> int:
    """`jobs` when positive; else 1 for small inputs and every core for large ones."""
    if jobs > 0:
        return jobs
    size = sum(os.path.getsize(name) for name in files)
    return (os.cpu_count() or 1) if size > AUTO_PARALLEL_BYTES else 1


class Progress:
    """A one-line progress bar on a terminal, drawn by rich (nothing when `stream` is not a TTY):
    the share of the input bytes whose commands were decided, the rate, and the time left. rich
    is imported when a bar is shown, so a piped or scripted replay never loads it; colour only
    where `util.term.wants_colour` allows it."""

    def __init__(self, stream: IO[str], total_bytes: int, enabled: bool | None = None) -> None:
        self.stream = stream
        self.total = max(total_bytes, 1)
        isatty = getattr(stream, "isatty", None)
        self.enabled = bool(isatty and isatty()) if enabled is None else enabled
        self.started = self.last = time.monotonic()
        self._bar: Any = None

    def update(self, done_bytes: int, commands: int, force: bool = False) -> None:
        """Redraw the bar at most ten times a second."""
        now = time.monotonic()
        if not self.enabled or (not force and now - self.last < 0.1):
            return
        self.last = now
        bar, task = self._bar or self._start()
        stats = self.render(done_bytes, commands, now - self.started)
        bar.update(task, completed=min(done_bytes, self.total), stats=stats)
        bar.refresh()

    def _start(self) -> tuple[Any, Any]:
        """The rich bar, started on the first update (rich is imported here only)."""
        from rich.console import Console
        from rich.progress import BarColumn, TextColumn
        from rich.progress import Progress as RichProgress

        from rtk_policy.util.term import wants_colour

        console = Console(
            file=self.stream, force_terminal=True, no_color=not wants_colour(self.stream)
        )
        bar = RichProgress(
            TextColumn("replay"), BarColumn(bar_width=30), TextColumn("{task.fields[stats]}"),
            console=console, auto_refresh=False, transient=True,
        )  # fmt: skip
        task = bar.add_task("replay", total=self.total, stats="")
        bar.start()
        self._bar = (bar, task)
        return self._bar

    def render(self, done_bytes: int, commands: int, elapsed: float) -> str:
        """The figures beside the bar after `elapsed` seconds with `done_bytes` of the input
        decided: share, commands, their rate, bytes per second, time left."""
        fraction = min(done_bytes / self.total, 1.0)
        elapsed = max(elapsed, 1e-6)
        rate = commands / elapsed
        mib = done_bytes / elapsed / (1024 * 1024)
        left = (
            (self.total - done_bytes) * elapsed / done_bytes if 0 < done_bytes < self.total else 0
        )
        eta = f"{int(left) // 60}:{int(left) % 60:02d} left" if done_bytes else "--:-- left"
        return f"{fraction:4.0%} {commands:,} commands {rate:,.0f}/s {mib:.1f} MiB/s {eta}"

    def close(self) -> None:
        """Erase the bar."""
        if self._bar is not None:
            self._bar[0].stop()
            self._bar = None


def stream_items(files: list[str], progress: list[int]) -> Iterator[ReplayItem]:
    """Every command of every file, in order; `progress[0]` counts bytes read."""
    for name in files:
        yield from read_file(name, progress)


def replay(
    files: list[str], spec: EngineSpec, jobs: int, limit: int, bar: Progress,
    evaluator: Evaluator | None = None,
) -> Tally:
    """Evaluate every command of `files`; one process when `jobs` is 1, else chunks on a pool."""
    read = [0]
    items = stream_items(files, read)
    if jobs <= 1:
        evaluator = evaluator or make_evaluator(spec)
        tally = Tally(limit)
        for chunk in chunks(items, 200):
            evaluator.tally(chunk, tally)
            bar.update(read[0], tally.commands)
    else:
        tally = _parallel(items, spec, jobs, limit, bar, read)
    bar.update(read[0], tally.commands, force=True)
    bar.close()
    return tally


def chunks(items: Iterable[ReplayItem], size: int) -> Iterator[list[ReplayItem]]:
    """Lists of at most `size` items, lazily."""
    iterator = iter(items)
    while chunk := list(islice(iterator, size)):
        yield chunk


_WORKER: Evaluator | None = None
_LIMIT = 3


def _init_worker(spec: EngineSpec, limit: int) -> None:
    global _WORKER, _LIMIT
    _WORKER, _LIMIT = make_evaluator(spec), limit


def _work(chunk: list[ReplayItem]) -> Tally:
    assert _WORKER is not None
    return _WORKER.tally(chunk, Tally(_LIMIT))


def _merge_oldest(waiting: deque, tally: Tally, bar: Progress) -> None:
    """Merge the oldest chunk's answer and show the bytes decided so far."""
    position, answer = waiting.popleft()
    tally.merge(answer.get())
    bar.update(position, tally.commands)


def _parallel(
    items: Iterable[ReplayItem], spec: EngineSpec, jobs: int, limit: int, bar: Progress, read: list[int]
) -> Tally:
    """Chunks evaluated on `jobs` processes; at most 2 × jobs chunks in flight, so memory stays bounded."""
    import multiprocessing

    tally = Tally(limit)
    with multiprocessing.get_context("spawn").Pool(
        jobs, _init_worker, (spec, limit), maxtasksperchild=CHUNKS_PER_WORKER
    ) as pool:
        waiting: deque = deque()
        for chunk in chunks(items, CHUNK):
            # the bytes read when the chunk was cut: decided once its answer is merged (reading runs
            # up to 2 x jobs chunks ahead, which can be a whole transcript of few tool calls)
            waiting.append((read[0], pool.apply_async(_work, (chunk,))))
            while len(waiting) >= 2 * jobs:
                _merge_oldest(waiting, tally, bar)
        while waiting:
            _merge_oldest(waiting, tally, bar)
    return tally
