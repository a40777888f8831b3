"""`rtk-policy discover [INPUTS] [--json] [--limit N]`: commands that got no rewrite, ranked by the
tokens their output costs, with the rewrite rule that would cover each ("none" when none would)."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import IO, Any

from rtk_policy.util.term import wants_colour


def run(
    *,
    inputs: Sequence[str] = (),
    limit: int = 30,
    as_json: bool = False,
    stdin: IO[str] | None = None,
    stdout: IO[str],
    stderr: IO[str],
) -> int:
    """Read transcripts and the audit log (or `inputs`) and print the `limit` first groups of the
    ranking (`as_json`: one JSON object; at a terminal that may have colour: a rich table,
    `commands.tables`)."""
    from rtk_policy.audit.log import audit_path
    from rtk_policy.engine.pipeline import load_engine
    from rtk_policy.replay.discover import discover
    from rtk_policy.replay.sources import default_inputs, input_files, read_file

    engine = load_engine()
    chosen = list(inputs) or default_inputs()
    if not inputs and os.path.exists(audit_path(engine.config)):
        chosen.append(audit_path(engine.config))
    try:
        files = input_files(chosen)
    except FileNotFoundError as error:
        stderr.write(f"rtk-policy discover: {error}\n")
        return 1
    items = (item for path in files for item in read_file(path))
    found = discover(engine, items, limit=limit)
    if as_json:
        stdout.write(json.dumps(found, indent=2) + "\n")
    elif wants_colour(stdout):  # rich is imported here only
        from rtk_policy.commands.tables import print_discover

        print_discover(found, headline(found, len(files)), stdout)
    else:
        stdout.write(render(found, len(files)))
    return 0


def headline(found: dict[str, Any], files: int) -> str:
    """The line above the ranking: how many commands, and the tokens the rules could save."""
    return (
        f"{found['commands']:,} commands without a rewrite in {files} file(s);"
        f" covered by a rule today: ~{found['covered_est_tokens_saved']:,} tokens to save"
    )


def render(found: dict[str, Any], files: int) -> str:
    """The ranking as a table."""
    lines = [
        headline(found, files),
        f"{'#':>3}  {'command':<24} {'calls':>6} {'est. tokens':>12}  rule",
    ]
    for rank, row in enumerate(found["top"], 1):
        lines.append(
            f"{rank:>3}  {row['command'][:24]:<24} {row['count']:>6} {row['est_tokens']:>12,}"
            f"  {row['rule']}"
        )
    return "\n".join(lines) + "\n"
