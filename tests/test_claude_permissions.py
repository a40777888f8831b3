"""RTK's own permission assertions (reference corpus `permissions`, `permissions_generated`) through the
shipped claude-permissions pack, with our verdicts read as RTK's: allow=Allow, ask=Ask, deny=Deny,
none=Default."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rtk_policy.engine.pipeline import load_engine

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "reference" / "rtk_cases_public.json"
PACK = Path(__file__).resolve().parents[1] / "policies" / "claude-permissions.yaml"
RTK_NAMES = {"allow": "Allow", "ask": "Ask", "deny": "Deny", "none": "Default"}


def _cases() -> list[dict]:
    if not CORPUS.exists():
        pytest.skip("the reference corpus (../shared/reference) is not beside this checkout")
    data = json.loads(CORPUS.read_text(encoding="utf-8"))
    return data["permissions"] + data["permissions_generated"]


def test_rtk_permission_cases_all_hold():
    engine = load_engine([str(PACK)])
    failures = []
    cases = _cases()
    for case in cases:
        context = engine.context(
            claude_deny=tuple(case["deny"]), claude_ask=tuple(case["ask"]),
            claude_allow=tuple(case["allow"]),
        )
        verdict = RTK_NAMES[engine.decide(case["cmd"], context).verdict]
        if "expected" in case and verdict != case["expected"]:
            failures.append((case["cmd"], case["expected"], verdict))
        if "expected_not" in case and verdict == case["expected_not"]:
            failures.append((case["cmd"], f"not {case['expected_not']}", verdict))
    print(f"RTK permission cases: {len(cases) - len(failures)}/{len(cases)} identical")
    assert failures == []
    assert len(cases) > 2000
