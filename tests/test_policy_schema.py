"""The JSON Schemas shipped for editors (`policies/policy.schema.json`, `policy-test.schema.json`):
every shipped pack and test file validates, the schemas name exactly the keys the loaders accept,
and a typo is flagged as an editor would show it."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from rtk_policy.policy import loader
from rtk_policy.policytest import files as test_files

PACKS = Path(__file__).resolve().parents[1] / "policies"
POLICY_SCHEMA = json.loads((PACKS / "policy.schema.json").read_text(encoding="utf-8"))
TEST_SCHEMA = json.loads((PACKS / "policy-test.schema.json").read_text(encoding="utf-8"))


def _packs(tests: bool) -> list[Path]:
    return sorted(p for p in PACKS.glob("*.yaml") if p.stem.endswith("_test") == tests)


@pytest.mark.parametrize("path", _packs(tests=False), ids=lambda p: p.name)
def test_every_shipped_pack_validates(path: Path) -> None:
    jsonschema.validate(yaml.safe_load(path.read_text(encoding="utf-8")), POLICY_SCHEMA)


@pytest.mark.parametrize("path", _packs(tests=True), ids=lambda p: p.name)
def test_every_shipped_test_file_validates(path: Path) -> None:
    jsonschema.validate(yaml.safe_load(path.read_text(encoding="utf-8")), TEST_SCHEMA)


def test_the_schemas_name_the_keys_the_loaders_accept() -> None:
    defs = POLICY_SCHEMA["$defs"]
    assert set(POLICY_SCHEMA["properties"]) == loader._FILE_KEYS
    assert set(defs["rule"]["properties"]) == loader._RULE_KEYS
    assert set(defs["example"]["properties"]) == loader._EXAMPLE_KEYS
    case = TEST_SCHEMA["$defs"]["case"]["properties"]
    assert set(case) == set(test_files._CASE_KEYS)
    assert set(case["expect"]["properties"]) == set(test_files._EXPECT_KEYS)
    assert set(case["context"]["properties"]) == set(test_files.CONTEXT_FIELDS)
    assert set(case["config"]["properties"]) == set(test_files.CONFIG_FIELDS)


def test_a_typo_is_flagged() -> None:
    policy = {"name": "team", "kind": "permission",
              "rules": [{"id": "x", "decision": "deny", "mach": "true"}]}
    errors = list(jsonschema.Draft202012Validator(POLICY_SCHEMA).iter_errors(policy))
    messages = " ".join(error.message for error in errors)
    assert "'match' is a required property" in messages and "'mach'" in messages
