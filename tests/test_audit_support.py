"""Builders shared by the audit tests: synthetic segments, outcomes and decisions (no parser, no
policies), built on the real model classes and the shared test factories."""

from __future__ import annotations

from pathlib import Path

from fakes import make_rule as fake_rule
from policy_helpers import line, seg

from rtk_policy.config.load import Config
from rtk_policy.decision import Decision
from rtk_policy.engine.pipeline import Outcome
from rtk_policy.policy.model import Evaluation, Rule, RuleResult, SegmentResult
from rtk_policy.shell.model import Segment


def make_config(tmp_path: Path, **fields: object) -> Config:
    """A Config whose audit log lives in `tmp_path`."""
    fields.setdefault("audit_path", str(tmp_path / "audit.jsonl"))
    return Config(**fields)  # type: ignore[arg-type]


def make_decision(
    command: str = "git status", rewritten: str | None = "rtk git status", **fields: object
) -> Decision:
    """A Decision as the engine would return it."""
    values: dict[str, object] = {
        "verdict": "allow",
        "command": command,
        "rewrite": rewritten,
        "rewritten": rewritten,
        "reasons": (),
        "rule_ids": ("git-read-only",),
        "warnings": (),
        "audit_rule_ids": (),
        "gate": "",
    }
    values.update(fields)
    return Decision(**values)  # type: ignore[arg-type]


def make_segment(index: int, text: str, program: str, depth: int = 0) -> Segment:
    """A Segment for `text` (split on spaces) at `depth`, as the audit log reads it."""
    return seg(
        text,
        index=index,
        program=program,
        program_path=program,
        depth=depth,
        origin="top" if depth == 0 else "substitution",
        parent=-1 if depth == 0 else 0,
        rewritable=depth == 0,
    )


def make_rule(rule_id: str, kind: str = "permission", decision: str = "allow") -> Rule:
    """A Rule value (never compiled)."""
    return fake_rule(rule_id, decision if kind == "permission" else "", kind=kind)


def make_outcome(texts: list[tuple[str, str, int]], decision: Decision) -> Outcome:
    """An Outcome for segments given as (text, program, depth): segment 0 hits a permission rule,
    segment 1 (if any) a rewrite rule."""
    segments = tuple(
        make_segment(i, text, program, depth) for i, (text, program, depth) in enumerate(texts)
    )
    results = []
    for i, _segment in enumerate(segments):
        hits = (RuleResult(make_rule("git-read-only"), True, message="ok"),) if i == 0 else ()
        rewrite = (
            RuleResult(make_rule("rtk-ls", "rewrite"), True, rewrite="rtk ls") if i == 1 else None
        )
        results.append(SegmentResult(i, (), hits, rewrite, False))
    command_line = line(*segments, text=decision.command)
    evaluation = Evaluation(
        results=tuple(results), policy_digest="sha256:abc", backend="cel-expr", eval_us=42
    )
    return Outcome(command_line, evaluation, decision)
