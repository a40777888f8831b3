"""RTK rewrite parity: every registry-layer `rewrite` case of the public RTK corpus, through
shell.parse → the shipped policies → assemble_rewrite, compared with RTK's own answer.

Run with `-s` to see the pass rate per source group. The threshold only goes up; the deliberate
differences from RTK are listed in KNOWN_DIFFERENCES (and in the README).
"""

from __future__ import annotations

import collections
import json
from pathlib import Path

import pytest

from rtk_policy.policy import load_policy_set
from rtk_policy.policy.model import Context
from rtk_policy.engine.rewrite import assemble_rewrite
from rtk_policy.shell import parse

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "reference" / "rtk_cases_public.json"
POLICIES = ROOT / "policies"
#: The pass rate (0..1) the public registry cases must keep.
THRESHOLD = 0.96
#: (cmd, excluded) of cases where rtk-policy deliberately answers differently; see the README.
KNOWN_DIFFERENCES: frozenset[tuple[str, tuple[str, ...]]] = frozenset()


def _cases() -> list[dict]:
    if not CORPUS.is_file():
        return []
    data = json.loads(CORPUS.read_text(encoding="utf-8"))
    cases = [c for c in data["rewrite"] if c.get("layer") == "registry"]
    cases += [c for c in data.get("rewrite_is_some", []) if c.get("layer") == "registry"]
    return cases


CASES = _cases()
pytestmark = pytest.mark.skipif(not CASES, reason="the RTK reference corpus is not present")


@pytest.fixture(scope="module")
def policies():
    return load_policy_set([str(POLICIES)])


def rewrite(policies, case: dict) -> str | None:
    """What rtk-policy selects as the rewrite of a corpus case (no permission gating)."""
    prefixes = tuple(case.get("transparent_prefixes") or ())
    context = Context(exclude_commands=tuple(case.get("excluded") or ()), transparent_prefixes=prefixes)
    line = parse(case["cmd"], prefixes)
    return assemble_rewrite(line, policies.evaluate(line, context))


def _passes(case: dict, got: str | None) -> bool:
    if case.get("assert") == "is_some":
        return got is not None
    return got == case["expected"]


def _group(case: dict) -> str:
    source = case["source"].split(":", 1)[-1]
    return source.split("::", 1)[0]


def test_public_registry_pass_rate(policies, capsys) -> None:
    per_group: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    misses = []
    for case in CASES:
        try:
            got = rewrite(policies, case)
        except Exception as error:  # noqa: BLE001 - a crash is a miss, reported below
            got = f"<error {error!r}>"
        ok = _passes(case, got)
        key = (case["cmd"], tuple(case.get("excluded") or ()))
        per_group[_group(case)][0] += ok or key in KNOWN_DIFFERENCES
        per_group[_group(case)][1] += 1
        if not ok and key not in KNOWN_DIFFERENCES:
            misses.append((case, got))
    passed = sum(p for p, _ in per_group.values())
    rate = passed / len(CASES)
    with capsys.disabled():
        print(f"\nRTK registry parity: {passed}/{len(CASES)} = {rate:.1%}")
        for group, (p, n) in sorted(per_group.items(), key=lambda kv: kv[1][0] - kv[1][1]):
            if p < n:
                print(f"  {p}/{n}  {group}")
        for case, got in misses:
            extra = {k: case[k] for k in ("excluded", "transparent_prefixes") if k in case}
            print(f"  MISS {case['cmd']!r} {extra or ''}\n       want {case.get('expected')!r}\n       got  {got!r}")
    assert rate >= THRESHOLD


@pytest.mark.parametrize(
    ("cmd", "expected"),
    [
        ("git status", "rtk git status"),
        ("git log | tail -5 && git status", "rtk git log | tail -5 && rtk git status"),
        ("cargo test | grep FAILED", "cargo test | rtk grep FAILED"),
        ("npx vitest run --coverage", "rtk vitest --coverage"),
        ("head -n 1 a>b", "rtk read a --head-lines 1 >b"),
        ("uv run python script.py", "rtk uv run python script.py"),
        ("htop", None),
    ],
)
def test_spot_checks(policies, cmd: str, expected: str | None) -> None:
    assert rewrite(policies, {"cmd": cmd}) == expected


def test_every_rewrite_rule_has_a_positive_example() -> None:
    import yaml

    for pack in sorted(p for p in POLICIES.glob("rtk-rewrite*.yaml") if not p.name.endswith("_test.yaml")):
        for rule in yaml.safe_load(pack.read_text(encoding="utf-8"))["rules"]:
            expects = [e.get("expect") for e in rule.get("examples", [])]
            assert any(e not in (None, "none") for e in expects), f"{pack.name}: {rule['id']}"


@pytest.mark.parametrize("backend", ["cel-expr", "cel-python"])
def test_rewrite_packs_check_on_both_backends(backend: str, capsys) -> None:
    from rtk_policy.main import main

    packs = [str(p) for p in sorted(p for p in POLICIES.glob("rtk-rewrite*.yaml") if not p.name.endswith("_test.yaml"))]
    assert main(["check", "--backend", backend, *packs]) == 0, capsys.readouterr()
