"""Table tests of `assemble_rewrite`: splicing, the pipeline model (§3.4), identity and refusals (§3.6)."""

from __future__ import annotations

import pytest

from rtk_policy.policy.model import Evaluation, Rule, RuleResult, SegmentResult
from rtk_policy.engine.rewrite import assemble_rewrite
from rtk_policy.shell.model import CommandLine, Segment


def _segment(text: str, whole: str, index: int, at: int, **facts: object) -> Segment:
    start = whole.index(text, at)
    words = tuple(text.split())
    fields: dict[str, object] = dict(
        index=index, text=text, start=start, end=start + len(text), program=words[0],
        program_path=words[0], argv=words, args=words[1:], raw_words=words, subcommand="",
        flags=(), env=(), wrappers=(), prefix="", command=text, suffix="", redirects=(),
        match_text=text, pipeline_index=0, pipeline_size=1, pipeline_before=(), pipeline_after=(),
        pipe_stderr=False, operator_before="", operator_after="", background=False, negated=False,
        depth=0, origin="top", parent=-1, dynamic_program=False, rewritable=True,
    )  # fmt: skip
    fields.update(facts)
    return Segment(**fields)  # type: ignore[arg-type]


def _line(whole: str, specs: list[tuple[str, dict[str, object]]], **facts: object) -> CommandLine:
    """A CommandLine of `whole` whose segments are the given texts (found left to right)."""
    segments, at = [], 0
    for i, (text, seg_facts) in enumerate(specs):
        seg = _segment(text, whole, i, at, **seg_facts)
        segments.append(seg)
        at = seg.end
    fields: dict[str, object] = dict(
        text=whole, segments=tuple(segments), parse_error=False, has_substitution=False,
        has_heredoc=False, has_here_string=False, has_file_redirect=False, unattestable=False,
        multiline="\n" in whole, rewrite_refused=False, error="",
    )  # fmt: skip
    fields.update(facts)
    return CommandLine(**fields)  # type: ignore[arg-type]


def _eval(line: CommandLine, rewrites: dict[int, tuple[str, str]], safe: set[int]) -> Evaluation:
    """An Evaluation where segment i has rewrite rewrites[i] = (text, role) and i in safe is a consumer."""
    results = []
    for seg in line.segments:
        hit = None
        if seg.index in rewrites:
            new, role = rewrites[seg.index]
            rule = Rule(id="r", policy="p", file="f", line=1, kind="rewrite", decision="",
                        mode="enforce", programs=(), pipeline=role)  # fmt: skip
            hit = RuleResult(rule=rule, matched=True, rewrite=new)
        results.append(SegmentResult(seg.index, (), (), hit, seg.index in safe))
    return Evaluation(tuple(results), "digest", "test", 0)


def _pipe(i: int, n: int, **more: object) -> dict[str, object]:
    return {"pipeline_index": i, "pipeline_size": n, **more}


