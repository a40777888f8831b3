"""The bypass corpus (tests/corpus/bypass.jsonl) through the real pipeline with the security baseline.

Each line is {"command", "expect", "why"}: `deny` must be denied, `ask` must be asked or denied,
`not-deny` (benign look-alikes) must not be denied, and `none` (look-alikes that were false positives)
must be neither asked nor denied. The corpus runs in-process through the engine, through
`rtk-policy rewrite --batch` (one subprocess) and through `hook claude` (in-process, real engine).
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from rtk_policy.commands import hook
from rtk_policy.config.load import Config
from rtk_policy.engine.pipeline import Engine
from rtk_policy.policy import load_policy_set

ROOT = Path(__file__).resolve().parents[1]
PACKS = [str(ROOT / "policies" / name) for name in ("security-baseline.yaml", "guard-self.yaml")]
CORPUS = ROOT / "tests" / "corpus" / "bypass.jsonl"
ACCEPTED = {
    "deny": {"deny"},
    "ask": {"ask", "deny"},
    "not-deny": {"allow", "ask", "none"},
    "none": {"allow", "none"},
}

#: Cases the shell stage cannot see through yet, with the reason. `xfail(strict=True)`: when the shell
#: stage learns the construct, the case passes and the entry must be removed.
KNOWN_GAPS: dict[str, str] = {}


def _corpus() -> list[dict]:
    return [
        json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


ROWS = _corpus()


@pytest.fixture(scope="module")
def engine() -> Engine:
    """The baseline alone, audit off, no user config."""
    return Engine(policies=load_policy_set(PACKS), config=Config(audit_enabled=False))


def test_corpus_is_well_formed_and_large():
    assert len(ROWS) >= 300
    assert all(set(row) == {"command", "expect", "why"} for row in ROWS)
    assert all(row["expect"] in ACCEPTED and row["why"] for row in ROWS)
    assert len({row["command"] for row in ROWS}) == len(ROWS)
    counts = {kind: sum(row["expect"] == kind for row in ROWS) for kind in ACCEPTED}
    assert min(counts[kind] for kind in ("deny", "ask", "not-deny")) >= 50, counts
    assert counts["none"] >= 20, counts


def _marks(row: dict) -> list:
    reason = KNOWN_GAPS.get(row["command"])
    return [pytest.mark.xfail(reason=reason, strict=True)] if reason else []


@pytest.mark.parametrize(
    "row",
    [pytest.param(row, id=f"{i}-{row['expect']}", marks=_marks(row)) for i, row in enumerate(ROWS)],
)
def test_corpus_case(engine, row, tmp_path):
    # in a neutral project: `find . -delete` in this checkout would delete the guard's own code
    outcome = engine.evaluate(row["command"], engine.context(cwd=str(tmp_path)))
    verdict = outcome.decision.verdict
    assert verdict in ACCEPTED[row["expect"]], (row["why"], outcome.decision.rule_ids)
    assert outcome.evaluation.errors == ()


def test_whole_shipped_set_keeps_every_deny(tmp_path):
    """With every shipped pack (rewrites included), no expected deny is lost and no benign case denied."""
    from rtk_policy.policy import policy_search_path

    shipped = [
        p for p in policy_search_path() if Path(p).resolve() == (ROOT / "policies").resolve()
    ]
    full = Engine(
        policies=load_policy_set(shipped or [str(ROOT / "policies")]),
        config=Config(audit_enabled=False),
    )
    assert any(rule.id == "rm-recursive-root" for rule in full.policies.rules)
    wrong = []
    for row in ROWS:
        if row["command"] in KNOWN_GAPS:
            continue
        decision = full.decide(row["command"], full.context(cwd=str(tmp_path)))
        if decision.verdict not in ACCEPTED[row["expect"]]:
            wrong.append((row["command"], row["expect"], decision.verdict))
        if row["expect"] == "deny" and decision.rewritten is not None:
            wrong.append((row["command"], "no rewrite of a denied command", decision.rewritten))
    assert wrong == []


def test_rewrite_batch_cli_agrees(tmp_path):
    """`rtk-policy rewrite --batch` with only the security packs: exit 2 for every expected deny."""
    lines = [json.dumps({"command": row["command"], "claude": {}}) for row in ROWS]
    source = tmp_path / "in.jsonl"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    project = tmp_path / "project"  # not the home: `rm -rf .cache` there holds a guarded cache
    project.mkdir()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
           "XDG_STATE_HOME": str(tmp_path / "state"), "XDG_CACHE_HOME": str(tmp_path / "cache")}  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "rtk_policy", "rewrite", "--batch", str(source),
         *(word for pack in PACKS for word in ("--policies", pack))],
        capture_output=True, text=True, env=env, cwd=project, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(answers) == len(ROWS)
    wrong = []
    for row, answer in zip(ROWS, answers, strict=True):
        if row["command"] in KNOWN_GAPS:
            continue
        verdict = answer.get("verdict")
        if verdict not in ACCEPTED[row["expect"]] or (verdict == "deny") != (
            answer.get("exit") == 2
        ):
            wrong.append((row["command"], row["expect"], answer))
    assert wrong == []


def test_hook_claude_answers_agree(engine):
    """`hook claude` (in-process, real engine): deny and ask reach Claude Code as permissionDecision."""
    args = SimpleNamespace(agent="claude", policies=None, backend=None, config=None)
    wrong = []
    for row in ROWS:
        if row["command"] in KNOWN_GAPS:
            continue
        payload = {"session_id": "s", "cwd": "/tmp", "hook_event_name": "PreToolUse", "tool_name": "Bash",
                   "tool_input": {"command": row["command"]}, "tool_use_id": "t"}  # fmt: skip
        out, err = io.StringIO(), io.StringIO()
        assert (
            hook.run(args, io.BytesIO(json.dumps(payload).encode()), out, err, engine=engine) == 0
        )
        answer = json.loads(out.getvalue()) if out.getvalue().strip() else {}
        decision = answer.get("hookSpecificOutput", {}).get("permissionDecision", "none")
        if decision not in ACCEPTED[row["expect"]]:
            wrong.append((row["command"], row["expect"], decision, err.getvalue()))
    assert wrong == []
