"""Builders shared by the audit tests: synthetic segments, outcomes and decisions (no engine)."""

from __future__ import annotations

from pathlib import Path

import attrs

from rtk_policy.config import Config
from rtk_policy.decision import Decision
from rtk_policy.policy.model import Evaluation, Rule, RuleResult, SegmentResult
from rtk_policy.shell.model import CommandLine, Segment


@attrs.frozen
class Outcome:
    """The shape of `rtk_policy.engine.Outcome` (the engine module is built concurrently; the audit
    log only reads these three attributes)."""

    command_line: CommandLine
    evaluation: Evaluation
    decision: Decision


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
    """A Segment with plain defaults for the fields the audit log does not read."""
    words = tuple(text.split())
    return Segment(
        index=index,
        text=text,
        start=-1,
        end=-1,
        program=program,
        program_path=program,
        argv=words,
        args=words[1:],
        raw_words=words,
        subcommand=words[1] if len(words) > 1 else "",
        flags=(),
        env=(),
        wrappers=(),
        prefix="",
        command=text,
        suffix="",
        redirects=(),
        match_text=text,
        pipeline_index=0,
        pipeline_size=1,
        pipeline_before=(),
        pipeline_after=(),
        pipe_stderr=False,
        operator_before="",
        operator_after="",
        background=False,
        negated=False,
        depth=depth,
        origin="top" if depth == 0 else "substitution",
        parent=-1 if depth == 0 else 0,
        dynamic_program=False,
        rewritable=depth == 0,
    )


def make_rule(rule_id: str, kind: str = "permission", decision: str = "allow") -> Rule:
    """A Rule value (never compiled)."""
    return Rule(
        id=rule_id,
        policy="p",
        file="p.yaml",
        line=1,
        kind=kind,
        decision=decision if kind == "permission" else "",
        mode="enforce",
        programs=(),
        pipeline="never",
    )


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
    line = CommandLine(
        text=decision.command,
        segments=segments,
        parse_error=False,
        has_substitution=False,
        has_heredoc=False,
        has_here_string=False,
        has_file_redirect=False,
        unattestable=False,
        multiline=False,
        rewrite_refused=False,
        error="",
    )
    evaluation = Evaluation(
        results=tuple(results), policy_digest="sha256:abc", backend="cel-expr", eval_us=42
    )
    return Outcome(line, evaluation, decision)
