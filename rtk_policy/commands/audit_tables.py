"""`audit stats` at a terminal: the summary of `audit.stats.compute` as rich tables, in colour.

Only `audit stats` imports this module, and only when its output is a terminal that may have
colour (`util.term.wants_colour`: a TTY, no `NO_COLOR`, not `TERM=dumb`); elsewhere it prints the
plain text of `commands.audit.render_stats`, which scripts and tests read.
"""

from __future__ import annotations

from typing import IO, Any

from rich.console import Console
from rich.table import Table

#: the colour of each verdict
_VERDICT_STYLES = {"deny": "red", "ask": "yellow", "allow": "green", "none": "dim"}


def print_stats(summary: dict[str, Any], stream: IO[str]) -> None:
    """Write the summary's tables to `stream` (a terminal)."""
    console = Console(file=stream, force_terminal=True, highlight=False)
    console.print(f"[bold]audit log[/bold] {summary['file']}  ({summary['records']:,} records)")
    console.print(_verdicts(summary), _rules(summary), _rewrites(summary), _latency(summary))
    if summary["records_with_errors"]:
        console.print(f"[red]records with errors: {summary['records_with_errors']:,}[/red]")


def _table(title: str, *columns: str) -> Table:
    """A table whose first column is left-aligned and the others right-aligned (numbers)."""
    table = Table(title=title, title_justify="left", title_style="bold")
    table.add_column(columns[0])
    for name in columns[1:]:
        table.add_column(name, justify="right")
    return table


def _verdicts(summary: dict[str, Any]) -> Table:
    table = _table("verdicts", "verdict", "count")
    for verdict, count in summary["verdicts"].items():
        style = _VERDICT_STYLES.get(verdict, "")
        table.add_row(f"[{style}]{verdict}[/{style}]" if style else verdict, f"{count:,}")
    return table


def _rules(summary: dict[str, Any]) -> Table:
    table = _table("top rules", "rule", "count")
    for entry in summary["top_rules"]:
        table.add_row(entry["rule"], f"{entry['count']:,}")
    return table


def _rewrites(summary: dict[str, Any]) -> Table:
    table = _table("top rewritten tools", "tool", "count", "est. tokens saved")
    for entry in summary["top_rewrites"]:
        table.add_row(entry["tool"], f"{entry['count']:,}", f"{entry['est_tokens_saved']:,}")
    table.add_row("[bold]total (estimated)[/bold]", "", f"{summary['tokens_saved_estimate']:,}")
    table.caption = summary["tokens_saved_note"]
    return table


def _latency(summary: dict[str, Any]) -> Table:
    table = _table("latency (µs)", "", "n", "p50", "p90", "p99")
    for name, figures in summary["latency_us"].items():
        table.add_row(name, *(f"{figures[key]:,}" for key in ("n", "p50", "p90", "p99")))
    return table
