"""`rtk-policy rewrite --batch FILE`: one JSON object per input line, one JSON answer per line,
in order.

Input line: `{"command": "...", "config": {...overrides...}, "claude": {"deny": [], "ask": [],
"allow": []}}` (`config` and `claude` optional; without `claude`, the user's Claude Code rules
apply). Output line: `{"exit": N, "stdout": "...", "verdict": "...", "rewrite": "..."|null,
"rules": [...]}`, or `{"error": "..."}` for a line that cannot be read; the batch goes on.

A line seen before in the same process is answered from memory (`Answers`): the key is the whole
line as read, command, `config` and `claude` included, and everything else a decision depends on
(the policies, the config, the user's Claude Code rules, the folder) is fixed for the batch.

`--jobs N` decides chunks of lines on N worker processes (each loads the engine once) and writes
the answers in input order; at most 2 × N chunks are in flight, so memory stays bounded on any
input size.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterable, Iterator
from typing import IO, TYPE_CHECKING

from rtk_policy.engine.answers import batch_line, dumps, request_context
from rtk_policy.util import record

if TYPE_CHECKING:
    from rtk_policy.engine.pipeline import Engine
    from rtk_policy.policy.model import Context

_CONFIG_KEYS = {"exclude_commands", "transparent_prefixes", "disabled_rules", "enabled_packs"}


#: lines per chunk handed to a worker process
CHUNK = 256
#: answer lines a batch process keeps (all are dropped when it is full)
MEMO_LINES = 4096


class Answers:
    """The answer line of each input line, remembered by the line's text."""

    def __init__(self, engine: Engine, base: Context) -> None:
        self.engine = engine
        self.base = base
        self._known: dict[str, str] = {}

    def __call__(self, line: str) -> str:
        """The answer line (newline included) of one input line."""
        found = self._known.get(line)
        if found is None:
            found = answer_line(self.engine, self.base, line) + "\n"
            if not found.startswith(_ERROR):  # an internal error is not a property of the line
                if len(self._known) >= MEMO_LINES:
                    self._known.clear()
                self._known[line] = found
        return found


def run_batch(
    engine: Engine, source: str, agent: str, stdin: IO[str], stdout: IO[str], stderr: IO[str]
) -> int:
    """Answer every line of `source` ('-' = stdin); returns 0, or 1 when the file cannot be read."""
    answer = Answers(engine, request_context(engine, os.getcwd(), agent=agent))

    def answers(lines: Iterable[str]) -> Iterator[str]:
        return map(answer, lines)

    return _stream(source, stdin, stdout, stderr, answers)


@record.frozen
class LoadSpec:
    """What a worker process needs to load the same engine and context as this process."""

    policies: tuple[str, ...] | list[str] | None
    backend: str | None
    config: str | None
    agent: str
    cwd: str


def run_parallel_batch(
    spec: LoadSpec, jobs: int, source: str, stdin: IO[str], stdout: IO[str], stderr: IO[str]
) -> int:
    """`run_batch` on `jobs` worker processes (0: every core), answers written in input order."""
    jobs = jobs if jobs > 0 else (os.cpu_count() or 1)
    return _stream(source, stdin, stdout, stderr, lambda lines: _parallel(spec, jobs, lines))


def _stream(
    source: str,
    stdin: IO[str],
    stdout: IO[str],
    stderr: IO[str],
    answers: Callable[[Iterable[str]], Iterator[str]],
) -> int:
    """Write `answers` of the non-blank lines of `source`; 1 when it cannot be read, else 0."""
    handle = _open(source, stdin, stderr)
    if handle is None:
        return 1
    with contextlib.nullcontext(handle) if handle is stdin else handle:
        for text in answers(filter(str.strip, handle)):  # the lines that are not blank
            stdout.write(text)
    stdout.flush()
    return 0


def _parallel(spec: LoadSpec, jobs: int, lines: Iterable[str]) -> Iterator[str]:
    """Answers of chunks of `lines` from `jobs` workers, in order, at most 2 × jobs chunks in
    flight."""
    import multiprocessing
    from collections import deque

    from rtk_policy.replay.run import chunks

    with multiprocessing.get_context("spawn").Pool(jobs, _init_worker, (spec,)) as pool:
        waiting: deque = deque()
        for chunk in chunks(lines, CHUNK):
            waiting.append(pool.apply_async(_answer_chunk, (chunk,)))
            while len(waiting) >= 2 * jobs:
                yield waiting.popleft().get()
        while waiting:
            yield waiting.popleft().get()


def _open(source: str, stdin: IO[str], stderr: IO[str]) -> IO[str] | None:
    try:
        return stdin if source == "-" else open(source, encoding="utf-8", errors="surrogateescape")
    except OSError as error:
        stderr.write(f"rtk-policy: cannot read {source}: {error.strerror}\n")
        return None


_WORKER: Answers | None = None


def _init_worker(spec: LoadSpec) -> None:
    """Load the engine and the base context once per worker process."""
    global _WORKER
    from rtk_policy.engine.pipeline import load_engine

    policies = list(spec.policies) if spec.policies else None
    engine = load_engine(policies, spec.backend, spec.config, cwd=spec.cwd)
    _WORKER = Answers(engine, request_context(engine, spec.cwd, agent=spec.agent))


def _answer_chunk(lines: list[str]) -> str:
    """The answer lines of one chunk, joined."""
    assert _WORKER is not None
    return "".join(map(_WORKER, lines))


#: how an answer line that is an error starts (`dumps({"error": …})`)
_ERROR = '{"error":'


def answer_line(engine: Engine, base: Context, line: str) -> str:
    """The answer line (JSON, without its newline) for one input line."""
    try:
        request = json.loads(line)
        context = _line_context(base, request)
        # an answer line holds no reason: the rules' messages are not worked out
        decision = engine.decide(request["command"], context, messages=False)
    except (ValueError, KeyError, TypeError) as error:
        return dumps({"error": _describe(error)})
    except Exception as error:  # noqa: BLE001 - one bad line never stops the batch
        return dumps({"error": f"internal error: {type(error).__name__}: {error}"})
    return batch_line(decision)


def _line_context(base: Context, request: object) -> Context:
    if not isinstance(request, dict):
        raise TypeError("a line must be a JSON object")
    command = request.get("command")
    if not isinstance(command, str):
        raise TypeError('"command" must be a string')
    changes: dict[str, tuple[str, ...]] = {}
    config = request.get("config") or {}
    if not isinstance(config, dict):
        raise TypeError('"config" must be an object')
    if config:
        unknown = sorted(set(config) - _CONFIG_KEYS)
        if unknown:
            raise TypeError(f'unknown config key "{unknown[0]}"')
        for key, value in config.items():
            changes[key] = _strings(value, f"config.{key}")
    claude = request.get("claude")
    if claude is not None:
        if not isinstance(claude, dict):
            raise TypeError('"claude" must be an object')
        for key in ("deny", "ask", "allow"):
            changes[f"claude_{key}"] = _strings(claude.get(key, []), f"claude.{key}")
    return record.evolve(base, **changes) if changes else base


def _strings(value: object, name: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TypeError(f"{name} must be a list of strings")
    return tuple(value)


def _describe(error: Exception) -> str:
    if isinstance(error, json.JSONDecodeError):
        return f"invalid JSON: {error.msg} at column {error.colno}"
    if isinstance(error, KeyError):
        return 'missing "command"'
    return str(error)
