"""A shell command an interpreter spawns as a whole string literal is judged as that command
(rule interpreter-delete reads only what the engine could not: `without_literals`): a deletion in
the project is the agent's business, outside it asks, of the root it is denied; a command built at
run time (a concatenation, an f-string) or spawned by a call the reader does not know still asks."""

from __future__ import annotations

import pytest

from rtk_policy.config.load import Config
from rtk_policy.engine.pipeline import Engine
from rtk_policy.policy import load_policy_set
from rtk_policy.policy.load import packs_dir

PROJECT = "/home/dev/project"


@pytest.fixture(scope="module")
def engine() -> Engine:
    """The shipped packs."""
    return Engine(policies=load_policy_set([str(packs_dir())]), config=Config(audit_enabled=False))


def _decision(engine: Engine, command: str):
    return engine.decide(command, engine.context(agent="claude", cwd=PROJECT, project_dir=PROJECT))


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("python3 -c 'import os; os.system(\"rm -r build/tmp\")'", "none"),
        ("python3 -c 'import subprocess; subprocess.run(\"rm -r out\", shell=True)'", "none"),
        ("node -e \"require('child_process').execSync('rm -rf dist')\"", "none"),
        ("ruby -e 'system(\"rm -rf tmp/cache\")'", "none"),
        ("perl -e 'system(\"rm -rf blib\")'", "none"),
        ("php -r 'shell_exec(\"rm -rf var/cache\");'", "none"),
        ("python3 -c 'import os; os.system(\"rm -r ../elsewhere\")'", "ask"),
        ("python3 -c 'import os; os.system(\"rm -r /opt/app/old\")'", "ask"),
        ("python3 -c 'import os; os.system(\"rm -rf /\")'", "deny"),
        ("python3 -c 'import os; os.system(\"rm -rf ~\")'", "deny"),
        ("node -e \"require('child_process').execSync('rm -rf /')\"", "deny"),
        # what the engine cannot read keeps asking
        ("python3 -c 'import os; os.system(\"rm -rf \" + target)'", "ask"),
        ("python3 -c 'import os; os.system(f\"rm -rf {target}\")'", "ask"),
        ("python3 -c 'import os; os.system(\"ls\"); os.execvp(\"rm\", [\"rm\", \"-r\", \"x\"])'",
         "ask"),
        ("python3 -c 'import os; os.system(\"rm a\"); os.spawnlp(0, \"rm\", \"rm\", \"-r\", b)'",
         "ask"),
        ("python3 -c 'import os; os.remove(\"db.sqlite3\")'", "ask"),
    ],
)  # fmt: skip
def test_literal_spawns_are_judged_as_their_command(engine, command, expected):
    """The verdict is the inner command's when it is a literal; otherwise the ask stays."""
    assert _decision(engine, command).verdict == expected


def test_a_literal_deletion_in_the_project_is_no_interpreter_delete(engine):
    """The inner `rm` is judged (no opinion), and interpreter-delete does not fire."""
    decision = _decision(engine, "python3 -c 'import os; os.system(\"rm -r path/to/proof\")'")
    assert "interpreter-delete" not in decision.rule_ids and decision.verdict == "none"
