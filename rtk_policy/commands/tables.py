"""The reporting commands at a terminal: `audit stats`, `gain` and `discover` as rich tables, in
colour (issue 20 points 4 and 10).

Only those commands import this module, and only when their output is a terminal that may have
colour (`util.term.wants_colour`: a TTY, no `NO_COLOR`, not `TERM=dumb`); elsewhere they print
their plain text (`commands.audit.render_stats`, `commands.gain.render`,
`commands.discover.render`), which scripts and tests read. The figures and rows are the same in
both forms; the hook never imports rich.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import IO, Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from rtk_policy.audit.gain import bar

#: one chart of `gain`: its title, the rows' key, the rows
Section = tuple[str, str, list[dict[str, Any]]]
#: the colour of each verdict
_VERDICT_STYLES = {"deny": "red", "ask": "yellow", "allow": "green", "none": "dim"}


def console(stream: IO[str]) -> Console:
    """A rich console writing to `stream` (a terminal that may have colour)."""
    return Console(file=stream, force_terminal=True, highlight=False)


def table(title: str, *columns: str) -> Table:
    """A table whose first column is left-aligned and the others right-aligned (numbers)."""
    made = Table(title=title, title_justify="left", title_style="bold")
    made.add_column(columns[0])
    for name in columns[1:]:
        made.add_column(name, justify="right")
    return made


def print_stats(summary: dict[str, Any], stream: IO[str]) -> None:
    """Write the `audit stats` summary's tables to `stream`."""
    out = console(stream)
    out.print(f"[bold]audit log[/bold] {escape(summary['file'])}  ({summary['records']:,} records)")
    out.print(_verdicts(summary), _rules(summary), _rewrites(summary), _latency(summary))
    if summary["records_with_errors"]:
        out.print(f"[red]records with errors: {summary['records_with_errors']:,}[/red]")


def print_gain(
    summary: dict[str, Any], path: str, stream: IO[str], sections: Iterable[Section]
) -> None:
    """Write `gain`'s totals and a chart table per section (`sections`: (title, key, rows), as
    the plain text shows them) to `stream`."""
    out = console(stream)
    out.print(
        f"[bold]{summary['rewrites']:,} rewrites, ~{summary['tokens_saved_estimate']:,} tokens"
        f" saved[/bold] ({escape(path)})"
    )
    out.print(f"  [dim]{summary['note']}[/dim]")
    if not summary["rewrites"]:
        out.print("no rewrite recorded yet (is RTK installed? see `rtk-policy doctor`)")
        return
    for title, key, rows in sections:
        chart = table(f"tokens saved {title}", key, "tokens", "")
        chart.columns[2].justify = "left"
        top = max((row["tokens"] for row in rows), default=0)
        for row in rows:
            tokens = row["tokens"]
            chart.add_row(escape(str(row[key])), f"{tokens:,}", f"[cyan]{bar(tokens, top)}")
        out.print(chart)


def print_discover(found: dict[str, Any], headline: str, stream: IO[str]) -> None:
    """Write `discover`'s ranking (`headline` above it) to `stream`: a rule of `none` dimmed."""
    out = console(stream)
    out.print(headline, markup=False)
    ranking = table("", "#", "command", "calls", "est. tokens", "rule")
    ranking.columns[0].justify = "right"
    ranking.columns[1].justify, ranking.columns[1].overflow = "left", "fold"
    ranking.columns[4].justify = "left"
    for rank, row in enumerate(found["top"], 1):
        rule = "[dim]none[/dim]" if row["rule"] == "none" else escape(row["rule"])
        figures = f"{row['count']:,}", f"{row['est_tokens']:,}"
        ranking.add_row(str(rank), escape(row["command"]), *figures, rule)
    out.print(ranking)


def _verdicts(summary: dict[str, Any]) -> Table:
    made = table("verdicts", "verdict", "count")
    for verdict, count in summary["verdicts"].items():
        style = _VERDICT_STYLES.get(verdict, "")
        made.add_row(f"[{style}]{verdict}[/{style}]" if style else verdict, f"{count:,}")
    return made


def _rules(summary: dict[str, Any]) -> Table:
    made = table("top rules", "rule", "count")
    for entry in summary["top_rules"]:
        made.add_row(escape(entry["rule"]), f"{entry['count']:,}")
    return made


def _rewrites(summary: dict[str, Any]) -> Table:
    made = table("top rewritten tools", "tool", "count", "est. tokens saved")
    for entry in summary["top_rewrites"]:
        saved = f"{entry['est_tokens_saved']:,}"
        made.add_row(escape(entry["tool"]), f"{entry['count']:,}", saved)
    made.add_row("[bold]total (estimated)[/bold]", "", f"{summary['tokens_saved_estimate']:,}")
    made.caption = escape(summary["tokens_saved_note"])
    return made


def _latency(summary: dict[str, Any]) -> Table:
    made = table("latency (µs)", "", "n", "p50", "p90", "p99")
    for name, figures in summary["latency_us"].items():
        made.add_row(name, *(f"{figures[key]:,}" for key in ("n", "p50", "p90", "p99")))
    return made
