"""`rtk-policy replay`: reading transcripts and audit logs, tallying changes, and the command itself."""

from __future__ import annotations

import io
import json
from pathlib import Path

import attrs
import pytest

from rtk_policy.main import main
from rtk_policy.policy.model import Evaluation, Rule, RuleResult, SegmentResult
from rtk_policy.replay.shadow import Evaluator, Tally, rewrite_change
from rtk_policy.replay import run as replay_run
from rtk_policy.replay.run import EngineSpec, Progress, chunks, replay
from rtk_policy.replay.sources import AUDITED, BLOCKED, RAN, UNKNOWN, input_files, read_file

ROOT = Path(__file__).resolve().parents[1]
REJECTED = "The user doesn't want to proceed with this tool use. The tool use was rejected."


def transcript(path: Path, calls: list[tuple[str, str]], cwd: str = "/repo") -> Path:
    """A Claude Code transcript: one Bash call per (command, outcome), outcome ran|blocked|error|none."""
    lines = [{"type": "summary", "summary": "a session"}, "garbage {", {"type": "file-history-snapshot"}]
    for number, (command, outcome) in enumerate(calls):
        use_id = f"toolu_{number}"
        lines.append({"type": "assistant", "cwd": cwd, "sessionId": "s1", "message": {
            "role": "assistant", "content": [
                {"type": "text", "text": "running it"},
                {"type": "tool_use", "id": use_id, "name": "Bash",
                 "input": {"command": command, "description": "d"}}]}})
        lines.append({"type": "assistant", "message": {"content": [
            {"type": "tool_use", "id": f"read_{number}", "name": "Read", "input": {"file_path": "/x"}}]}})
        if outcome == "none":
            continue
        result: dict[str, object] = {"type": "tool_result", "tool_use_id": use_id, "content": "output"}
        if outcome == "blocked":
            result.update(is_error=True, content=[{"type": "text", "text": REJECTED}])
        elif outcome == "error":
            result.update(is_error=True, content="Exit code 1\nfatal: not a git repository")
        lines.append({"type": "user", "message": {"role": "user", "content": [result]}})
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n")
    return path


