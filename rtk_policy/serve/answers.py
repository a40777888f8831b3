"""The resident server's memo of whole Claude Code hook answers.

Claude Code sends every call with its own `tool_use_id`; everything else in the payload of a
repeated command is the same. The hook's answer (stdout and stderr) is a function of the payload,
the engine (its policies, config and forwarded environment: one `MemoEngine` per combination) and
the folder facts of the payload's cwd (project folders, Claude rules), and `tool_use_id` goes only
into the audit record: Claude's `parse_request` copies it into the request, no `Context` field
holds it and `render` never reads it (a test holds every agent to that). So an answer is
remembered by (the payload without its `tool_use_id`, the engine, the facts), and a repeated call
is answered with it and audited on its own (`hook.record_call`, its own ids and time). The engine
and the facts are compared by identity: when a policy, config or settings file changes, the server
makes new ones and nothing remembered before is used again. Only Claude answers that came from a
decision without any error are remembered (never bad input, a tool passed through, a failure).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from rtk_policy.hook.service import HookAnswer, record_call
from rtk_policy.serve.memo import unevaluated
from rtk_policy.util import record

if TYPE_CHECKING:
    from rtk_policy.hook.service import Decided

#: Answers kept; the least recently used one is dropped first.
ANSWERS_SIZE = 2048
#: Payloads longer than this (bytes) are never remembered (the memo stays within a few MB).
LONGEST_PAYLOAD = 16 * 1024


class AnswerMemo:
    """Remembered Claude hook answers: `key`, then `replay` (a hit) or `remember` (after a call)."""

    def __init__(self, size: int = ANSWERS_SIZE) -> None:
        self.size = size
        self.hits = 0
        #: key -> (engine, facts, the answer, its (request, outcome, decision))
        self._answers: OrderedDict[tuple, tuple[Any, Any, HookAnswer, Decided]] = OrderedDict()
        self._lock = threading.Lock()  #: held while `_answers` changes (the server's threads)

    def key(self, agent: str, size: int, data: Any, engine: Any, facts: Any) -> tuple | None:
        """The memo key of a decoded payload `data` of `size` bytes (None: not remembered).
        `facts` is the folder facts object of the payload's cwd (`FolderFacts.facts_of`)."""
        if agent != "claude" or type(data) is not dict or engine is None or facts is None:
            return None
        if size > LONGEST_PAYLOAD:
            return None
        tool_use_id = data.get("tool_use_id")
        if tool_use_id is not None and type(tool_use_id) is not str:
            return None
        try:
            rest = tuple(
                (name, _frozen(value)) for name, value in data.items() if name != "tool_use_id"
            )
        except RecursionError:
            return None
        return (id(engine), id(facts), rest)

    def replay(self, key: tuple, data: dict, engine: Any, facts: Any, started: int) -> Any:
        """The remembered `HookAnswer` for `key`, its call audited with the ids of `data`; None
        when nothing is remembered (or it was remembered for another engine or other facts)."""
        with self._lock:
            found = self._answers.get(key)
            if found is None or found[0] is not engine or found[1] is not facts:
                return None
            self._answers.move_to_end(key)
            self.hits += 1
        answer = found[2]
        request, outcome, decision = found[3]
        tool_use_id = data.get("tool_use_id")
        record_call(
            engine.config,
            record.evolve(request, tool_use_id=tool_use_id if type(tool_use_id) is str else ""),
            outcome,
            decision,
            (time.perf_counter_ns() - started) // 1000,
        )
        return answer

    def remember(self, key: tuple, data: dict, engine: Any, facts: Any, answer: HookAnswer) -> None:
        """Keep `answer` for `key` when it is a Claude decision answered without error whose
        request took its `tool_use_id` from the payload's (the one part a replay changes)."""
        if answer.decided is None:
            return
        request = answer.decided[0]
        tool_use_id = data.get("tool_use_id")
        if request.agent != "claude" or request.tool_use_id != (tool_use_id or ""):
            return
        _, outcome, decision = answer.decided
        again = unevaluated(outcome)  # a replay spends no evaluation time, its record says so
        decided = (request, again, decision)
        answer = HookAnswer(answer.stdout, answer.stderr, decided)
        with self._lock:
            self._answers[key] = (engine, facts, answer, decided)  # their ids stay unique
            self._answers.move_to_end(key)
            while len(self._answers) > self.size:
                self._answers.popitem(last=False)


def _frozen(value: Any) -> Any:
    """A hashable form of a JSON value that tells apart what `==` would not (1, 1.0, true)."""
    kind = type(value)
    if kind is str:
        return value
    if kind is dict:
        return (dict, tuple((name, _frozen(item)) for name, item in value.items()))
    if kind is list:
        return (list, tuple(_frozen(item) for item in value))
    return (kind, value)

