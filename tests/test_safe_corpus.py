"""Our own corpus of safe commands (tests/corpus/safe.jsonl), of the kinds the peers' public
suites (dcg, cc-safety-net, Dippy) label safe: read-only git, `--help` and `--dry-run` forms,
deletions in the project and the temp folders, `find` without a deletion, `sed -n`, redirections,
text that only mentions a dangerous command, wrappers, interpreters that delete nothing.

`safe` rows must be neither asked nor denied with the shipped packs as installed, guard-self
included; `ask` rows are the deliberate asks on shapes some peer lets through, each with its
reason. The agent works in a project folder outside the temp folders, with its home and runtime
folder outside them too, as on a user's machine. `benchmarks/safe_asks.py` measures the same
rows (and the peers' own suites) through the installed `rewrite --batch` and `hook claude`.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from conftest import BARE_MKTEMP, MKTEMP_VERDICT, whole_tmp_verdicts

from rtk_policy.config.load import Config
from rtk_policy.engine.pipeline import Engine
from rtk_policy.policy import guarded, load_policy_set
from rtk_policy.policy.load import packs_dir
from rtk_policy.util import record

CORPUS = Path(__file__).resolve().parent / "corpus" / "safe.jsonl"
ROWS = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line]
PROJECT = "/home/dev/project"
ACCEPTED = {"safe": {"none", "allow"}, "ask": {"ask"}}


@pytest.fixture(scope="module")
def engines() -> dict[str, Engine]:
    """The shipped packs (guard-self included), and with the opt-in service pack enabled."""
    config = Config(audit_enabled=False)
    packs = load_policy_set([str(packs_dir())])
    return {
        "shipped": Engine(policies=packs, config=config),
        "services": Engine(
            policies=packs, config=record.evolve(config, enabled_packs=("services",))
        ),
    }


@pytest.fixture(autouse=True)
def user_machine(monkeypatch):
    """A home and a runtime folder outside /tmp, no TMPDIR, no other XDG folders."""
    for name in ("TMPDIR", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME",
                 "CLAUDE_CONFIG_DIR", "CODEX_HOME", "COPILOT_HOME"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", "/home/dev")
    monkeypatch.setenv("XDG_RUNTIME_DIR", "/run/user/1000")
    guarded._tables.clear()
    yield
    guarded._tables.clear()


def verdict(engine: Engine, command: str) -> str:
    """The verdict of `command` run from the project folder."""
    context = engine.context(agent="claude", cwd=PROJECT, project_dir=PROJECT)
    return engine.decide(command, context).verdict


def test_the_corpus_is_well_formed():
    """Unique commands, known labels, every ask with its reason, at least ten of each kind."""
    assert len(ROWS) >= 200
    assert len({r["command"] for r in ROWS}) == len(ROWS)
    assert all(r["expect"] in ACCEPTED for r in ROWS)
    assert all(r.get("why") for r in ROWS if r["expect"] == "ask")
    kinds = Counter(r["kind"] for r in ROWS if r["expect"] == "safe")
    assert len(kinds) >= 10 and min(kinds.values()) >= 9, kinds


@pytest.mark.parametrize("row", ROWS, ids=[f"{i}-{r['kind']}" for i, r in enumerate(ROWS)])
def test_row(engines, row):
    """Each row gets its label's verdict."""
    assert verdict(engines["shipped"], row["command"]) in _accepted(row), row


def _accepted(row: dict) -> set[str]:
    """The verdicts a row's label accepts; deleting all of /tmp, or a `mktemp` folder (some new
    /tmp/tmp.*), asks while rtk-policy itself is installed in such a folder (and may while /tmp holds
    another place named like the guard's: `conftest.whole_tmp_verdicts`,
    `install_in_mktemp_folder`)."""
    if row["command"].startswith("rm -rf /tmp/* "):
        possible = whole_tmp_verdicts()  # globs /tmp: once per row
        if "ask" in possible:
            return possible if possible == {"ask"} else ACCEPTED[row["expect"]] | possible
    if MKTEMP_VERDICT == "ask" and BARE_MKTEMP.search(row["command"]):
        return {"ask"}
    return ACCEPTED[row["expect"]]


def test_the_service_pack_asks_nothing_more_of_them(engines):
    """With the opt-in service pack on, the safe rows stay unasked."""
    safe = [r["command"] for r in ROWS if r["expect"] == "safe" and "ask" not in _accepted(r)]
    assert [c for c in safe if verdict(engines["services"], c) not in ACCEPTED["safe"]] == []


def test_rewrite_batch_and_the_hook_find_the_project_above_a_subfolder(tmp_path):
    """From a project's subfolder, `rewrite --batch`, `rewrite` and `hook claude` all judge a
    deletion against the project (the folder holding .claude/), not the subfolder."""
    import os
    import subprocess
    import sys

    project, home = tmp_path / "project", tmp_path / "home"
    (project / ".claude").mkdir(parents=True)
    (project / "src").mkdir()
    home.mkdir()
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "XDG_RUNTIME_DIR": str(home / "run"),
    }
    run = [sys.executable, "-m", "rtk_policy"]
    lines = "".join(
        json.dumps({"command": c}) + "\n" for c in ("rm -rf ../build", "rm -rf ../../x")
    )
    done = subprocess.run([*run, "rewrite", "--batch", "-"], input=lines, capture_output=True,
                          text=True, cwd=project / "src", env=env, check=True)  # fmt: skip
    verdicts = [json.loads(line)["verdict"] for line in done.stdout.splitlines()]
    assert verdicts == ["none", "ask"], done.stderr
    single = subprocess.run([*run, "rewrite", "--", "rm", "-rf", "../build"], capture_output=True,
                            text=True, cwd=project / "src", env=env, check=False)  # fmt: skip
    assert single.returncode == 1, single.stderr  # no opinion (3 would be an ask)
    payload = {"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": "rm -rf ../../x"},
               "cwd": str(project / "src")}  # fmt: skip
    hook = subprocess.run([*run, "hook", "claude"], input=json.dumps(payload), capture_output=True,
                          text=True, cwd=project / "src", env=env, check=True)  # fmt: skip
    assert json.loads(hook.stdout)["hookSpecificOutput"]["permissionDecision"] == "ask"
