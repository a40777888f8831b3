"""Policy test files: parsing with positions, running cases, coverage, and the text/json/junit reports."""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import attrs
import pytest
from fakes import FakeLine, FakeSegment
from fakes import make_rule as fake_rule

from rtk_policy.decision import decide
from rtk_policy.engine.pipeline import Outcome
from rtk_policy.policy.model import Context, Evaluation, Example, Rule, RuleResult, SegmentResult
from rtk_policy.policytest.files import UNSET, TestFileError, is_test_file, load_test_file
from rtk_policy.policytest.report import coverage_lines, render_json, render_junit, render_text
from rtk_policy.policytest.run import (
    coverage,
    example_results,
    run_case,
    run_test_files,
    summary,
)

ROOT = Path(__file__).resolve().parents[1]


def make_rule(rule_id: str, decision: str = "deny", policy: str = "pack", kind: str = "permission",
              examples: tuple[Example, ...] = ()) -> Rule:
    return fake_rule(rule_id, decision, policy=policy, line=3, kind=kind, examples=examples)


@attrs.define
class FakePolicies:
    rules: tuple[Rule, ...]


class FakeEngine:
    """Decides by words: a command containing a rule id makes that rule match, `rw:` rewrites."""

    def __init__(self, *rules: Rule) -> None:
        self.policies = FakePolicies(rules)
        self.contexts: list[Context] = []

    def context(self, **fields: object) -> Context:
        return Context(**fields)  # type: ignore[arg-type]

    def evaluate(self, text: str, context: Context) -> Outcome:
        self.contexts.append(context)
        if "boom" in text:
            raise RuntimeError("engine exploded")
        words = text.split()
        hits = tuple(RuleResult(r, True, message=f"{r.id} says no") for r in self.policies.rules
                     if r.id in words and r.kind == "permission")
        rewrite_rules = [r for r in self.policies.rules if r.id in words and r.kind == "rewrite"]
        rewrite = RuleResult(rewrite_rules[0], True, rewrite="rtk " + text) if rewrite_rules else None
        result = SegmentResult(0, (), hits, rewrite, False)
        evaluation = Evaluation((result,), "digest", "fake", 0)
        line = FakeLine(text, (FakeSegment(),))
        return Outcome(line, evaluation, decide(line, evaluation, rewrite and rewrite.rewrite))


