"""Shadow evaluation (`rtk-policy replay`): past commands under a candidate policy set vs what
happened.

The baseline of an audit record is its recorded verdict and rewrite; the baseline of a transcript's
command is its decision under the baseline policy set (default: the search path). Everything is
counted in a `Tally` (counters plus at most `limit` examples per kind of change), so memory does not
grow with the input; tallies of chunks evaluated in worker processes merge into one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING

from rtk_policy.policytest.examples import matched_rule_ids
from rtk_policy.replay.sources import ReplayItem
from rtk_policy.util import record

if TYPE_CHECKING:
    from rtk_policy.engine.pipeline import Engine
    from rtk_policy.policy.model import Context

_CACHE_SIZE = 20_000  #: decisions remembered per engine, keyed by (command, cwd, permission mode)


@record.mutable
class Tally:
    """Counters and bounded examples of one replay (or one chunk of it)."""

    limit: int = 3
    commands: int = 0
    happened: Counter = record.Factory(Counter)  #: (happened, candidate verdict) → count
    baseline: Counter = record.Factory(Counter)  #: baseline verdict → count
    candidate: Counter = record.Factory(Counter)  #: candidate verdict → count
    changes: Counter = record.Factory(Counter)  #: (baseline verdict, candidate verdict) → count
    rewrites: Counter = record.Factory(Counter)  #: "gained" | "lost" | "changed" | "kept" → count
    rule_hits: Counter = record.Factory(Counter)  #: rule id → commands it matched
    errors: int = 0
    examples: dict = record.Factory(dict)  #: key (e.g. "none->deny", "gained") → [example dicts]

    def example(self, key: str, data: dict) -> None:
        """Keep `data` as an example of `key` unless `limit` examples are already kept."""
        kept = self.examples.setdefault(key, [])
        if len(kept) < self.limit:
            kept.append(data)

    def merge(self, other: Tally) -> None:
        """Add `other`'s counts and examples (up to the limit) to this tally."""
        self.commands += other.commands
        self.errors += other.errors
        for name in ("happened", "baseline", "candidate", "changes", "rewrites", "rule_hits"):
            getattr(self, name).update(getattr(other, name))
        for key, items in other.examples.items():
            for data in items:
                self.example(key, data)


@record.frozen
class Verdict:
    """The part of a decision replay compares."""

    verdict: str
    rewrite: str | None  #: the command the host would run instead, None when unchanged
    rules: tuple[str, ...] = ()


class Evaluator:
    """Evaluates replay items under a candidate engine and, when given, a baseline engine."""

    def __init__(
        self, candidate: Engine, baseline: Engine | None, claude_rules: bool = True
    ) -> None:
        self.candidate = candidate
        self.baseline = baseline
        self.claude_rules = claude_rules
        self._contexts: dict[tuple[str, str], Context] = {}
        self._caches: dict[int, dict[tuple[str, str, str], Verdict]] = {}

    def context(self, engine: Engine, cwd: str, mode: str) -> Context:
        """The context of a command run in `cwd`, with the Claude Code rules that apply there
        today."""
        key = (cwd, mode)
        context = self._contexts.get(key)
        if context is None:
            rules: tuple[tuple[str, ...], ...] = ((), (), ())
            if self.claude_rules:
                from rtk_policy.settings.claude_rules import load_claude_rules

                rules = tuple(tuple(r) for r in load_claude_rules(cwd or None))
            context = engine.context(
                agent="claude", cwd=cwd, permission_mode=mode,
                claude_deny=rules[0], claude_ask=rules[1], claude_allow=rules[2],
            )
            self._contexts[key] = context
        return context

    def decide(self, engine: Engine, item: ReplayItem) -> Verdict:
        """The verdict of `item` under `engine`, remembered for repeated commands."""
        cache = self._caches.setdefault(id(engine), {})
        key = (item.command, item.cwd, item.permission_mode)
        found = cache.get(key)
        if found is None:
            outcome = engine.evaluate(
                item.command, self.context(engine, item.cwd, item.permission_mode)
            )
            decision = outcome.decision
            found = Verdict(
                decision.verdict, decision.rewritten, matched_rule_ids(outcome.evaluation)
            )
            if len(cache) >= _CACHE_SIZE:
                cache.clear()
            cache[key] = found
        return found

    def tally(self, items: Iterable[ReplayItem], tally: Tally) -> Tally:
        """Evaluate every item into `tally` and return it."""
        for item in items:
            self.add(item, tally)
        return tally

    def add(self, item: ReplayItem, tally: Tally) -> None:
        """Evaluate one item and count it."""
        tally.commands += 1
        try:
            now = self.decide(self.candidate, item)
            before = self._baseline(item, now)
        except Exception as error:  # noqa: BLE001 - one bad command must not stop a replay
            tally.errors += 1
            tally.example("errors", {"command": item.command, "location": item.location,
                                     "error": f"{type(error).__name__}: {error}"})
            return
        tally.candidate[now.verdict] += 1
        tally.baseline[before.verdict] += 1
        tally.happened[(item.happened, now.verdict)] += 1
        tally.rule_hits.update(now.rules)
        if before.verdict != now.verdict:
            tally.changes[(before.verdict, now.verdict)] += 1
            tally.example(f"{before.verdict}->{now.verdict}", _example(item, before, now))
        change = rewrite_change(before.rewrite, now.rewrite)
        if change:
            tally.rewrites[change] += 1
            if change != "kept":
                tally.example(change, _example(item, before, now))

    def _baseline(self, item: ReplayItem, now: Verdict) -> Verdict:
        if item.verdict is not None:
            return Verdict(item.verdict, item.rewrite)
        if self.baseline is None:
            return now
        return self.decide(self.baseline, item)


def rewrite_change(before: str | None, after: str | None) -> str:
    """"gained", "lost", "changed", "kept" (same rewrite) or "" (no rewrite either way)."""
    if before is None and after is None:
        return ""
    if before is None:
        return "gained"
    if after is None:
        return "lost"
    return "kept" if before == after else "changed"


def _example(item: ReplayItem, before: Verdict, now: Verdict) -> dict:
    return {"command": item.command, "location": item.location, "happened": item.happened,
            "before": {"verdict": before.verdict, "rewrite": before.rewrite},
            "after": {"verdict": now.verdict, "rewrite": now.rewrite, "rules": list(now.rules)}}
