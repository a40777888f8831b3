"""Guards (`policy/guard.py`): the Python pre-check answers true or false only where CEL does.

The differential test runs the shipped packs both ways (trace: every candidate rule through the CEL
backend; fast: guards skip the rules they prove false and stand in for CEL where they prove true) on
every corpus command (golden, multi-line, bypass) and compares everything a decision reads.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rtk_policy.policy import load_policy_set
from rtk_policy.policy.guards.guard import UNKNOWN, build_guard, guard_functions
from rtk_policy.policy.guards.ir import guard_ir
from rtk_policy.policy.model import Context
from rtk_policy.policy.regex import re_matches
from rtk_policy.shell import parse

ROOT = Path(__file__).resolve().parent.parent
FNS = guard_functions()


SEGMENT = {"program": "git", "args": ["push", "-f"], "redirects": [], "command": "git push -f"}


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('segment.program == "rm"', False),
        ('segment.program == "git"', True),
        ('segment.program in ["rm", "dd"]', False),
        ('segment.program == "rm" && no_such_function(1)', False),
        ('no_such_function(1) && segment.program == "rm"', False),
        ('segment.program == "git" && no_such_function(1)', UNKNOWN),
        ('segment.program == "rm" || no_such_function(1)', UNKNOWN),
        ('segment.program == "git" || no_such_function(1)', True),
        ('!(segment.program == "git")', False),
        ("!no_such_function(1)", UNKNOWN),
        ("segment.missing_field", UNKNOWN),
        ("segment.redirects.exists(r, r.target == 'x')", False),
        ('segment.args.exists(a, a.matches("^-[a-z]*f"))', True),
        ('segment.args.all(a, a.startsWith("-"))', False),
        ("size(segment.args) > 1", True),
        ("segment.program == 1", UNKNOWN),  # a type mismatch is left to CEL
        ('segment.args[5] == "x"', UNKNOWN),
        ('rtk_norm(segment.command).matches("^git push")', True),
        ('segment.program.matches("(")', UNKNOWN),  # an invalid pattern is a CEL error
        ("segment.program +", None),  # does not parse: no guard
    ],
)
def test_three_valued_answers(source, expected):
    guard = build_guard(guard_ir(source), FNS)
    if expected is None:
        assert guard is None
    else:
        assert guard is not None and guard({"segment": dict(SEGMENT)}) is expected


def test_a_comprehension_restores_a_shadowed_variable():
    env = {"segment": dict(SEGMENT), "a": "kept"}
    ir = guard_ir("segment.args.exists(a, a == 'x')")
    guard = build_guard(ir, FNS)
    assert ir[0] == "exists" and guard is not None
    assert guard(env) is False and env["a"] == "kept"


@pytest.mark.parametrize(
    ("text", "pattern", "expected"),
    [
        ("mkfs.ext4", "^mkfs([.][a-z0-9_]+)?$", True),
        ("xmkfs", "^mkfs$", False),
        ("é", "^.$", True),  # one code point, two UTF-8 bytes
        ("a\nb", "^b", False),
        ("rm\n", "^rm$", False),  # RE2 `$` is the end of the text only
    ],
)
def test_re_matches_is_re2_search(text, pattern, expected):
    assert re_matches(text, pattern) is expected


def _commands() -> list[str]:
    lines = (ROOT / "tests" / "corpus" / "commands.txt").read_text(encoding="utf-8").splitlines()
    found = [c for c in lines if c.strip() and not c.startswith("#")]
    for row in (ROOT / "tests" / "corpus" / "multiline.jsonl").read_text().splitlines():
        if row.strip():
            found.append(json.loads(row)["command"])
    for row in (ROOT / "tests" / "corpus" / "bypass.jsonl").read_text().splitlines():
        if row.strip():
            found.append(json.loads(row)["command"])
    return found


def _key(evaluation):
    return (
        [
            (
                [(h.rule.id, h.rule.decision, h.message, h.error) for h in r.permission_hits],
                r.rewrite and (r.rewrite.rule.id, r.rewrite.rewrite),
                r.safe_consumer,
            )
            for r in evaluation.results
        ],
        evaluation.errors,
    )


def test_guards_change_no_answer_of_the_shipped_packs():
    policies = load_policy_set([str(ROOT / "policies")], backend="cel-expr", use_cache=False)
    contexts = [
        Context(agent="claude"),
        Context(
            agent="claude",
            claude_deny=("rm:*", "git push --force"),
            claude_ask=("git push",),
            claude_allow=("git *", "ls:*", "*"),
        ),
    ]
    for context in contexts:
        for text in _commands():
            command_line = parse(text, context.transparent_prefixes)
            traced = policies.evaluate(command_line, context, trace=True)
            fast = policies.evaluate(command_line, context)
            assert _key(fast) == _key(traced), text
            for full, quick in zip(traced.results, fast.results, strict=True):
                assert [r for r in full.tried if r.matched or r.error] == list(quick.tried)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('"n=" + string(command.segment_count)', "n=1000"),
        ('string(segment.program) + "!"', "git!"),
        ("string(command.flag)", UNKNOWN),  # a bool: CEL says "true", left to CEL
    ],
)
def test_string_conversion_of_ints_and_strings(source, expected):
    guard = build_guard(guard_ir(source), FNS)
    env = {"command": {"segment_count": 1000, "flag": True}, "segment": dict(SEGMENT)}
    assert guard(env) == expected if expected is not UNKNOWN else guard(env) is UNKNOWN


def test_chain_costs_are_remembered_by_node_and_bounded(monkeypatch):
    """A chain's operands run cheapest first; each node's cost is worked out once and kept with
    the node (its id cannot be taken by another object meanwhile), within `MAX_COSTS` entries."""
    from rtk_policy.policy.guards import guard

    cheap = guard_ir('segment.program == "git"')
    costly = guard_ir('segment.args.exists(a, a.startsWith("--force"))')
    chain = ("and", costly, cheap)
    guard.forget_costs()
    assert guard.chain_operands(chain) == [cheap, costly]
    assert guard._COSTS[id(costly)][0] is costly
    costed = len(guard._COSTS)
    assert guard.chain_operands(("or", cheap, costly)) == [cheap, costly]
    assert len(guard._COSTS) == costed  # both operands costed already
    monkeypatch.setattr(guard, "MAX_COSTS", 3)
    guard.forget_costs()
    for text in ('segment.program == "a"', 'segment.program == "b"', 'segment.program == "c"'):
        guard.chain_operands(("and", guard_ir(text), cheap))
    assert len(guard._COSTS) <= 3
    guard.forget_costs()
    assert guard._COSTS == {}