def write(tmp_path: Path, text: str, name: str = "pack_test.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


GOOD = """\
policy: pack
cases:
  - name: denied
    command: run no-rm now
    expect: {verdict: deny, message: "says no", rules: [no-rm]}

  - command: git status rw
    context: {agent: claude, cwd: /repo, env: {HOME: /home/u}}
    claude: {allow: ["git *"], deny: "rm:*"}
    config: {exclude_commands: [curl]}
    expect:
      rewrite: rtk git status rw
"""


def test_cases_keep_their_line_and_fields(tmp_path: Path) -> None:
    test_file = load_test_file(write(tmp_path, GOOD))
    first, second = test_file.cases
    assert test_file.policy == "pack" and not test_file.problems
    assert (first.name, first.line, first.policy) == ("denied", 3, "pack")
    assert first.expect.verdict == "deny" and first.expect.rules == ("no-rm",)
    assert second.line == 7 and second.name == "case 2"
    assert second.expect.verdict == UNSET and second.expect.rewrite == "rtk git status rw"
    assert dict(second.claude) == {"allow": ("git *",), "deny": ("rm:*",)}
    assert dict(second.context)["env"] == (("HOME", "/home/u"),)
    assert second.location.endswith("pack_test.yaml:7")


def test_rewrite_null_differs_from_unset(tmp_path: Path) -> None:
    path = write(tmp_path, "cases:\n  - {command: ls, expect: {rewrite: null}}\n")
    (case,) = load_test_file(path).cases
    assert case.expect.rewrite is None and case.expect.message == UNSET


@pytest.mark.parametrize(
    ("case_text", "line", "fragment"),
    [
        ("  - {command: ls, expect: {verdict: maybe}}", 3, "expect.verdict"),
        ("  - {command: ls}", 3, "expect:"),
        ("  - {expect: {verdict: deny}}", 3, "command"),
        ("  - command: ls\n    colour: red\n    expect: {verdict: deny}", 4, "colour"),
        ("  - {command: ls, context: {shell: zsh}, expect: {verdict: deny}}", 3, "shell"),
        ("  - {command: ls, claude: {never: [x]}, expect: {verdict: deny}}", 3, "never"),
        ("  - {command: ls, expect: {verdict: deny, rule: x}}", 3, "rule"),
    ],
)
def test_a_bad_case_is_a_problem_at_its_line(tmp_path: Path, case_text: str, line: int,
                                             fragment: str) -> None:
    text = "cases:\n  - {command: ok, expect: {verdict: none}}\n" + case_text + "\n"
    test_file = load_test_file(write(tmp_path, text))
    assert len(test_file.cases) == 1  # the good case still runs
    (problem,) = test_file.problems
    assert problem.location.endswith(f"pack_test.yaml:{line}")
    assert fragment in problem.message


@pytest.mark.parametrize(
    ("text", "line"),
    [("cases: [\n  {command: 'x'\n", 3), ("- 1\n- 2\n", 1), ("policy: x\n", 1), ("cases: 3\n", 1),
     ("cases: []\nextra: 1\n", 2)],
)
def test_an_unreadable_file_raises_with_a_location(tmp_path: Path, text: str, line: int) -> None:
    with pytest.raises(TestFileError) as caught:
        load_test_file(write(tmp_path, text))
    assert caught.value.location.endswith(f":{line}")


def test_test_file_names() -> None:
    assert is_test_file("policies/a_test.yaml") and is_test_file("b_test.yml")
    assert not is_test_file("policies/a.yaml") and not is_test_file("test.yaml")


ENGINE = FakeEngine(make_rule("no-rm"), make_rule("ok-git", "allow"), make_rule("rw", kind="rewrite"),
                    make_rule("other", "deny", policy="elsewhere"), make_rule("unused", "ask"))


def run_text(tmp_path: Path, text: str) -> list:
    return run_test_files(ENGINE, [load_test_file(write(tmp_path, text))])


def test_passing_and_failing_cases(tmp_path: Path) -> None:
    results = run_text(tmp_path, GOOD + """\
  - name: wrong verdict
    command: run ok-git
    expect: {verdict: deny, message: nothing-like-this, rules: [no-rm]}
""")
    assert [r.status for r in results] == ["pass", "pass", "fail"]
    failure = results[2]
    assert failure.location.endswith("pack_test.yaml:13")
    assert "expected verdict 'deny', got 'allow'" in failure.detail
    assert "nothing-like-this" in failure.detail and "no-rm" in failure.detail
    assert failure.matched_rules == ("ok-git",)


def test_case_context_reaches_the_engine(tmp_path: Path) -> None:
    run_text(tmp_path, GOOD)
    context = ENGINE.contexts[-1]
    assert (context.agent, context.cwd) == ("claude", "/repo")
    assert context.claude_allow == ("git *",) and context.exclude_commands == ("curl",)


def test_policy_scopes_the_verdict_to_its_pack(tmp_path: Path) -> None:
    text = "policy: pack\ncases:\n  - {command: other ok-git, expect: {verdict: allow}}\n"
    assert [r.status for r in run_text(tmp_path, text)] == ["pass"]
    unscoped = text.replace("policy: pack\n", "")
    (result,) = run_text(tmp_path, unscoped)
    assert result.status == "fail" and "got 'deny'" in result.detail


def test_skip_error_and_unloaded_policy(tmp_path: Path) -> None:
    results = run_text(tmp_path, """\
cases:
  - {command: ls, skip: "not yet", expect: {verdict: none}}
  - {command: boom, expect: {verdict: none}}
  - {command: ls, expect: {verdict: maybe}}
""")
    assert sorted(r.status for r in results) == ["error", "error", "skip"]
    assert any("engine exploded" in r.detail for r in results)
    missing = run_text(tmp_path, "policy: nowhere\ncases:\n  - {command: ls, expect: {verdict: none}}\n")
    assert missing[0].status == "skip" and "nowhere" in missing[0].detail


def test_examples_and_coverage() -> None:
    example = Example("rm no-rm", "deny", "pack.yaml", 9)
    bad = Example("ls", "deny", "pack.yaml", 10)
    engine = FakeEngine(make_rule("no-rm", examples=(example, bad)), make_rule("unused", "ask"))
    results = example_results(engine)
    assert [(r.status, r.line) for r in results] == [("pass", 9), ("fail", 10)]
    cover = coverage(engine, results)
    assert cover.exercised == ("no-rm",)
    assert [rule.id for rule in cover.unexercised] == ["unused"]
    assert "not exercised: unused (pack.yaml:3)" in "\n".join(coverage_lines(cover))
    assert summary(results) == {"total": 2, "passed": 1, "failed": 1, "errors": 0, "skipped": 0}


def test_reports(tmp_path: Path) -> None:
    results = run_text(tmp_path, GOOD + "  - {command: run ok-git, expect: {verdict: deny}}\n"
                       "  - {command: ls, skip: later, expect: {verdict: none}}\n")
    cover = coverage(ENGINE, results)
    text = render_text(results, cover, 1)
    assert "PASS  " in text and "FAIL  " in text and "SKIP  " in text
    assert "pack_test.yaml:13 case 3: 'run ok-git'" in text
    assert "2 passed, 1 failed, 0 errors, 1 skipped (4 cases in 1 test file(s), 0 examples)" in text
    assert "not exercised: unused" in text
    data = json.loads(render_json(results, cover))
    assert data["summary"]["failed"] == 1
    assert {"id": "unused", "file": "pack.yaml", "line": 3} in data["coverage"]["not_exercised"]
    root = ET.fromstring(render_junit(results))
    assert root.tag == "testsuites" and root.get("failures") == "1" and root.get("tests") == "4"
    (suite,) = root.findall("testsuite")
    cases = suite.findall("testcase")
    assert len(cases) == 4 and suite.get("skipped") == "1"
    (failure,) = suite.iter("failure")
    assert "pack_test.yaml:13" in failure.get("message", "")
    assert len(list(suite.iter("skipped"))) == 1


def test_a_case_that_raises_is_an_error_not_a_crash() -> None:
    case = load_test_file(ROOT / "policies" / "claude-permissions_test.yaml").cases[0]
    result = run_case(ENGINE, attrs.evolve(case, command="boom", policy=""), frozenset())
    assert result.status == "error" and "RuntimeError" in result.detail


TINY = """\
name: tiny
kind: permission
rules:
  - id: no-curl
    decision: deny
    programs: [curl]
    match: 'true'
    message: '"no curl here"'
    examples:
      - {command: "curl https://x", expect: deny}
  - id: untested
    decision: ask
    programs: [wget]
    match: 'true'
    message: '"wget?"'
"""
TINY_TESTS = """\
policy: tiny
cases:
  - {name: curl is denied, command: "git status && curl x", expect: {verdict: deny, message: "no curl"}}
  - {name: broken expectation, command: "curl y", expect: {verdict: allow}}
"""


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    from rtk_policy.main import main

    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_junit_names_the_broken_case_and_coverage_lists_the_untested_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "tiny.yaml").write_text(TINY)
    (tmp_path / "tiny_test.yaml").write_text(TINY_TESTS)
    code, out, err = run_cli(["test", str(tmp_path), "--format", "junit", "--coverage"], capsys)
    assert code == 1
    root = ET.fromstring(out)
    assert root.get("tests") == "3" and root.get("failures") == "1"
    (failure,) = root.iter("failure")
    assert f"{tmp_path / 'tiny_test.yaml'}:4" in failure.get("message", "")
    assert "not exercised: untested" in err and "no-curl" not in err.split("coverage:")[1]


