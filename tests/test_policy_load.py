"""Loading policy files: every problem of every file, with positions, on both backends."""

from __future__ import annotations

import pytest
from policy_helpers import write

from rtk_policy.policy import PolicyLoadError, available_backends, load_policy_set

BACKENDS = available_backends()

GOOD = """\
name: good
kind: permission
rules:
  - id: rm-root
    decision: deny
    programs: [rm]
    match: segment.args.exists(a, a == "/")
"""

BAD = """\
name: bad
kind: permission
colour: blue
rules:
  - id: typo-field
    decision: deny
    match: segment.progam == "rm"
  - id: typo-macro
    decision: ask
    match: segment.redirects.exists(r, r.targt == "x")
  - id: typo-function
    decision: ask
    match: 'bash_rule_matchs("a", segment.text)'
  - id: syntax
    decision: ask
    match: segment.program ==
  - id: rm-root
    decision: maybe
    match: "true"
"""


def _problems(tmp_path, backend, *texts):
    paths = [write(tmp_path, f"p{i}.yaml", text) for i, text in enumerate(texts)]
    with pytest.raises(PolicyLoadError) as caught:
        load_policy_set(paths, backend=backend, use_cache=False)
    return caught.value


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_problem_is_reported_with_its_position(tmp_path, backend):
    error = _problems(tmp_path, backend, GOOD, BAD)
    found = {(p.line, p.col): p.message for p in error.problems}
    assert "unknown key 'colour'" in found[(3, 1)]
    assert found[(7, 20)] == "no such field 'progam' (did you mean 'program'?)"
    assert found[(10, 42)] == "no such field 'targt' (did you mean 'target'?)"
    assert found[(13, 13)].startswith("undeclared reference to function 'bash_rule_matchs'")
    assert found[(16, 30)] == "syntax error: unexpected end of expression"
    assert "decision must be one of" in found[(18, 15)]
    assert "duplicate rule id 'rm-root'" in found[(17, 9)]
    assert all(p.file.endswith("p1.yaml") for p in error.problems)


@pytest.mark.parametrize("backend", BACKENDS)
def test_render_shows_source_line_and_caret(tmp_path, backend):
    text = "name: x\nrules:\n  - id: a\n    decision: deny\n    match: segment.progam == 'rm'\n"
    rendered = _problems(tmp_path, backend, text).render()
    lines = rendered.splitlines()
    assert lines[0].endswith("p0.yaml:5:20: no such field 'progam' (did you mean 'program'?)")
    assert lines[1] == "        match: segment.progam == 'rm'"
    assert lines[2].index("^") == lines[1].index("progam")


def test_both_backends_report_identical_problems(tmp_path):
    if len(BACKENDS) < 2:
        pytest.skip("one backend only")
    reports = [[p.render() for p in _problems(tmp_path, b, BAD).problems] for b in BACKENDS]
    assert reports[0] == reports[1]


@pytest.mark.parametrize(
    "text, message",
    [
        ("rules: []\n", "missing required key 'name'"),
        ("name: x\nkind: other\nrules: []\n", "kind must be one of permission, rewrite"),
        ("name: x\nrules:\n  - {id: a, match: 'true'}\n", "missing required key 'decision'"),
        (
            "name: x\nkind: rewrite\nrules:\n  - {id: a, match: 'true'}\n",
            "missing required key 'rewrite'",
        ),
        (
            "name: x\nrules:\n  - {id: A_b, decision: deny, match: 'true'}\n",
            "must match [a-z0-9][a-z0-9-]*",
        ),
        (
            "name: x\nrules:\n  - {id: a, decision: deny, match: 'segment.program'}\n",
            "must give a bool",
        ),
        (
            "name: x\nrules:\n  - {id: a, decision: deny, match: 'true', programs: rm}\n",
            "programs must be a list",
        ),
        ("name: x\nrules: [\n", "invalid YAML"),
        (
            "name: x\nrules:\n  - {id: a, decision: deny, match: 'true', examples: [{command: x, expect: maybe}]}\n",
            "expect must be one of",
        ),
    ],
)
def test_validation_messages(tmp_path, text, message):
    error = _problems(tmp_path, BACKENDS[0], text)
    assert any(message in p.message for p in error.problems), error.render()


def test_duplicate_policy_names_across_files(tmp_path):
    error = _problems(tmp_path, BACKENDS[0], GOOD, GOOD.replace("rm-root", "other"))
    assert any("policy name 'good' is also used" in p.message for p in error.problems)


def test_loads_rules_in_order_with_metadata(tmp_path):
    text = (
        GOOD
        + "    examples:\n      - {command: 'rm -rf /', expect: deny, claude: {deny: ['rm:*']}}\n"
    )
    policies = load_policy_set([write(tmp_path, "a.yaml", text)], use_cache=False)
    (rule,) = policies.rules
    assert (rule.id, rule.decision, rule.programs, rule.line, rule.mode) == (
        "rm-root",
        "deny",
        ("rm",),
        4,
        "enforce",
    )
    (example,) = rule.examples
    assert example.expect == "deny"
    assert dict(example.overrides)["claude"] == {"deny": ["rm:*"]}
    assert policies.files == (str(tmp_path / "a.yaml"),)


def test_folder_excludes_test_files_and_sorts(tmp_path):
    write(tmp_path, "b.yaml", GOOD)
    write(tmp_path, "a.yml", GOOD.replace("good", "first").replace("rm-root", "first-rule"))
    write(tmp_path, "b_test.yaml", "not: a policy\n")
    policies = load_policy_set([str(tmp_path)], use_cache=False)
    assert [r.id for r in policies.rules] == ["first-rule", "rm-root"]
