"""`rtk-policy audit tail|stats|verify` through the CLI entry point, and the stats helpers."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from test_audit_support import make_config, make_decision

from rtk_policy.audit import log as audit
from rtk_policy.audit.stats import compute, estimated_tokens_saved, percentile, rewritten_tools
from rtk_policy.commands import audit as audit_command
from rtk_policy.main import main

ROWS = [  # (command, rewritten, verdict, rule_ids, total_us)
    ("git status", "rtk git status", "allow", ("git-read",), 1000),
    ("git status", "rtk git status", "allow", ("git-read",), 2000),
    ("cargo test && ls", "rtk cargo test && rtk ls", "none", (), 3000),
    ("rm -rf /", None, "deny", ("rm-root",), 4000),
    ("git push --force", None, "ask", ("git-force", "git-read"), 5000),
]


def fill(tmp_path: Path) -> str:
    config = make_config(tmp_path)
    for command, rewritten, verdict, rules, total_us in ROWS:
        decision = make_decision(command, rewritten, verdict=verdict, rule_ids=rules)
        audit.record(
            config,
            agent="claude",
            request={"command": command},
            decision=decision,
            total_us=total_us,
        )
    return config.audit_path


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["audit", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_verify_ok_and_failure(tmp_path, capsys):
    path = fill(tmp_path)
    assert run_cli(capsys, "verify", "--file", path) == (0, "ok: 5 records\n", "")
    content = Path(path).read_text().splitlines()
    del content[2]
    Path(path).write_text("\n".join(content) + "\n")
    code, out, _err = run_cli(capsys, "verify", "--file", path)
    assert code == 1 and out.startswith(f"{path}:3: prev does not match")


def test_verify_of_a_missing_log_is_ok_and_says_so(tmp_path, capsys):
    code, out, err = run_cli(capsys, "verify", "--file", str(tmp_path / "none.jsonl"))
    assert (code, out) == (0, "ok: 0 records\n") and "no audit log" in err


def test_tail_prints_the_last_records(tmp_path, capsys):
    path = fill(tmp_path)
    code, out, _err = run_cli(capsys, "tail", "-n", "3", "--file", path)
    shown = out.splitlines()
    assert code == 0 and len(shown) == 3
    assert "none " in shown[0] and "cargo test && ls  → rtk cargo test && rtk ls" in shown[0]
    assert "deny " in shown[1] and shown[1].endswith("rm -rf /")
    assert " claude " in shown[2] and "git push --force" in shown[2] and "→" not in shown[2]


def test_tail_follow_prints_appended_records(tmp_path):
    path = fill(tmp_path)
    config = make_config(tmp_path)
    polls = []

    def sleep(_seconds: float) -> None:
        if len(polls) == 1:
            audit.record(
                config,
                agent="gemini",
                request={"command": "ls -la"},
                decision=make_decision("ls -la", "rtk ls -la"),
            )
        polls.append(1)

    out = io.StringIO()
    code = audit_command.tail(path, 0, True, out, sleep=sleep, keep_going=lambda: len(polls) < 3)
    assert code == 0
    assert out.getvalue().splitlines()[-1].endswith("gemini    ls -la  → rtk ls -la")
    assert len(out.getvalue().splitlines()) == 1


def test_stats_json(tmp_path, capsys):
    path = fill(tmp_path)
    code, out, _err = run_cli(capsys, "stats", "--json", "--file", path)
    summary = json.loads(out)
    assert code == 0 and summary["records"] == 5
    assert summary["verdicts"] == {"allow": 2, "none": 1, "deny": 1, "ask": 1}
    assert summary["top_rules"][0] == {"rule": "git-read", "count": 3}
    tools = {entry["tool"]: entry["count"] for entry in summary["top_rewrites"]}
    assert tools == {"git status": 2, "cargo test": 1, "ls": 1}
    expected = (
        2 * estimated_tokens_saved("git status")
        + estimated_tokens_saved("cargo test")
        + estimated_tokens_saved("ls")
    )
    assert summary["tokens_saved_estimate"] == expected > 0
    assert "estimate" in summary["tokens_saved_note"]
    assert summary["latency_us"]["total"] == {"n": 5, "p50": 3000, "p90": 5000, "p99": 5000}


def test_stats_table(tmp_path, capsys):
    path = fill(tmp_path)
    code, out, _err = run_cli(capsys, "stats", "--file", path)
    assert code == 0
    assert "records:   5" in out and "git-read" in out and "cargo test" in out
    assert "estimate" in out and "p99" in out


def test_stats_percentiles_and_eval_latency():
    records = [{"verdict": "allow", "total_us": n, "eval_us": n // 10} for n in range(1, 101)]
    summary = compute(records)
    assert summary["latency_us"]["total"] == {"n": 100, "p50": 50, "p90": 90, "p99": 99}
    assert summary["latency_us"]["eval"]["n"] == 91  # zero means "not measured" and is left out


@pytest.mark.parametrize(
    ("before", "after", "tools"),
    [
        ("git status", "rtk git status", ["git status"]),
        ("cat f | grep x", "rtk read f | rtk grep x", ["read", "grep"]),
        ("rtk git log && git diff", "rtk git log && rtk git diff", ["git diff"]),
        ("pytest -q", "rtk pytest -q", ["pytest"]),
    ],
)
def test_rewritten_tools(before, after, tools):
    assert rewritten_tools(before, after) == tools


def test_savings_table_lookups():
    assert estimated_tokens_saved("cargo test") > estimated_tokens_saved("git status") > 0
    assert estimated_tokens_saved("git stash") == estimated_tokens_saved(
        "git"
    )  # falls back to the tool
    assert estimated_tokens_saved("unknown-tool") > 0
    assert percentile([], 0.5) == 0 and percentile([7], 0.99) == 7


class _Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def test_stats_at_a_terminal_are_rich_tables_in_colour_and_plain_with_no_color(
    tmp_path, monkeypatch
):
    """At a TTY the stats are tables (box lines, colour codes, the same figures); with NO_COLOR
    or a pipe they are the plain text scripts read."""
    path = fill(tmp_path)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    terminal = _Terminal()
    assert audit_command.stats(path, False, terminal) == 0
    shown = terminal.getvalue()
    assert "\x1b[" in shown and ("━" in shown or "─" in shown)
    assert "git-read" in shown and "cargo test" in shown and "p99" in shown
    assert "records:   5" not in shown  # not the plain text
    monkeypatch.setenv("NO_COLOR", "1")
    plain = _Terminal()
    audit_command.stats(path, False, plain)
    assert plain.getvalue() == audit_command.render_stats(
        {**compute(audit.iter_all_records(path)), "file": path}
    )
    assert "\x1b[" not in plain.getvalue()
