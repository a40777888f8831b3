"""PolicySet.evaluate semantics on both backends (segments built directly, no parser needed)."""

from __future__ import annotations

import pytest
from policy_helpers import line, redirect, seg, write

from rtk_policy.policy import available_backends, load_policy_set
from rtk_policy.policy.model import Context

BACKENDS = available_backends()

PERMISSION = """\
name: perms
kind: permission
when: '!command.parse_error'
rules:
  - id: rm-root
    decision: deny
    programs: [rm]
    match: segment.flags.exists(f, f.contains("r")) && segment.args.exists(a, a in ["/", "~"])
    message: '"deleting " + segment.args.join(" ") + " is not allowed"'
  - id: claude-ask
    decision: ask
    match: claude.ask.exists(p, bash_rule_matches(p, segment.match_text))
  - id: env-error
    decision: ask
    programs: [env-probe]
    match: segment.env.MISSING == "x"
  - id: file-write
    decision: ask
    mode: warn
    match: segment.redirects.exists(r, r.is_file && r.op == ">")
"""

REWRITE = """\
name: rewrites
kind: rewrite
pipeline_consumer: segment.program in ["head", "grep"]
rules:
  - id: broken-rewrite
    programs: [git]
    match: segment.subcommand == "log"
    rewrite: 'segment.env.NOPE'
  - id: git-any
    programs: [git]
    match: segment.subcommand in ["status", "log"]
    rewrite: '"rtk " + segment.command'
  - id: git-status-late
    programs: [git]
    match: segment.subcommand == "status"
    rewrite: '"never chosen"'
"""


@pytest.fixture(params=BACKENDS)
def policies(request, tmp_path):
    paths = [write(tmp_path, "a.yaml", PERMISSION), write(tmp_path, "b.yaml", REWRITE)]
    return load_policy_set(paths, backend=request.param, use_cache=False)


def _ids(result):
    return [hit.rule.id for hit in result.permission_hits]


def test_permission_hits_and_messages(policies):
    evaluation = policies.evaluate(
        line(seg("rm -rf /"), seg("git push")), Context(claude_ask=("git push",))
    )
    first, second = evaluation.results
    assert _ids(first) == ["rm-root"]
    assert first.permission_hits[0].message == "deleting -rf / is not allowed"
    assert _ids(second) == ["claude-ask"]
    assert "claude-ask" in second.permission_hits[0].message
    assert evaluation.backend == policies.backend and evaluation.policy_digest == policies.digest
    assert evaluation.eval_us >= 0


def test_programs_index_limits_the_rules_tried(policies):
    result = policies.evaluate(line(seg("ls -la")), Context(), trace=True).results[0]
    tried = [r.rule.id for r in result.tried]
    assert "rm-root" not in tried and "git-any" not in tried
    assert tried == ["claude-ask", "file-write"]


def test_when_false_skips_the_whole_file(policies):
    evaluation = policies.evaluate(line(seg("rm -rf /"), parse_error=True), Context())
    result = evaluation.results[0]
    assert not any(r.rule.policy == "perms" for r in result.tried)
    assert result.permission_hits == ()


def test_disabled_rules_are_not_tried(policies):
    result = policies.evaluate(line(seg("rm -rf /")), Context(disabled_rules=("rm-root",))).results[
        0
    ]
    assert "rm-root" not in [r.rule.id for r in result.tried]
    assert result.permission_hits == ()


def test_first_matching_rewrite_wins_and_errors_do_not_raise(policies):
    evaluation = policies.evaluate(line(seg("git status"), seg("git log")), Context(), trace=True)
    status, log = evaluation.results
    assert status.rewrite.rule.id == "git-any" and status.rewrite.rewrite == "rtk git status"
    assert "git-status-late" not in [r.rule.id for r in status.tried]
    broken = next(r for r in log.tried if r.rule.id == "broken-rewrite")
    assert not broken.matched and broken.error
    assert log.rewrite.rule.id == "git-any"
    assert any(e.startswith("broken-rewrite:") for e in evaluation.errors)


def test_rewrites_only_on_rewritable_segments(policies):
    refused = policies.evaluate(line(seg("git status"), rewrite_refused=True), Context()).results[0]
    nested = policies.evaluate(line(seg("git status", rewritable=False)), Context()).results[0]
    assert refused.rewrite is None and nested.rewrite is None
    assert not any(r.rule.kind == "rewrite" for r in refused.tried + nested.tried)


def test_runtime_error_makes_the_rule_not_match(policies):
    evaluation = policies.evaluate(line(seg("env-probe x")), Context())
    failed = next(r for r in evaluation.results[0].tried if r.rule.id == "env-error")
    assert not failed.matched and "MISSING" in failed.error
    assert evaluation.results[0].permission_hits == ()


