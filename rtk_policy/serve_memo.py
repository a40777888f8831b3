"""A remembering engine for the resident server: `evaluate(text, context)` is a pure function of its
arguments (and of the loaded policies and config, fixed for one engine), so a repeated command with the
same context gets the same `Outcome` without evaluating the policies again.

Only the evaluation is remembered: every hook call is still read, rendered and audited on its own. A
remembered outcome is returned with `eval_us = 0`, so the audit log says no evaluation time was spent.
Contexts that cannot be hashed (a `tool_input` holding lists or objects) are never remembered.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import attrs

#: Outcomes kept per engine; the least recently used one is dropped first.
MEMO_SIZE = 2048


class MemoEngine:
    """Wraps an `Engine`; same interface for the hook (`config`, `context`, `evaluate`, `decide`)."""

    def __init__(self, engine: Any, size: int = MEMO_SIZE) -> None:
        self.engine = engine
        self.config = engine.config
        self.size = size
        self.hits = 0
        self._memo: OrderedDict[tuple[str, Any], Any] = OrderedDict()

    def context(self, **fields: Any) -> Any:
        """The wrapped engine's `Context`."""
        return self.engine.context(**fields)

    def evaluate(self, text: str, context: Any) -> Any:
        """The wrapped engine's `Outcome`, remembered by (text, context)."""
        key = (text, context)
        try:
            found = self._memo.get(key)
        except TypeError:  # unhashable context
            return self.engine.evaluate(text, context)
        if found is not None:
            self._memo.move_to_end(key)
            self.hits += 1
            return found[1]
        outcome = self.engine.evaluate(text, context)
        again = attrs.evolve(outcome, evaluation=attrs.evolve(outcome.evaluation, eval_us=0))
        self._memo[key] = (outcome, again)
        if len(self._memo) > self.size:
            self._memo.popitem(last=False)
        return outcome

    def decide(self, text: str, context: Any) -> Any:
        """The `Decision` for `text`."""
        return self.evaluate(text, context).decision
