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


class _Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def _shown(command, monkeypatch, no_color: bool, **fields) -> str:
    """What `command.run(**fields)` prints to a terminal (NO_COLOR set when `no_color`)."""
    import sys

    monkeypatch.setenv("TERM", "xterm-256color")
    if no_color:
        monkeypatch.setenv("NO_COLOR", "1")
    else:
        monkeypatch.delenv("NO_COLOR", raising=False)
    stream = _Terminal()
    assert command.run(stdout=stream, stderr=sys.stderr, **fields) == 0
    return stream.getvalue()


def test_gain_at_a_terminal_is_rich_charts_with_the_plain_texts_figures(tmp_path, monkeypatch):
    """At a TTY: tables (box lines, colour) holding every row and figure the plain text has;
    with NO_COLOR: exactly the plain text (`render`), no escape code."""
    from rtk_policy.commands import gain as gain_command

    log = str(write_log(tmp_path / "audit.jsonl", RECORDS))
    rich_text = _shown(gain_command, monkeypatch, False, log=log)
    assert "\x1b[" in rich_text and "┃" in rich_text and "█" in rich_text
    assert "tokens saved by day:" not in rich_text  # not the plain text
    summary = gain(RECORDS)
    for title, key, rows in gain_command.sections(summary):
        assert f"tokens saved {title}" in rich_text
        for row in rows:
            assert str(row[key]) in rich_text and f"{row['tokens']:,}" in rich_text
    assert f"~{summary['tokens_saved_estimate']:,} tokens" in rich_text
    plain = _shown(gain_command, monkeypatch, True, log=log)
    assert plain == gain_command.render(summary, log) and "\x1b[" not in plain


def test_discover_at_a_terminal_is_a_rich_table_of_the_same_rows(tmp_path, monkeypatch):
    """Every ranked row (rank, command, calls, tokens, rule) is in the table; a command with
    rich's markup characters is shown as typed; NO_COLOR gives the plain table."""
    from rtk_policy.commands import discover as discover_command

    commands = ["cargo test", "[ -f x ] && htop", "git status", "[bold]x y"]
    session = transcript(tmp_path / "s.jsonl", commands)
    found = discover_json(session)
    rich_text = _shown(discover_command, monkeypatch, False, inputs=[str(session)])
    assert "\x1b[" in rich_text and "┃" in rich_text
    assert discover_command.headline(found, 1).split(";")[0] in rich_text
    table_rows = [line for line in rich_text.splitlines() if line.startswith("│")]
    assert len(table_rows) == len(found["top"]) >= 3
    for rank, (line, row) in enumerate(zip(table_rows, found["top"], strict=True), 1):
        cells = [cell.strip() for cell in line.strip("│").split("│")]
        cells[4] = cells[4].replace("\x1b[2m", "").replace("\x1b[0m", "")
        expected = [str(rank), row["command"], f"{row['count']:,}", f"{row['est_tokens']:,}"]
        assert cells == [*expected, row["rule"]]
    assert {"[", "[bold]x"} <= {row["command"] for row in found["top"]}  # not markup
    plain = _shown(discover_command, monkeypatch, True, inputs=[str(session)])
    assert plain == discover_command.render(found, 1) and "\x1b[" not in plain


def test_gain_discover_and_rewrite_without_a_terminal_never_import_rich(tmp_path):
    """Piped (or `--json`), the reporting commands print plain text and leave rich unloaded, as
    does `rewrite` (a hook path of RTK's own hook scripts; `hook` itself: test_cold_path)."""
    import subprocess
    import sys

    log = str(write_log(tmp_path / "audit.jsonl", RECORDS))
    session = str(transcript(tmp_path / "s.jsonl", ["cargo test"]))
    for argv in (["gain", "--log", log], ["gain", "--json", "--log", log],
                 ["discover", session], ["rewrite", "git status"]):  # fmt: skip
        code = (
            "import sys\nfrom rtk_policy.main import main\n"
            f"main({argv!r})\nprint('\\nRICH', 'rich' in sys.modules)"
        )
        env = {**__import__("os").environ, "XDG_STATE_HOME": str(tmp_path / "state")}
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              cwd=tmp_path, timeout=120, env=env)  # fmt: skip
        assert done.stdout.rsplit("RICH ", 1)[-1].strip() == "False", (argv, done.stderr)
