"""Commands that got no rewrite, ranked by the tokens their output costs (`rtk-policy discover`).

Reads Claude Code transcripts and audit logs (`replay.sources`), keeps the commands that were run
as typed (an audit record with no rewrite handed over, or any transcript command not already run
through `rtk`), groups them by program and subcommand, and asks the rewrite registry (the shipped
rewrite rules) which rule would rewrite each group today: its id, or "none" when no rule covers
that program family. Tokens are estimates: the typical output of one call
(`audit.stats.SAVINGS`) times the number of calls; the saving is what RTK would cut from it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from rtk_policy.audit.stats import DEFAULT_SAVINGS, SAVINGS


def family(segment: Any) -> str:
    """`program subcommand` (or `program`) of a segment: the group a command is counted in."""
    sub = segment.subcommand if segment.program in _WITH_SUBCOMMANDS else ""
    return f"{segment.program} {sub}".strip()


_WITH_SUBCOMMANDS = frozenset(
    "git cargo go docker kubectl gh npm pnpm yarn bun uv pip poetry helm terraform aws gcloud "
    "dotnet mvn gradle make".split()
)


def discover(engine: Any, items: Iterable[Any], limit: int = 30) -> dict[str, Any]:
    """The groups of un-rewritten commands of `items` (`ReplayItem`s), most tokens first."""
    counts: Counter[str] = Counter()
    rules: dict[str, str] = {}
    examples: dict[str, str] = {}
    context = engine.context(agent="")
    items = list(items)
    rewritten = {item.command for item in items if item.rewrite}  # the audit log says so
    for item in items:
        if item.rewrite or item.command in rewritten or not item.command.strip():
            continue
        outcome = engine.evaluate(item.command, context)
        for segment, result in zip(
            outcome.command_line.segments, outcome.evaluation.results, strict=False
        ):
            if (
                segment.depth
                or not segment.program
                or "rtk" in (segment.program, *segment.wrappers)
            ):
                continue
            key = family(segment)
            counts[key] += 1
            examples.setdefault(key, segment.text)
            rule = result.rewrite.rule.id if result.rewrite is not None else ""
            if rule and rules.get(key, "none") == "none":
                rules[key] = rule
            rules.setdefault(key, "none")
    rows = [_row(key, n, rules[key], examples[key]) for key, n in counts.items()]
    rows.sort(key=lambda row: (-row["est_tokens"], row["command"]))
    covered = [row for row in rows if row["rule"] != "none"]
    return {
        "commands": sum(counts.values()),
        "groups": len(rows),
        "covered_est_tokens_saved": sum(row["est_tokens_saved"] for row in covered),
        "top": rows[:limit],
    }


def _row(key: str, count: int, rule: str, example: str) -> dict[str, Any]:
    tokens, fraction = SAVINGS.get(key) or SAVINGS.get(key.split(" ")[0]) or DEFAULT_SAVINGS
    saved = round(tokens * fraction) * count if rule != "none" else 0
    return {
        "command": key,
        "count": count,
        "est_tokens": tokens * count,
        "est_tokens_saved": saved,
        "rule": rule,
        "example": example,
    }
