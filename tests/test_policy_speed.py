"""Load-time speed-ups that must not change answers: cached `re_matches`, `.matches` rewrite, derived index."""

from __future__ import annotations

import pytest
from policy_helpers import line, redirect, seg, write

from rtk_policy.policy import available_backends, load_policy_set
from rtk_policy.policy.guards.fast_source import fast_source
from rtk_policy.policy.model import Context
from rtk_policy.policy.guards.program_index import derived_programs
from rtk_policy.policy.regex import re_matches

BACKENDS = available_backends()


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('a.matches("x")', 're_matches(a, "x")'),
        ("(a + 'y').matches(r'^z')", "re_matches((a + 'y'), r'^z')"),
        ('x.matches("a").matches("b")', 're_matches(re_matches(x, "a"), "b")'),
        ('f(s.matches("q")).matches("^a")', 're_matches(f(re_matches(s, "q")), "^a")'),
        ('l.exists(v, v.matches("a") && w)', 'l.exists(v, re_matches(v, "a") && w)'),
    ],
)
def test_literal_matches_calls_are_rewritten(source, expected):
    assert fast_source(source) == expected


@pytest.mark.parametrize(
    "source",
    ['a.matches(p)', 'a.matches("a" + "b")', 'a.matches("(")', "a.contains('matches')", "a.matches("],
)
def test_other_sources_are_left_as_written(source):
    assert fast_source(source) == source


def test_re_matches_is_an_re2_partial_match():
    assert re_matches("a/.env", "(^|/)[.]env$")
    assert not re_matches("a/.env\n", "(^|/)[.]env$")  # RE2 `$` is the end of the text
    assert re_matches("xx-abc-yy", "abc")
    assert not re_matches("ABC", "abc")
    with pytest.raises(Exception):  # noqa: B017 - the engine's own error type
        re_matches("a", "(")


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('segment.program == "rm" && x', ("rm",)),
        ('"rm" == segment.program', ("rm",)),
        ('a && (segment.program in ["dd", "tee"] && b)', ("dd", "tee")),
        ('segment.program in ["dd", "tee"] && segment.program == "tee"', ("tee",)),
        ('segment.program == "rm" || x', ()),
        ('!(segment.program in ["ls"]) && x', ()),
        ('segment.args.exists(segment, segment.program == "x")', ()),
        ('segment.program in ["a", x]', ()),
        ('segment.program == "a" ? x : y', ()),
    ],
)
def test_index_is_derived_only_from_a_program_conjunct(source, expected):
    assert derived_programs(source) == expected


PACK = """\
name: speed
kind: permission
rules:
  - id: env-file
    decision: ask
    match: segment.args.exists(a, a.matches("(^|/)[.]env$")) || segment.redirects.exists(r, r.target.matches("[.]env$"))
  - id: dd-dev
    decision: deny
    match: segment.program == "dd" && segment.args.exists(a, a.matches("^of=/dev/"))
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_rewritten_packs_answer_like_matches(tmp_path, backend):
    policies = load_policy_set([write(tmp_path, "p.yaml", PACK)], backend=backend, use_cache=False)
    rules = {c.rule.id: c for c in policies.compiled_rules}
    assert rules["dd-dev"].index == ("dd",)
    assert rules["env-file"].index == ()
    cases = [
        (seg("cat a/.env"), ["env-file"]),
        (seg("cat a/.env.example"), []),
        (seg("grep KEY", redirects=(redirect("<", "x.env"),)), ["env-file"]),
        (seg("dd if=x of=/dev/sda"), ["dd-dev"]),
        (seg("echo of=/dev/sda"), []),
    ]
    for segment, expected in cases:
        result = policies.evaluate(line(segment), Context()).results[0]
        assert [hit.rule.id for hit in result.permission_hits] == expected, segment.text