def test_warn_rules_are_hits_and_redirects_are_visible(policies):
    segment = seg("echo hi > out", redirects=(redirect(">", "out", 1),))
    result = policies.evaluate(line(segment), Context()).results[0]
    assert _ids(result) == ["file-write"] and result.permission_hits[0].rule.mode == "warn"


def test_safe_consumer(policies):
    results = policies.evaluate(line(seg("git log"), seg("head -3")), Context()).results
    assert [r.safe_consumer for r in results] == [False, True]


def test_variables_reach_cel(tmp_path):
    text = """\
name: vars
rules:
  - id: everything
    decision: allow
    match: >
      ctx.agent == "claude" && ctx.tool_input.command == "x" && ctx.env.HOME == "/h"
      && config.exclude_commands == ["curl"] && segment.pipeline.size == 2
      && segment.pipeline.after == ["head"] && command.segment_count == 2
      && command.segments[1].program == "head" && segment.env.A == "1" && segment.depth == 0
"""
    context = Context(agent="claude", tool_input=(("command", "x"),), env=(("HOME", "/h"),),
                      exclude_commands=("curl",))  # fmt: skip
    first = seg("git log", pipeline_size=2, pipeline_after=("head",), env=(("A", "1"),))
    for backend in BACKENDS:
        policies = load_policy_set(
            [write(tmp_path, "v.yaml", text)], backend=backend, use_cache=False
        )
        evaluation = policies.evaluate(line(first, seg("head")), context)
        assert evaluation.errors == ()
        assert _ids(evaluation.results[0]) == ["everything"], backend


def test_backends_agree_on_a_batch_of_commands(tmp_path):
    if len(BACKENDS) < 2:
        pytest.skip("one backend only")
    paths = [write(tmp_path, "a.yaml", PERMISSION), write(tmp_path, "b.yaml", REWRITE)]
    sets = [load_policy_set(paths, backend=b, use_cache=False) for b in BACKENDS]
    commands = [
        line(seg("rm -rf ~"), seg("git status")),
        line(seg("git log")),
        line(seg("rm -r build")),
    ]
    context = Context(claude_ask=("git *",))
    for command in commands:
        summaries = [
            [(_ids(r), r.rewrite and r.rewrite.rewrite, r.safe_consumer, [t.rule.id for t in r.tried])
             for r in s.evaluate(command, context).results]
            for s in sets
        ]  # fmt: skip
        assert summaries[0] == summaries[1]


def test_an_engine_failure_fails_closed_for_deny_and_ask_rules():
    from rtk_policy.policy.model import Rule, unevaluable

    def rule(kind: str, decision: str) -> Rule:
        return Rule(id="r", policy="p", file="f", line=1, kind=kind, decision=decision,
                    mode="enforce", programs=(), pipeline="never")

    asked = unevaluable(rule("permission", "deny"), "budget")
    assert asked.matched and asked.rule.decision == "ask" and "could not be evaluated" in asked.message
    assert unevaluable(rule("permission", "ask"), "x").matched
    assert not unevaluable(rule("permission", "allow"), "x").matched
    assert not unevaluable(rule("rewrite", ""), "x").matched


def test_deny_only_tries_the_enforced_deny_rules_alone(policies):
    """The re-check of a rewrite: deny hits kept; ask rules, warn rules and rewrites not tried."""
    command = line(seg("rm -rf /"), seg("git status"), seg("echo x", redirects=(redirect(">", "f"),)))
    full = policies.evaluate(command, Context(claude_ask=("git status",)))
    assert _ids(full.results[1]) == ["claude-ask"] and full.results[1].rewrite is not None
    assert _ids(full.results[2]) == ["file-write"]
    only = policies.evaluate(command, Context(claude_ask=("git status",)), deny_only=True)
    assert [_ids(r) for r in only.results] == [["rm-root"], [], []]
    assert all(r.rewrite is None and not r.safe_consumer for r in only.results)


def test_a_rewrite_into_a_denied_command_is_denied(tmp_path):
    """The engine re-checks the rewritten command with the deny rules (deny_only)."""
    from rtk_policy.config.load import Config
    from rtk_policy.engine.pipeline import Engine

    evil = REWRITE.replace("'\"rtk \" + segment.command'", "'\"rm -rf /\"'")
    paths = [write(tmp_path, "a.yaml", PERMISSION), write(tmp_path, "b.yaml", evil)]
    engine = Engine(load_policy_set(paths, use_cache=False), Config())
    decision = engine.decide("git status", engine.context())
    assert decision.rewrite == "rm -rf /"
    assert decision.verdict == "deny" and decision.gate == "deny" and decision.rewritten is None


def test_deny_only_with_trace_lists_only_the_deny_rules(policies):
    command = line(seg("rm -rf /"), seg("git status"))
    traced = policies.evaluate(command, Context(claude_ask=("git status",)), trace=True, deny_only=True)
    tried = {r.rule.id for result in traced.results for r in result.tried}
    assert tried == {"rm-root"}
    assert [_ids(r) for r in traced.results] == [["rm-root"], []]