def audit_log(path: Path, records: list[tuple[str, str, str | None]]) -> Path:
    lines = [json.dumps({"time": "t", "decision_id": str(i), "command": command, "cwd": "/repo",
                         "verdict": verdict, "rewrite": {"before": command, "after": after}})
             for i, (command, verdict, after) in enumerate(records)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_transcript_calls_and_what_happened(tmp_path: Path) -> None:
    path = transcript(tmp_path / "s.jsonl", [("git status", "ran"), ("rm -rf /", "blocked"),
                                             ("git log", "error"), ("make", "none")])
    read = [0]
    items = list(read_file(str(path), read))
    assert [(i.command, i.happened) for i in items] == [
        ("git status", RAN), ("rm -rf /", BLOCKED), ("git log", RAN), ("make", UNKNOWN)]
    assert items[0].location == f"{path}:4" and items[0].cwd == "/repo"
    assert read[0] == path.stat().st_size


def test_audit_log_records_carry_their_baseline(tmp_path: Path) -> None:
    path = audit_log(tmp_path / "audit.jsonl", [("git status", "none", "rtk git status"),
                                                ("rm -rf /", "deny", None)])
    with path.open("a") as handle:
        handle.write("{broken\n" + json.dumps({"decision_id": "x", "verdict": "none"}) + "\n")
    items = list(read_file(str(path)))
    assert [(i.command, i.happened, i.verdict, i.rewrite) for i in items] == [
        ("git status", AUDITED, "none", "rtk git status"), ("rm -rf /", AUDITED, "deny", None)]


def test_input_files_recurse_and_reject_missing(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    transcript(tmp_path / "a" / "b" / "s.jsonl", [("ls", "ran")])
    (tmp_path / "notes.txt").write_text("x")
    assert input_files([str(tmp_path)]) == [str(tmp_path / "a" / "b" / "s.jsonl")]
    with pytest.raises(FileNotFoundError):
        input_files([str(tmp_path / "missing")])


@pytest.mark.parametrize(("before", "after", "change"), [
    (None, None, ""), (None, "rtk ls", "gained"), ("rtk ls", None, "lost"),
    ("rtk ls", "rtk ls -a", "changed"), ("rtk ls", "rtk ls", "kept")])
def test_rewrite_change(before: str | None, after: str | None, change: str) -> None:
    assert rewrite_change(before, after) == change


@attrs.frozen
class FakeDecision:
    verdict: str
    rewritten: str | None


@attrs.frozen
class FakeOutcome:
    decision: FakeDecision
    evaluation: Evaluation


class FakeEngine:
    """`deny-word` in a command denies it; `rw` rewrites it; `bad` raises. Counts evaluations."""

    def __init__(self, deny_word: str, rewrites: bool) -> None:
        self.deny_word, self.rewrites, self.calls = deny_word, rewrites, 0
        self.rule = Rule(id=f"no-{deny_word}", policy="p", file="p.yaml", line=1, kind="permission",
                         decision="deny", mode="enforce", programs=(), pipeline="never")

    def context(self, **fields: object) -> dict[str, object]:
        return fields

    def evaluate(self, text: str, context: object) -> FakeOutcome:
        self.calls += 1
        if "bad" in text:
            raise ValueError("cannot parse")
        denied = self.deny_word in text.split()
        hits = (RuleResult(self.rule, True),) if denied else ()
        evaluation = Evaluation((SegmentResult(0, (), hits, None, False),), "d", "fake", 0)
        rewritten = "rtk " + text if self.rewrites and "rw" in text else None
        return FakeOutcome(FakeDecision("deny" if denied else "none", rewritten), evaluation)


def test_tally_counts_changes_rewrites_rules_and_errors(tmp_path: Path) -> None:
    path = transcript(tmp_path / "s.jsonl", [
        ("rm x", "ran"), ("rm y", "ran"), ("rm z", "blocked"), ("ls rw", "ran"), ("ls rw", "ran"),
        ("bad one", "ran"), ("git status", "ran")])
    candidate, baseline = FakeEngine("rm", rewrites=False), FakeEngine("nothing", rewrites=True)
    tally = Evaluator(candidate, baseline, claude_rules=False).tally(read_file(str(path)), Tally(limit=2))
    assert tally.commands == 7 and tally.errors == 1
    assert tally.changes == {("none", "deny"): 3}
    assert len(tally.examples["none->deny"]) == 2  # the limit
    assert tally.examples["none->deny"][0]["after"]["rules"] == ["no-rm"]
    assert tally.rewrites == {"lost": 2}
    assert tally.happened[(BLOCKED, "deny")] == 1 and tally.happened[(RAN, "deny")] == 2
    assert tally.rule_hits == {"no-rm": 3}
    assert "cannot parse" in tally.examples["errors"][0]["error"]
    assert candidate.calls == 6  # the repeated `ls rw` was remembered, not evaluated twice


def test_audit_baseline_is_the_recorded_decision(tmp_path: Path) -> None:
    path = audit_log(tmp_path / "a.jsonl", [("ls rw", "none", "rtk ls"), ("rm x", "none", None)])
    baseline = FakeEngine("ls", rewrites=False)
    tally = Evaluator(FakeEngine("rm", True), baseline, False).tally(read_file(str(path)), Tally())
    assert baseline.calls == 0
    assert tally.changes == {("none", "deny"): 1} and tally.rewrites == {"changed": 1}


def test_merging_tallies_adds_counts_and_keeps_the_example_limit() -> None:
    first, second = Tally(limit=1), Tally(limit=1)
    for tally in (first, second):
        tally.commands += 2
        tally.changes[("none", "deny")] += 2
        tally.example("none->deny", {"command": "rm"})
    first.merge(second)
    assert first.commands == 4 and first.changes == {("none", "deny"): 4}
    assert len(first.examples["none->deny"]) == 1


def test_progress_bar_only_on_a_terminal() -> None:
    quiet = io.StringIO()
    Progress(quiet, 100).update(50, 10, force=True)
    assert quiet.getvalue() == ""
    loud = io.StringIO()
    bar = Progress(loud, 100, enabled=True)
    bar.update(50, 10, force=True)
    bar.close()
    assert "50%" in loud.getvalue() and "10 commands" in loud.getvalue()


def test_progress_shows_rate_and_time_left() -> None:
    bar = Progress(io.StringIO(), 1000, enabled=True)
    text = bar.render(250, 500, 10.0)
    assert "25%" in text and "500 commands 50/s" in text and "0:30 left" in text
    assert "--:-- left" in bar.render(0, 0, 1.0) and "0:00 left" in bar.render(1000, 9, 2.0)


class _Recorder(Progress):
    def __init__(self, total: int) -> None:
        super().__init__(io.StringIO(), total, enabled=True)
        self.seen: list[int] = []

    def update(self, done_bytes: int, commands: int, force: bool = False) -> None:
        self.seen.append(done_bytes)


def test_parallel_progress_follows_the_decided_bytes_of_a_single_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reading runs chunks ahead of the workers: the bar must show what was decided, not read."""
    monkeypatch.setattr(replay_run, "CHUNK", 20)
    path = transcript(tmp_path / "one.jsonl", [(f"git log -{n}", "ran") for n in range(400)])
    total = path.stat().st_size
    bar = _Recorder(total)
    spec = EngineSpec(policies=(str(ROOT / "policies"),), baseline=None, compare=False,
                      claude_rules=False)
    tally = replay([str(path)], spec, 2, 3, bar)
    assert tally.commands == 400
    assert bar.seen == sorted(bar.seen) and len(bar.seen) >= 10
    assert bar.seen[0] < total * 0.1  # one chunk of 20 decided, not the 4 chunks read ahead
    assert bar.seen[-1] == total


def test_chunks_are_lazy_and_bounded() -> None:
    assert [len(c) for c in chunks(iter(range(5)), 2)] == [2, 2, 1]  # type: ignore[arg-type]


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_replay_command_reports_a_candidate_deny(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    policy = tmp_path / "strict.yaml"
    policy.write_text(
        "name: strict\nkind: permission\nrules:\n  - id: no-curl\n    decision: deny\n"
        "    programs: [curl]\n    match: 'true'\n    message: '\"no curl\"'\n")
    calls = [("curl https://x | sh", "ran"), ("git status", "ran"), ("curl -O y", "blocked")]
    path = transcript(tmp_path / "s.jsonl", calls)
    argv = ["replay", str(path), "--policies", str(policy), "--baseline", str(policy), "--json",
            "--no-claude-rules", "--no-shipped"]
    code, out, _ = run_cli(argv, capsys)
    data = json.loads(out)
    assert code == 0 and data["commands"] == 3 and data["verdict_changes"] == []
    code, out, _ = run_cli([*argv[:4], "--json", "--no-claude-rules", "--no-shipped"], capsys)
    data = json.loads(out)
    assert data["verdicts"]["candidate"]["deny"] == 2
    assert data["happened"]["ran"]["deny"] == 1 and data["happened"]["blocked"]["deny"] == 1
    assert data["rules"]["hits"] == {"no-curl": 2} and data["rules"]["never_hit"] == []
    code, text, _ = run_cli(
        ["replay", str(path), "--policies", str(policy), "--no-claude-rules", "--no-shipped"], capsys
    )
    assert "replayed 3 commands" in text and "top rules: no-curl 2" in text


def test_replay_candidate_policies_add_to_the_shipped_packs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = tmp_path / "team.yaml"
    policy.write_text(
        "name: team\nkind: permission\nrules:\n  - id: no-curl\n    decision: deny\n"
        "    programs: [curl]\n    match: 'true'\n    message: '\"no curl\"'\n")
    path = transcript(tmp_path / "s.jsonl", [("rm -rf /", "ran"), ("curl -O y", "ran")])
    argv = ["replay", str(path), "--policies", str(policy), "--json", "--no-claude-rules"]
    code, out, _ = run_cli(argv, capsys)
    data = json.loads(out)
    assert code == 0 and data["verdicts"]["candidate"]["deny"] == 2  # rm -rf / by the baseline
    assert "rm-recursive-root" in data["rules"]["hits"] and data["rules"]["hits"]["no-curl"] == 1
    code, out, _ = run_cli([*argv, "--no-shipped"], capsys)
    data = json.loads(out)
    assert data["verdicts"]["candidate"]["deny"] == 1 and list(data["rules"]["hits"]) == ["no-curl"]


def test_replay_of_an_audit_log_against_the_shipped_packs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = audit_log(tmp_path / "audit.jsonl", [("git status", "none", None), ("ls -la", "none", None)])
    code, out, _ = run_cli(["replay", str(path), "--policies", str(ROOT / "policies"), "--json"], capsys)
    data = json.loads(out)
    assert code == 0 and data["commands"] == 2 and data["errors"]["count"] == 0
    assert data["rewrites"]["gained"]["count"] == 2  # the rewrite pack rewrites both


def test_parallel_replay_matches_serial(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    calls = [(f"git log -{n}", "ran") for n in range(30)] + [("rm -rf /", "ran")] * 5
    path = transcript(tmp_path / "s.jsonl", calls)
    results = []
    for jobs in ("1", "2"):
        code, out, _ = run_cli(["replay", str(path), "--policies", str(ROOT / "policies"), "--json",
                                "--jobs", jobs, "--no-claude-rules"], capsys)
        data = json.loads(out)
        results.append((data["commands"], data["verdicts"], data["rewrites"]["gained"]["count"]))
    assert results[0] == results[1] and results[0][0] == 35


def test_missing_input_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(["replay", str(tmp_path / "nope.jsonl")], capsys)
    assert code == 1 and "no such file" in err


class _Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def test_progress_bar_is_drawn_by_rich_on_a_terminal_in_colour_unless_no_color(monkeypatch):
    """On a terminal the bar is rich's (its bar characters), coloured unless NO_COLOR; the
    figures are `render`'s."""
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    for no_color in (False, True):
        if no_color:
            monkeypatch.setenv("NO_COLOR", "1")
        stream = _Terminal()
        bar = Progress(stream, 1000)
        assert bar.enabled
        bar.update(250, 500, force=True)
        bar.close()
        shown = stream.getvalue()
        assert "25% 500 commands" in shown and "━" in shown
        assert ("\x1b[38;" in shown or "\x1b[3" in shown) is not no_color


def test_a_replay_without_a_terminal_never_imports_rich(tmp_path: Path) -> None:
    """A piped replay draws nothing, and rich stays unloaded (a fresh interpreter)."""
    import subprocess
    import sys

    path = transcript(tmp_path / "one.jsonl", [("git status", "ran")])
    code = (
        "import sys\nfrom rtk_policy.main import main\n"
        f"main(['replay', {str(path)!r}])\nprint('rich' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)  # fmt: skip
    assert done.stdout.strip().splitlines()[-1] == "False", done.stderr
