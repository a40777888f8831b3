"""`rtk-policy audit tail|stats|verify`: reading the audit log and checking it (DESIGN §8)."""

from __future__ import annotations

import json
import os
import time
from collections import deque
from collections.abc import Callable
from typing import IO, Any

from rtk_policy.audit import log as audit
from rtk_policy.audit.stats import compute
from rtk_policy.audit.verify import verify
from rtk_policy.util.term import wants_colour


def run(
    *,
    audit_command: str,
    file: str | None = None,
    lines: int = 10,
    follow: bool = False,
    as_json: bool = False,
    key: str | None = None,
    stdin: IO[str] | None = None,
    stdout: IO[str],
    stderr: IO[str],
) -> int:
    """Run the audit action `audit_command` ("tail", "stats" or "verify") on the log `file`
    (default: the configured one), its report `as_json` when asked; returns the exit code."""
    path = _log_path(file, stderr)
    if path is None:
        return 2
    if audit_command == "tail":
        return tail(path, lines, follow, stdout, as_json=as_json)
    if audit_command == "stats":
        return stats(path, as_json, stdout)
    return verify_command(path, stdout, stderr, key, as_json)


def _log_path(file: str | None, stderr: IO[str]) -> str | None:
    """`file` (`--file`), else the path the config selects (a config file that does not load is
    named on `stderr` and left out)."""
    if file:
        return file
    from rtk_policy.config.load import load_config

    config = load_config()
    for problem in config.problems:  # left out: the log is where the other files put it
        stderr.write(f"rtk-policy: {problem}\n")
    return audit.audit_path(config)


def format_record(record: dict[str, Any]) -> str:
    """One line for a record: time, verdict, agent, command, and `→ rewrite` when rewritten."""
    when = str(record.get("time", ""))[:19].replace("T", " ")
    verdict = str(record.get("verdict") or "none")
    agent = str(record.get("agent") or "-")
    command = str(record.get("command") or "").replace("\n", "\\n")
    line = f"{when}  {verdict:<5}  {agent:<8}  {command}"
    rewrite = record.get("rewrite")
    after = rewrite.get("after") if isinstance(rewrite, dict) else None
    if isinstance(after, str) and after != record.get("command"):
        line += "  → " + after.replace("\n", "\\n")
    if record.get("errors"):
        line += f"  [error: {record['errors'][0]}]"
    return line


def tail(
    path: str,
    lines: int,
    follow: bool,
    stdout: IO[str],
    sleep: Callable[[float], None] = time.sleep,
    keep_going: Callable[[], bool] = lambda: True,
    as_json: bool = False,
) -> int:
    """Print the last `lines` records (rotated files included); with `follow`, then each new one.
    `as_json`: each record as one JSON line, all its fields, instead of the short line."""
    show = json.dumps if as_json else format_record
    for record in deque(audit.iter_all_records(path), maxlen=max(lines, 0)):
        stdout.write(show(record) + "\n")
    stdout.flush()
    if not follow:
        return 0
    try:
        _follow(path, stdout, sleep, keep_going, show)
    except KeyboardInterrupt:
        pass
    return 0


def _follow(
    path: str,
    stdout: IO[str],
    sleep: Callable[[float], None],
    keep_going: Callable[[], bool],
    show: Callable[[dict[str, Any]], str] = format_record,
) -> None:
    """Print records appended to `path` until `keep_going()` is false; reopens after a rotation."""
    position, inode = _end_of(path)
    pending = b""
    while keep_going():
        sleep(0.5)
        try:
            stat = os.stat(path)
        except OSError:
            continue
        if stat.st_ino != inode or stat.st_size < position:
            position, inode, pending = 0, stat.st_ino, b""  # rotated or truncated: start over
        if stat.st_size == position:
            continue
        with open(path, "rb") as handle:
            handle.seek(position)
            data = pending + handle.read()
            position = handle.tell()
        *complete, pending = data.split(b"\n")
        for raw in complete:
            _print_raw(raw, stdout, show)
        stdout.flush()


def _end_of(path: str) -> tuple[int, int]:
    """(size, inode) of `path`, (0, 0) when it does not exist yet."""
    try:
        stat = os.stat(path)
    except OSError:
        return 0, 0
    return stat.st_size, stat.st_ino


