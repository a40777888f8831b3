"""`rtk-policy gain [--json] [--log PATH]`: tokens saved by rewrites, by day, tool and project."""

from __future__ import annotations

import json
from typing import IO, Any

from rtk_policy.audit.gain import bar_chart, gain


def run(
    *,
    log: str | None = None,
    as_json: bool = False,
    stdin: IO[str] | None = None,
    stdout: IO[str],
    stderr: IO[str],
) -> int:
    """Print the gain of the audit log `log` (default: the configured one; `as_json`: one JSON
    object)."""
    from rtk_policy.audit.log import audit_path, iter_all_records
    from rtk_policy.config.load import load_config

    path = log or audit_path(load_config())
    summary = gain(iter_all_records(path))
    if as_json:
        stdout.write(json.dumps({"log": path, **summary}, indent=2) + "\n")
        return 0
    stdout.write(render(summary, path))
    return 0


def render(summary: dict[str, Any], path: str) -> str:
    """The gain as text: totals, a chart per day, and the top tools and projects."""
    lines = [
        f"{summary['rewrites']:,} rewrites, ~{summary['tokens_saved_estimate']:,} tokens saved"
        f" ({path})",
        f"  {summary['note']}",
    ]
    if not summary["rewrites"]:
        lines.append("no rewrite recorded yet (is RTK installed? see `rtk-policy doctor`)")
        return "\n".join(lines) + "\n"
    for title, key, rows in (
        ("by day", "day", summary["by_day"][-14:]),
        ("by tool", "tool", summary["by_tool"][:10]),
        ("by project", "project", summary["by_project"][:10]),
    ):
        lines += ["", f"tokens saved {title}:", *("  " + bar for bar in bar_chart(rows, key))]
    return "\n".join(lines) + "\n"
