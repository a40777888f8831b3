"""The shell stage against RTK's own assertions (reference/rtk_cases_public.json).

* `unattestable`: `CommandLine.unattestable` equals RTK's contains_unattestable_construct.
* `split_for_permissions`: the match_text of the depth-0 segments equals RTK's split, except for
  the deliberate difference below.
* `permissions` / `permissions_generated` Deny cases: bypass probes. RTK denies them because some
  segment matches a deny pattern; the shell stage must expose such a segment (match_text, or the
  words as typed or dequoted from the program on), whatever the nesting, quoting or syntax errors.
* `rewrite` (registry layer): whenever RTK rewrites, the input is not refused and some segment is
  rewritable; and the walker refusals RTK documents are reproduced.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rtk_policy.policy.bash_pattern import bash_rule_matches
from rtk_policy.shell import parse

CORPUS_PATH = Path(__file__).resolve().parents[2] / "shared" / "reference" / "rtk_cases_public.json"
#: RTK's assertions; a checkout without `../shared` beside it has none, and these tests are skipped
CORPUS = json.loads(CORPUS_PATH.read_text()) if CORPUS_PATH.exists() else {}
pytestmark = pytest.mark.skipif(not CORPUS, reason="the RTK reference corpus is not present")

#: RTK's token splitter cuts a case statement at the pattern's ")" and keeps "case $x in (ls" and
#: "esac" as segments. We parse the grammar: the only command there is `echo 1`; patterns are words.
SPLIT_DIFFERENCES = {"case $x in (ls) echo 1;; esac": ["echo 1"]}


def _ids(cases: list[dict]) -> list[str]:
    """Test ids: the command, shortened."""
    return [repr(c["cmd"])[:60] for c in cases]


@pytest.mark.parametrize(
    "case", CORPUS.get("unattestable", []), ids=_ids(CORPUS.get("unattestable", []))
)
def test_unattestable(case: dict) -> None:
    """Unattestable."""
    assert parse(case["cmd"]).unattestable is case["expected"]


@pytest.mark.parametrize(
    "case",
    CORPUS.get("split_for_permissions", []),
    ids=_ids(CORPUS.get("split_for_permissions", [])),
)
def test_split_for_permissions(case: dict) -> None:
    """Split for permissions."""
    got = [s.match_text for s in parse(case["cmd"]).segments if s.depth == 0]
    expected = SPLIT_DIFFERENCES.get(case["cmd"], case["expected"])
    assert got == expected
    assert set(got) <= set(case["expected"])


DENY_CASES = [
    c
    for c in CORPUS.get("permissions", []) + CORPUS.get("permissions_generated", [])
    if c.get("expected") == "Deny"
]


def test_every_deny_probe_exposes_the_denied_segment() -> None:
    """Every deny probe exposes the denied segment."""
    missed = []
    for case in DENY_CASES:
        forms = set()
        for s in parse(case["cmd"]).segments:
            forms.update((s.match_text, " ".join(s.raw_words), " ".join(s.argv)))
        if not any(bash_rule_matches(p, f) for p in case["deny"] for f in forms):
            missed.append(case["cmd"])
    assert len(DENY_CASES) > 2000
    assert missed == []


REWRITES = [c for c in CORPUS.get("rewrite", []) if c.get("layer") == "registry"]


def _parse(case: dict):  # noqa: ANN202 - test helper
    return parse(case["cmd"], tuple(case.get("transparent_prefixes") or ()))


def test_rewritten_inputs_are_walked() -> None:
    """Parse a corpus case with its transparent prefixes."""
    bad = []
    for case in REWRITES:
        if case["expected"] is None or case["expected"] == case["cmd"]:
            continue
        cl = _parse(case)
        if cl.rewrite_refused or not any(s.rewritable for s in cl.segments):
            bad.append(case["cmd"])
    assert bad == []


@pytest.mark.parametrize(
    "cmd",
    [
        c["cmd"]
        for c in REWRITES
        if c["expected"] is None
        and any(t in c.get("tags", ()) for t in ("multiline", "heredoc", "arithmetic"))
        and "echo" not in c["cmd"]
        and not c["cmd"].startswith("rtk ")
        and "|" not in c["cmd"]
    ],
)
def test_documented_pass_throughs_have_nothing_rewritable(cmd: str) -> None:
    """Documented pass throughs have nothing rewritable."""
    cl = parse(cmd)
    assert cl.rewrite_refused or not any(s.rewritable for s in cl.segments)


@pytest.mark.parametrize(
    ("cmd", "rewritable"),
    [
        ("sudo git status", [False]),
        ("FOO=1 RTK_DISABLED=1 git status", [False]),
        ("RTK_DISABLED+=1 git status", [False]),
        ("env RTK_DISABLED=1 git status", [False]),
        ("env RTK_DISABLED+=1 git status", [True]),
        ("env MSG=RTK_DISABLED=1 git status", [True]),
        ("RTK_DISABLED=1; git status", [False, True]),
        ("uv run RTK_DISABLED=1 git status", [False]),
        ("/usr/bin/env pytest", [False]),
        ("/usr/bin/timeout 300 cargo test", [True]),
        ("timeout 5 rtk git status", [False]),
        ("timeout 5 FOO=1 git status", [False]),
        ("noglob git status", [True]),
        ("'timeout' 5 pytest", [False]),
        ("$X status", [False]),
        ("g* status", [False]),
        ("{ git status; cargo build; }", [False, True]),
        ("(git status) && ls", [True, True]),
        ("echo $(git status)", [True, False]),
        ("bash -c 'git status'", [True, False]),
        ("f() { git status; }", [False]),
        ("if git diff --quiet; then git status; fi", [True, True]),
        ("time cargo build", [True]),
        ("time -v git status", [False]),
        ("time -p -- git status", [True]),
        ("coproc git status", [False]),
        ("git status | head; coproc git log", [True, True, False]),
        ("for x in a; do git status; done | head", [False, True]),
        # the extglob word is a syntax error for tree-sitter: the recovery lexer adds `a` and `b`
        ("ls @(a|b) && git status", [False, False, False, False]),
        ("git log ${x:-a b} | head", [False, False]),
        ("(ls) | head", [False, False]),
        ("git status\ncat <<EOF\nx\nEOF", [False, False]),
        ("git status # don't\nrm -rf /tmp/x", [False, False]),
        ("git status\r\ngit log -3", [True, True]),
        ("ls; while true; do\ngit status\nls; done", [True, True, True, True]),
    ],
)
def test_rewritable(cmd: str, rewritable: list[bool]) -> None:
    """Rewritable."""
    cl = parse(cmd, ("sudo",) if cmd.startswith("sudo bash") else ())
    typed = [s for s in cl.segments if s.copy_of < 0]  # not the copies with values ($X, ${x:-…})
    assert [s.rewritable for s in typed] == rewritable
    for s in cl.segments:
        assert s.rewritable == (s.rewrite_refusal in ("", "assignment after uv run"))


def test_sudo_as_transparent_prefix_is_rewritable() -> None:
    """Sudo as transparent prefix is rewritable."""
    seg = parse("sudo git status", ("sudo",)).segments[0]
    assert seg.rewritable and seg.wrappers == ("sudo",) and seg.program == "git"
