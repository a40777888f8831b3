"""The shipped pytest plugin: used here on our own packs, and in a fresh project outside this repo."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COMMANDS = "git status\nsudo rm -rf /\n# a comment line is skipped\ncargo test 2>&1 | tail -5\n"

TEAM_POLICY = textwrap.dedent("""\
    name: team
    kind: permission
    rules:
      - id: no-prod
        decision: deny
        match: segment.args.exists(a, a == "prod")
        message: '"not prod"'
    """)


def test_fixture_decides_a_corpus_file(rtk_policy_decide, tmp_path, repo_snapshot):
    corpus = tmp_path / "commands.txt"
    corpus.write_text(COMMANDS, encoding="utf-8")
    answers = rtk_policy_decide(corpus, policies=[str(REPO / "policies")])
    assert [a["command"] for a in answers] == ["git status", "sudo rm -rf /", "cargo test 2>&1 | tail -5"]
    assert answers[1]["verdict"] == "deny" and answers[1]["exit"] == 2
    assert answers == repo_snapshot


def test_fixture_adds_a_team_pack_to_the_shipped_packs(rtk_policy_decide, tmp_path):
    team = tmp_path / "team.yaml"
    team.write_text(TEAM_POLICY, encoding="utf-8")
    corpus = tmp_path / "commands.txt"
    corpus.write_text("rm -rf /\nkubectl --context prod get pods\n", encoding="utf-8")
    shipped_and_team = rtk_policy_decide(corpus, policies=[str(team)])
    assert [a["verdict"] for a in shipped_and_team] == ["deny", "deny"]
    team_only = rtk_policy_decide(corpus, policies=[str(team)], shipped=False)
    assert [a["verdict"] for a in team_only] == ["none", "deny"]


def _run_pytest(project: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=project, env=env, capture_output=True, text=True, timeout=300,
    )


def test_plugin_pins_decisions_in_a_fresh_project(tmp_path):
    project = tmp_path / "team-repo"
    (project / "policies").mkdir(parents=True)
    (project / "tests").mkdir()
    (project / "policies" / "team.yaml").write_text(textwrap.dedent("""\
        name: team
        kind: permission
        rules:
          - id: no-prod
            decision: deny
            programs: [kubectl]
            match: segment.args.exists(a, a.contains("prod"))
            message: '"not against production"'
        """), encoding="utf-8")
    (project / "tests" / "commands.txt").write_text(
        "kubectl --context prod delete pod x\nkubectl get pods\n", encoding="utf-8")
    (project / "tests" / "test_policy.py").write_text(textwrap.dedent("""\
        def test_decisions(rtk_policy_decide, snapshot):
            assert rtk_policy_decide("tests/commands.txt", policies=["policies/"]) == snapshot
        """), encoding="utf-8")
    first = _run_pytest(project, "--snapshot-update")
    assert first.returncode == 0, first.stdout + first.stderr
    assert _run_pytest(project).returncode == 0
    policy = project / "policies" / "team.yaml"
    policy.write_text(policy.read_text().replace("decision: deny", "decision: ask"), encoding="utf-8")
    changed = _run_pytest(project)
    assert changed.returncode == 1 and "test_decisions" in changed.stdout


def test_a_copy_of_the_shipped_packs_is_the_same_policy(tmp_path):
    """A team that vendors the shipped packs (or runs from a checkout beside an installed wheel)
    gives a copy of the packs' files: byte-identical files are left out, not loaded twice as a
    clash of names; an edited copy stays and is judged."""
    import shutil

    from rtk_policy.engine.pipeline import load_engine
    from rtk_policy.policy.load import packs_dir, with_shipped

    vendored = tmp_path / "vendored"
    shutil.copytree(packs_dir(), vendored)
    team = vendored / "team.yaml"
    team.write_text(TEAM_POLICY, encoding="utf-8")
    paths = with_shipped([str(vendored)])
    assert paths[0] == packs_dir() and paths[1:] == [str(team)]
    load_engine(paths, strict=True)  # no duplicate policy names

    edited = vendored / "security-baseline.yaml"
    edited.write_text(edited.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    assert str(edited) in with_shipped([str(vendored)])
