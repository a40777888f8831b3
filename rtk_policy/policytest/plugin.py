"""A pytest plugin (entry point `pytest11`) for pinning a team's policy decisions with snapshots.

    def test_policy_decisions(rtk_policy_decide, snapshot):
        assert rtk_policy_decide("tests/commands.txt", policies=["policies/"]) == snapshot

`policies` are added to the shipped packs (so the snapshot pins "the shipped packs plus ours");
`shipped=False` leaves the shipped packs out. The fixture evaluates every command of a corpus file
(one command per line; blank lines and lines starting with `#` are skipped; a `.jsonl` file holds
`{"command": ...}` objects) and returns a stable, readable list of `{command, verdict, rewrite,
exit, rules}` dicts.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest


def read_corpus(path: str | Path) -> list[str]:
    """The commands of a corpus file (text: one per line; `.jsonl`: objects with a `command`)."""
    text = Path(path).read_text(encoding="utf-8")
    if str(path).endswith(".jsonl"):
        return [json.loads(line)["command"] for line in text.splitlines() if line.strip()]
    lines = text.splitlines()
    return [line for line in lines if line.strip() and not line.lstrip().startswith("#")]


def decide_corpus(
    corpus: str | Path,
    policies: list[str] | None = None,
    backend: str | None = None,
    claude: dict[str, list[str]] | None = None,
    shipped: bool = True,
) -> list[dict[str, object]]:
    """Decide every command of `corpus` under the shipped packs plus `policies` (`shipped=False`:
    `policies` alone; no `policies`: the search path)."""
    from rtk_policy.engine.answers import exit_code
    from rtk_policy.engine.pipeline import load_engine
    from rtk_policy.policy.load import with_shipped

    paths = with_shipped([str(p) for p in policies], shipped) if policies else None
    engine = load_engine(paths, backend, strict=True)
    engine.budget_s = None  # a snapshot is the same on any machine load (engine/budget.py)
    rules = claude or {}
    context = engine.context(
        claude_deny=tuple(rules.get("deny", ())),
        claude_ask=tuple(rules.get("ask", ())),
        claude_allow=tuple(rules.get("allow", ())),
    )
    answers: list[dict[str, object]] = []
    for command in read_corpus(corpus):
        decision = engine.decide(command, context)
        code, _ = exit_code(decision)
        answers.append(
            {
                "command": command,
                "verdict": decision.verdict,
                "rewrite": decision.rewrite,
                "exit": code,
                "rules": list(decision.rule_ids),
            }
        )
    return answers


@pytest.fixture
def rtk_policy_decide() -> Callable[..., list[dict[str, object]]]:
    """Fixture: a function deciding a corpus file's commands, for comparison with a snapshot."""
    return decide_corpus