def test_cli_text_passes_when_every_case_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "tiny.yaml").write_text(TINY)
    (tmp_path / "tiny_test.yaml").write_text(TINY_TESTS.replace("verdict: allow", "verdict: deny"))
    code, out, _ = run_cli(["test", str(tmp_path)], capsys)
    assert code == 0, out
    assert "3 passed, 0 failed, 0 errors, 0 skipped (2 cases in 1 test file(s), 1 examples)" in out
    code, out, _ = run_cli(["test", str(tmp_path), "--format", "json", "--coverage"], capsys)
    assert code == 0 and json.loads(out)["coverage"]["not_exercised"][0]["id"] == "untested"


def test_cli_reports_an_unreadable_test_file_and_a_bad_policy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "tiny.yaml").write_text(TINY)
    (tmp_path / "tiny_test.yaml").write_text("cases: [\n")
    code, out, _ = run_cli(["test", str(tmp_path)], capsys)
    assert code == 1 and f"ERROR {tmp_path / 'tiny_test.yaml'}:" in out
    (tmp_path / "tiny.yaml").write_text(TINY.replace("'true'", "segment.nope"))
    code, _, err = run_cli(["test", str(tmp_path)], capsys)
    assert code == 1 and "tiny.yaml" in err


@pytest.fixture(scope="module")
def shipped_engine() -> object:
    from rtk_policy.commands.test import _load, collect

    policy_files, _ = collect([str(ROOT / "policies")])
    engine = _load(policy_files, None, io.StringIO())
    assert engine is not None
    return engine


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "policies").glob("*_test.yaml")))
def test_shipped_pack_tests_pass(name: str, shipped_engine: object) -> None:
    results = run_test_files(shipped_engine, [load_test_file(ROOT / "policies" / name)])
    failures = [f"{r.location} {r.name}: {r.detail}" for r in results if r.status != "pass"]
    assert results and not failures


def test_examples_decide_the_same_wherever_check_runs() -> None:
    """Examples run in a fixed project folder: run from inside the virtualenv (a folder the
    guard-self pack guards, as CI's wheel check does), `check` still passes every example, and a
    relative path like `build/out.txt` is not taken for a write into the install."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "rtk_policy", "check"],
        cwd=sys.prefix, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert " 0 failed, 0 errors" in done.stdout + done.stderr
