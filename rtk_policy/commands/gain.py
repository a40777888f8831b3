"""`rtk-policy gain [--json] [--log PATH]`: tokens saved by rewrites, by day, tool and project."""

from __future__ import annotations

import json
from typing import IO, Any

from rtk_policy.audit.gain import bar_chart, gain
from rtk_policy.util.term import wants_colour


def run(
    *,
    log: str | None = None,
    as_json: bool = False,
    stdin: IO[str] | None = None,
    stdout: IO[str],
    stderr: IO[str],
) -> int:
    """Print the gain of the audit log `log` (default: the configured one; `as_json`: one JSON
    object; at a terminal that may have colour: rich tables, `commands.tables`)."""
    from rtk_policy.audit.log import audit_path, iter_all_records
    from rtk_policy.config.load import load_config

    path = log or audit_path(load_config())
    summary = gain(iter_all_records(path))
    if as_json:
        stdout.write(json.dumps({"log": path, **summary}, indent=2) + "\n")
    elif wants_colour(stdout):  # rich is imported here only
        from rtk_policy.commands.tables import print_gain

        print_gain(summary, path, stdout, sections(summary))
    else:
        stdout.write(render(summary, path))
    return 0


def sections(summary: dict[str, Any]) -> list[tuple[str, str, list[dict[str, Any]]]]:
    """(title, key, rows) of each chart: the last 14 days, the top 10 tools and projects."""
    return [
        ("by day", "day", summary["by_day"][-14:]),
        ("by tool", "tool", summary["by_tool"][:10]),
        ("by project", "project", summary["by_project"][:10]),
    ]


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
    for title, key, rows in sections(summary):
        lines += ["", f"tokens saved {title}:", *("  " + bar for bar in bar_chart(rows, key))]
    return "\n".join(lines) + "\n"
