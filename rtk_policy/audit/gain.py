"""Tokens saved by rewrites, from the audit log: by day, by tool and by project (`rtk-policy gain`).

Each record whose command was handed over rewritten (`rewrite.after`) counts the `rtk` calls the
rewrite added, each worth `stats.estimated_tokens_saved` (typical tokens of the command's output
times RTK's published savings for it): an estimate, as `audit stats` says.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

from rtk_policy.audit.stats import ESTIMATE_NOTE, estimated_tokens_saved, rewritten_tools


def gain(records: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Rewrites and estimated tokens saved, in total and per day, tool and project (plain data)."""
    per: dict[str, dict[str, Counter[str]]] = {
        axis: defaultdict(Counter) for axis in ("day", "tool", "project")
    }
    total = Counter[str]()
    for record in records:
        for tool in _tools_of(record):
            saved = estimated_tokens_saved(tool)
            keys = {
                "day": str(record.get("time") or "")[:10] or "unknown",
                "tool": tool,
                "project": str(record.get("cwd") or "") or "unknown",
            }
            for axis, key in keys.items():
                per[axis][key].update(rewrites=1, tokens=saved)
            total.update(rewrites=1, tokens=saved)
    return {
        "rewrites": total["rewrites"],
        "tokens_saved_estimate": total["tokens"],
        "note": ESTIMATE_NOTE,
        "by_day": _rows(per["day"], "day", by_key=True),
        "by_tool": _rows(per["tool"], "tool"),
        "by_project": _rows(per["project"], "project"),
    }


def _tools_of(record: dict[str, Any]) -> list[str]:
    rewrite = record.get("rewrite")
    if not isinstance(rewrite, dict) or not isinstance(rewrite.get("after"), str):
        return []
    return rewritten_tools(str(rewrite.get("before") or ""), rewrite["after"])


def _rows(counts: dict[str, Counter[str]], name: str, by_key: bool = False) -> list[dict]:
    """One row per key: its rewrites and tokens; by key (days, in order) or most tokens first."""
    items = (
        sorted(counts.items()) if by_key else sorted(counts.items(), key=lambda i: -i[1]["tokens"])
    )
    return [{name: key, "rewrites": c["rewrites"], "tokens": c["tokens"]} for key, c in items]


def bar_chart(rows: list[dict], label: str, width: int = 40) -> list[str]:
    """A plain-text bar per row (`bar`, scaled to the largest `tokens`), after its label."""
    top = max((row["tokens"] for row in rows), default=0)
    wide = max((len(str(row[label])) for row in rows), default=0)
    return [
        f"{str(row[label]):<{wide}}  {bar(row['tokens'], top, width)} {row['tokens']:,}"
        for row in rows
    ]


def bar(tokens: int, top: int, width: int = 40) -> str:
    """`tokens` as `█` blocks, `width` of them for `top` (a sliver for a small non-zero value)."""
    size = round(width * tokens / top) if top else 0
    return "█" * size or ("▏" if tokens else "")
