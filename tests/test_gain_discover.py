"""`rtk-policy gain` (tokens saved by rewrites, from the audit log) and `rtk-policy discover`
(commands that got no rewrite, from transcripts and the audit log), through the real CLI."""

from __future__ import annotations

import io
import json
from pathlib import Path

from rtk_policy.audit.gain import bar_chart, gain
from rtk_policy.audit.stats import estimated_tokens_saved
from rtk_policy.main import main


def record(time: str, cwd: str, before: str, after: str | None) -> dict:
    """An audit record as `audit.event` writes it (only the fields gain and discover read)."""
    return {"time": time, "cwd": cwd, "command": before, "verdict": "allow",
            "rewrite": {"before": before, "after": after}}  # fmt: skip


RECORDS = [
    record("2026-11-28T10:00:00Z", "/work/app", "git status", "rtk git status"),
    record("2026-11-28T10:01:00Z", "/work/app", "cargo test && git log",
           "rtk cargo test && rtk git log"),  # fmt: skip
    record("2026-11-29T09:00:00Z", "/work/lib", "git status", "rtk git status"),
    record("2026-11-29T09:05:00Z", "/work/lib", "git push", None),  # not rewritten
]


def write_log(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_gain_counts_each_added_rtk_call_by_day_tool_and_project():
    summary = gain(RECORDS)
    keys = ("git status", "cargo test", "git log")
    status, test, log = (estimated_tokens_saved(key) for key in keys)
    assert summary["rewrites"] == 4
    assert summary["tokens_saved_estimate"] == 2 * status + test + log
    assert summary["by_day"] == [
        {"day": "2026-11-28", "rewrites": 3, "tokens": status + test + log},
        {"day": "2026-11-29", "rewrites": 1, "tokens": status},
    ]
    assert summary["by_tool"][0] == {"tool": "cargo test", "rewrites": 1, "tokens": test}
    assert {"tool": "git status", "rewrites": 2, "tokens": 2 * status} in summary["by_tool"]
    projects = {row["project"]: row["rewrites"] for row in summary["by_project"]}
    assert projects == {"/work/app": 3, "/work/lib": 1}


def test_an_already_rtk_command_saves_nothing_more():
    assert gain([record("2026-11-28", "/w", "rtk git status", "rtk git status")])["rewrites"] == 0


def test_bar_chart_scales_to_the_largest_row():
    rows = [{"d": "a", "tokens": 100}, {"d": "bb", "tokens": 50}, {"d": "c", "tokens": 0}]
    bars = bar_chart(rows, "d", width=10)
    assert bars == ["a   ██████████ 100", "bb  █████ 50", "c    0"]


def test_gain_cli_json_and_text(tmp_path):
    log = write_log(tmp_path / "audit.jsonl", RECORDS)
    out = io.StringIO()
    import sys

    saved, sys.stdout = sys.stdout, out
    try:
        assert main(["gain", "--json", "--log", str(log)]) == 0
        data = json.loads(out.getvalue())
        out.seek(0)
        out.truncate()
        assert main(["gain", "--log", str(log)]) == 0
    finally:
        sys.stdout = saved
    assert data["rewrites"] == 4 and data["log"] == str(log)
    text = out.getvalue()
    assert "4 rewrites" in text and "tokens saved by day:" in text and "█" in text
    assert "2026-11-29" in text and "/work/lib" in text


def transcript(path: Path, commands: list[str], cwd: str = "/work/app") -> Path:
    """A Claude Code transcript: one Bash tool call and its result per command."""
    lines = []
    for n, command in enumerate(commands):
        call = {"type": "tool_use", "id": f"t{n}", "name": "Bash", "input": {"command": command}}
        lines.append({"type": "assistant", "cwd": cwd, "message": {"content": [call]}})
        result = {"type": "tool_result", "tool_use_id": f"t{n}", "content": "ok"}
        lines.append({"type": "user", "cwd": cwd, "message": {"content": [result]}})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def discover_json(*inputs: Path) -> dict:
    import sys

    out = io.StringIO()
    saved, sys.stdout = sys.stdout, out
    try:
        assert main(["discover", "--json", *map(str, inputs)]) == 0
    finally:
        sys.stdout = saved
    return json.loads(out.getvalue())


def test_discover_ranks_unrewritten_commands_with_the_rule_that_would_cover_them(tmp_path):
    commands = ["cargo test", "cargo test --all", "htop", "git status", "rtk git log", "make"]
    found = discover_json(transcript(tmp_path / "session.jsonl", commands))
    rows = {row["command"]: row for row in found["top"]}
    assert rows["cargo test"]["count"] == 2 and rows["cargo test"]["rule"] != "none"
    assert rows["htop"]["rule"] == "none" and rows["htop"]["est_tokens_saved"] == 0
    assert rows["make"]["rule"] != "none"
    assert "rtk" not in rows  # already run through rtk
    tokens = [row["est_tokens"] for row in found["top"]]
    assert tokens == sorted(tokens, reverse=True)
    assert found["top"][0]["command"] == "cargo test"


def test_discover_skips_what_the_audit_log_shows_was_rewritten(tmp_path):
    log = write_log(tmp_path / "audit.jsonl", RECORDS)
    session = transcript(tmp_path / "session.jsonl", ["git status", "git push"])
    rows = {row["command"]: row for row in discover_json(session, log)["top"]}
    assert "git status" not in rows  # rewritten (audit log), also in the transcript
    assert rows["git push"]["count"] == 2  # the audit record and the transcript call