CASES = [
    # (name, whole, [(segment text, facts)], {index: (rewrite, role)}, safe consumers, expected)
    ("single", "git status", [("git status", {})], {0: ("rtk git status", "producer")}, set(),
     "rtk git status"),
    ("unsupported", "htop", [("htop", {})], {}, set(), None),
    ("separators kept", "git add .  &&\tcargo test", [("git add .", {}), ("cargo test", {})],
     {0: ("rtk git add .", "producer"), 1: ("rtk cargo test", "producer")}, set(),
     "rtk git add .  &&\trtk cargo test"),
    ("one of two", "git status && curl x", [("git status", {}), ("curl x", {})],
     {0: ("rtk git status", "producer")}, set(), "rtk git status && curl x"),
    ("final grep wins", "git log | grep feat", [("git log", _pipe(0, 2)), ("grep feat", _pipe(1, 2))],
     {0: ("rtk git log", "producer"), 1: ("rtk grep feat", "both")}, set(), "git log | rtk grep feat"),
    ("safe producer", "git log | tail -5", [("git log", _pipe(0, 2)), ("tail -5", _pipe(1, 2))],
     {0: ("rtk git log", "producer")}, {1}, "rtk git log | tail -5"),
    ("unsafe consumer", "git log | wc -l", [("git log", _pipe(0, 2)), ("wc -l", _pipe(1, 2))],
     {0: ("rtk git log", "producer"), 1: ("rtk wc -l", "producer")}, set(), None),
    ("producer not safe", "docker logs a | tail", [("docker logs a", _pipe(0, 2)), ("tail", _pipe(1, 2))],
     {0: ("rtk docker logs a", "never")}, {1}, None),
    ("middle never", "git log | grep a | wc -l",
     [("git log", _pipe(0, 3)), ("grep a", _pipe(1, 3)), ("wc -l", _pipe(2, 3))],
     {0: ("rtk git log", "producer"), 1: ("rtk grep a", "both")}, set(), None),
    ("all safe consumers", "git log | head -20 | tail -5",
     [("git log", _pipe(0, 3)), ("head -20", _pipe(1, 3)), ("tail -5", _pipe(2, 3))],
     {0: ("rtk git log", "producer")}, {1, 2}, "rtk git log | head -20 | tail -5"),
    ("pipe stderr", "git log |& grep x",
     [("git log", _pipe(0, 2, pipe_stderr=True)), ("grep x", _pipe(1, 2, pipe_stderr=True))],
     {0: ("rtk git log", "producer"), 1: ("rtk grep x", "both")}, set(), None),
    ("two pipelines", "git log | tail -5 && git status",
     [("git log", _pipe(0, 2)), ("tail -5", _pipe(1, 2)), ("git status", {})],
     {0: ("rtk git log", "producer"), 2: ("rtk git status", "producer")}, {1},
     "rtk git log | tail -5 && rtk git status"),
    ("missing stage", "if x; fi | tail", [("tail", _pipe(1, 2))], {}, {0}, None),
    ("not rewritable", "echo $(git status)", [("git status", {"rewritable": False})],
     {0: ("rtk git status", "producer")}, set(), None),
    ("continuations collapsed", "git \\\n    diff HEAD~1", [("git \\\n    diff HEAD~1", {})],
     {0: ("rtk git diff HEAD~1", "producer")}, set(), "rtk git diff HEAD~1"),
    ("identity", "rtk git status", [("rtk git status", {"wrappers": ("rtk",), "program": "git"})], {},
     set(), "rtk git status"),
    ("rtk in compound", "rtk git status && git log",
     [("rtk git status", {"wrappers": ("rtk",)}), ("git log", {})], {1: ("rtk git log", "producer")},
     set(), "rtk git status && rtk git log"),
    ("rtk in compound unchanged", "rtk git status && echo x",
     [("rtk git status", {"wrappers": ("rtk",)}), ("echo x", {})], {}, set(), None),
    ("unchanged rewrite", "/usr/bin/liquibase up", [("/usr/bin/liquibase up", {})],
     {0: ("/usr/bin/liquibase up", "producer")}, set(), None),
]


@pytest.mark.parametrize(
    ("whole", "specs", "rewrites", "safe", "expected"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_assemble(whole, specs, rewrites, safe, expected) -> None:
    line = _line(whole, specs)
    assert assemble_rewrite(line, _eval(line, rewrites, safe)) == expected


def test_refused_input_is_never_rewritten() -> None:
    line = _line("git status", [("git status", {})], rewrite_refused=True)
    assert assemble_rewrite(line, _eval(line, {0: ("rtk git status", "producer")}, set())) is None


def test_identity_needs_a_lone_line() -> None:
    line = _line("rtk git status\necho done", [("rtk git status", {"wrappers": ("rtk",)}), ("echo done", {})])
    assert assemble_rewrite(line, _eval(line, {}, set())) is None
