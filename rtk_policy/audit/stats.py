"""Summaries of the audit log for `rtk-policy audit stats`: verdicts, rules, rewrites, latency.

Tokens saved are an *estimate*: for each rewrite to an `rtk` command, the typical tokens one call of
the original command prints times RTK's published savings for that command (RTK's README "30-min
Claude Code session" table and its per-command docs). Real savings depend on the project and the
output.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

#: (key, typical tokens of one call's output without rtk, savings fraction with rtk). The key is
#: "tool subcommand" or "tool" as it follows `rtk` in the rewritten command.
SAVINGS: dict[str, tuple[int, float]] = {
    "git status": (300, 0.80),
    "git diff": (2000, 0.75),
    "git show": (2000, 0.80),
    "git log": (500, 0.80),
    "git add": (200, 0.92),
    "git commit": (200, 0.92),
    "git push": (200, 0.92),
    "git pull": (200, 0.92),
    "git": (300, 0.70),
    "cargo test": (5000, 0.90),
    "cargo build": (2000, 0.80),
    "cargo clippy": (2000, 0.80),
    "cargo check": (2000, 0.80),
    "cargo": (2000, 0.80),
    "npm": (5000, 0.90),
    "pnpm": (2000, 0.80),
    "pytest": (2000, 0.90),
    "go test": (2000, 0.90),
    "go": (1500, 0.80),
    "vitest": (5000, 0.90),
    "jest": (5000, 0.90),
    "playwright": (5000, 0.90),
    "tsc": (2000, 0.83),
    "lint": (2000, 0.84),
    "ruff": (1000, 0.80),
    "mypy": (1000, 0.80),
    "ls": (200, 0.80),
    "tree": (200, 0.80),
    "find": (1000, 0.76),
    "read": (2000, 0.60),
    "grep": (2000, 0.80),
    "rg": (2000, 0.80),
    "docker": (300, 0.80),
    "kubectl": (500, 0.80),
    "gh": (1000, 0.80),
}
#: For an rtk command with no entry: RTK's lower bound ("60-90%") on a modest output.
DEFAULT_SAVINGS = (500, 0.60)
ESTIMATE_NOTE = (
    "estimate: typical tokens per call x RTK's published savings % per command "
    "(git status/log/diff ~75-80%, cargo/pytest test ~90%, ls/find ~76-80%, read ~60%)"
)

_RTK_CALL = re.compile(r"(?:^|[\s;&|(`])rtk\s+([\w.+-]+)(?:\s+([a-z][\w-]*))?")


def rewritten_tools(before: str, after: str) -> list[str]:
    """The "tool sub" keys of the `rtk` calls a rewrite added (not those already in `before`)."""
    found = [_key(m.group(1), m.group(2)) for m in _RTK_CALL.finditer(after)]
    already = Counter(_key(m.group(1), m.group(2)) for m in _RTK_CALL.finditer(before or ""))
    added = []
    for key in found:
        if already[key]:
            already[key] -= 1
        else:
            added.append(key)
    return added


def _key(tool: str, sub: str | None) -> str:
    """`git status` when the pair has a savings entry or the tool has subcommands, else `git`."""
    if sub and (
        f"{tool} {sub}" in SAVINGS or tool in {"git", "cargo", "go", "docker", "kubectl", "gh"}
    ):
        return f"{tool} {sub}"
    return tool


def estimated_tokens_saved(key: str) -> int:
    """Tokens one rewritten call of `key` saves, per the table (else the tool's, else default)."""
    tokens, fraction = SAVINGS.get(key) or SAVINGS.get(key.split(" ")[0]) or DEFAULT_SAVINGS
    return round(tokens * fraction)


def percentile(values: list[int], fraction: float) -> int:
    """Nearest-rank percentile of sorted `values` (0 when empty)."""
    if not values:
        return 0
    rank = max(1, math.ceil(len(values) * fraction))
    return values[min(rank, len(values)) - 1]


def _latency(values: list[int]) -> dict[str, int]:
    ordered = sorted(values)
    return {
        "n": len(ordered),
        "p50": percentile(ordered, 0.50),
        "p90": percentile(ordered, 0.90),
        "p99": percentile(ordered, 0.99),
    }


def compute(records: Iterable[dict[str, Any]], top: int = 10) -> dict[str, Any]:
    """The stats of `records`, as plain data (what `audit stats --json` prints)."""
    verdicts: Counter[str] = Counter()
    rules: Counter[str] = Counter()
    tools: Counter[str] = Counter()
    total_us: list[int] = []
    eval_us: list[int] = []
    count = errors = 0
    for record in records:
        count += 1
        verdicts[str(record.get("verdict") or "none")] += 1
        rules.update(str(rule) for rule in record.get("rule_ids") or ())
        rewrite = record.get("rewrite") or {}
        if isinstance(rewrite, dict) and isinstance(rewrite.get("after"), str):
            tools.update(rewritten_tools(str(rewrite.get("before") or ""), rewrite["after"]))
        for values, key in ((total_us, "total_us"), (eval_us, "eval_us")):
            value = record.get(key)
            if isinstance(value, int) and value > 0:
                values.append(value)
        errors += bool(record.get("errors"))
    rewrites = [
        {"tool": tool, "count": n, "est_tokens_saved": n * estimated_tokens_saved(tool)}
        for tool, n in tools.most_common()
    ]
    return {
        "records": count,
        "verdicts": dict(verdicts.most_common()),
        "records_with_errors": errors,
        "top_rules": [{"rule": rule, "count": n} for rule, n in rules.most_common(top)],
        "top_rewrites": rewrites[:top],
        "tokens_saved_estimate": sum(entry["est_tokens_saved"] for entry in rewrites),
        "tokens_saved_note": ESTIMATE_NOTE,
        "latency_us": {"total": _latency(total_us), "eval": _latency(eval_us)},
    }