def _print_raw(
    raw: bytes, stdout: IO[str], show: Callable[[dict[str, Any]], str] = format_record
) -> None:
    try:
        record = json.loads(raw)
    except ValueError:
        return
    if isinstance(record, dict):
        stdout.write(show(record) + "\n")


def stats(path: str, as_json: bool, stdout: IO[str]) -> int:
    """Print the log's stats as tables (in colour at a terminal), or as JSON with `as_json`."""
    summary = compute(audit.iter_all_records(path))
    summary["file"] = path
    if as_json:
        stdout.write(json.dumps(summary, indent=2) + "\n")
    elif wants_colour(stdout):  # a terminal: rich tables (rich is imported here only)
        from rtk_policy.commands.tables import print_stats

        print_stats(summary, stdout)
    else:
        stdout.write(render_stats(summary))
    return 0


def render_stats(summary: dict[str, Any]) -> str:
    """The terminal table of a `compute` summary."""
    out = [f"audit log: {summary['file']}", f"records:   {summary['records']}", ""]
    out.append("verdict      count")
    for verdict, count in summary["verdicts"].items():
        out.append(f"  {verdict:<10} {count:>6}")
    out += ["", "top rules                          count"]
    for entry in summary["top_rules"] or [{"rule": "(none)", "count": 0}]:
        out.append(f"  {entry['rule']:<32} {entry['count']:>6}")
    out += ["", "top rewritten tools      count   est. tokens saved"]
    for entry in summary["top_rewrites"] or [{"tool": "(none)", "count": 0, "est_tokens_saved": 0}]:
        out.append(f"  {entry['tool']:<22} {entry['count']:>6}   {entry['est_tokens_saved']:>17,}")
    out.append(f"  total (estimated)             {summary['tokens_saved_estimate']:>17,}")
    out.append(f"  ({summary['tokens_saved_note']})")
    out += ["", "latency (µs)     n      p50      p90      p99"]
    for name, figures in summary["latency_us"].items():
        out.append(
            f"  {name:<8} {figures['n']:>7} "
            f"{figures['p50']:>8} {figures['p90']:>8} {figures['p99']:>8}"
        )
    if summary["records_with_errors"]:
        out += ["", f"records with errors: {summary['records_with_errors']}"]
    return "\n".join(out) + "\n"


def verify_command(
    path: str, stdout: IO[str], stderr: IO[str], key_file: str | None = None, as_json: bool = False
) -> int:
    """Check the hash chain and the anchor: "ok: N records" and exit 0, or the first problem and
    exit 1 (2 when the `key_file` given cannot be used); `as_json`: the result as one object.

    Without `key_file`, the configured `[audit] key_file` is used when it can be read.
    """
    key = None
    if key_file:
        try:
            key = audit.keyed_digest(key_file)
        except (OSError, ValueError) as error:
            stderr.write(f"rtk-policy: audit key: {error}\n")
            return 2
    else:
        key = _configured_key(stderr)
    result = verify(path, key)
    for note in result.notes:
        stderr.write(f"note: {note}\n")
    if as_json:
        report = {"ok": result.ok, "file": path, "records": result.records,
                  "expired": result.expired, "problem": result.problem or "",
                  "notes": list(result.notes)}  # fmt: skip
        stdout.write(json.dumps(report, indent=2) + "\n")
        return 0 if result.ok else 1
    if not result.ok:
        stdout.write(f"{result.problem}\n")
        stderr.write(f"audit verify: failed after {result.records} good records\n")
        return 1
    expired = f" ({result.expired} older ones expired by rotation)" if result.expired else ""
    stdout.write(f"ok: {result.records} records{expired}\n")
    return 0


def _configured_key(stderr: IO[str]) -> Any:
    """The HMAC function of the configured key file; None (with a note when one is configured
    but cannot be read) otherwise."""
    from rtk_policy.config.load import load_config

    key_file = load_config().audit_key_file
    if not key_file:
        return None
    try:
        return audit.keyed_digest(key_file)
    except (OSError, ValueError) as error:
        stderr.write(f"note: the configured audit key cannot be used: {error}\n")
        return None
