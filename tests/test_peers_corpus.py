"""The labelled evidence corpus of issue 18 (tests/corpus/peers.jsonl): our own commands, in the
shapes the peers' public suites (dcg, cc-safety-net, Dippy) test, each with the verdict the shipped
packs must give and the class of the issue it stands for.

`deny` must be denied, `ask` asked or denied, `safe` neither asked nor denied. The agent works in
a project folder (`cwd` = `project_dir`), as under Claude Code. The opt-in service pack
(`policies/services.yaml`, `enabled_packs = ["services"]`) judges the `services` rows; the everyday
`safe` rows hold with it on too, and without it the service commands stay unjudged.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from rtk_policy.config.load import Config
from rtk_policy.engine.pipeline import Engine
from rtk_policy.policy import load_policy_set
from rtk_policy.util import record

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "corpus" / "peers.jsonl"
SHIPPED = ROOT / "policies"
PROJECT = "/home/dev/project"
ACCEPTED = {"deny": {"deny"}, "ask": {"ask", "deny"}, "safe": {"none", "allow"}}
ROWS = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line]


@pytest.fixture(scope="module")
def engines() -> dict[str, Engine]:
    """The shipped packs as installed, and with the opt-in service pack enabled. The guard-self
    pack's rules are off: they ask about any path the command leaves unknown (it could be the
    guard's own folder), a question of their own that this corpus does not measure."""
    packs = load_policy_set([str(SHIPPED)])
    guard = tuple(rule.id for rule in packs.rules if rule.policy == "guard-self")
    assert guard, "the guard-self pack is shipped"
    config = Config(audit_enabled=False, disabled_rules=guard)
    return {
        "shipped": Engine(policies=packs, config=config),
        "services": Engine(policies=packs, config=record.evolve(config, enabled_packs=("services",))),
    }


def test_corpus_is_well_formed():
    assert len(ROWS) >= 400
    assert all(set(r) == {"command", "expect", "class"} and r["expect"] in ACCEPTED for r in ROWS)
    assert len({r["command"] for r in ROWS}) == len(ROWS)
    classes = Counter(r["class"] for r in ROWS)
    assert set(classes) == {"runners", "values", "deletions", "git", "interpreters",
                            "false-positives", "services", "safe"}  # fmt: skip
    assert min(classes.values()) >= 20, classes


def _verdict(engine: Engine, command: str) -> str:
    context = engine.context(agent="claude", cwd=PROJECT, project_dir=PROJECT)
    return engine.decide(command, context).verdict


@pytest.mark.parametrize(
    "row", [pytest.param(r, id=f"{i}-{r['class']}-{r['expect']}") for i, r in enumerate(ROWS)]
)
def test_row(engines, row):
    which = "services" if row["class"] == "services" else "shipped"
    verdict = _verdict(engines[which], row["command"])
    assert verdict in ACCEPTED[row["expect"]], (row["command"], verdict)


def test_the_service_pack_asks_nothing_of_the_everyday_commands(engines):
    asked = [r["command"] for r in ROWS if r["class"] == "safe"
             and _verdict(engines["services"], r["command"]) not in ACCEPTED["safe"]]  # fmt: skip
    assert asked == []


def test_the_service_pack_judges_nothing_unless_enabled(engines):
    rows = [r["command"] for r in ROWS if r["class"] == "services" and r["expect"] == "ask"]
    assert [c for c in rows if _verdict(engines["services"], c) == "ask"] == rows
    quiet = [c for c in rows if _verdict(engines["shipped"], c) == "none"]
    assert len(quiet) >= len(rows) - 2  # two are the baseline's own (dynamodb delete, .drop())


def test_enabled_packs_is_read_from_config_toml(tmp_path):
    from rtk_policy.config.load import load_config

    path = tmp_path / "config.toml"
    path.write_text('enabled_packs = ["services"]\n', encoding="utf-8")
    assert load_config(str(path)).enabled_packs == ("services",)
