"""The trust flow through the real console script, as a user lives it: a project's loosening is
ignored until `rtk-policy trust`, applies after it, and is ignored again (the answer says why) as
soon as any of its files changes; `--revoke` and `--list`; the record file itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rtk_policy.config import paths, trust
from rtk_policy.config.layers import CHANGED, PROJECT, TRUSTED, UNTRUSTED, find_layers, read_layer

LOOSENING = 'disabled_rules = ["git-push-force"]\n'


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / ".rtk-policy" / "policies").mkdir(parents=True)
    (folder / ".rtk-policy" / "config.toml").write_text(LOOSENING, encoding="utf-8")
    (folder / "src").mkdir()
    return folder


def cli(*args: str, cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rtk_policy", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=dict(os.environ),
        timeout=120,
    )


def hook(command: str, cwd: Path) -> dict:
    payload = {"tool_name": "Bash", "tool_input": {"command": command}, "cwd": str(cwd)}
    done = cli("hook", "claude", cwd=cwd, stdin=json.dumps(payload))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else {}


def verdict(answer: dict) -> str:
    return answer.get("hookSpecificOutput", {}).get("permissionDecision", "none")


def test_trust_then_edit_then_trust_again(project):
    src = project / "src"
    before = hook("git push --force", src)
    assert verdict(before) == "deny"
    assert "is not trusted" in before["systemMessage"]

    done = cli("trust", cwd=src)
    assert done.returncode == 0, done.stderr
    assert f"trusted {project.resolve()}/.rtk-policy" in done.stdout
    trusted = hook("git push --force", src)
    assert verdict(trusted) == "none" and "systemMessage" not in trusted

    config = project / ".rtk-policy" / "config.toml"
    config.write_text(LOOSENING + "# an edit the user has not seen\n")
    changed = hook("git push --force", src)
    assert verdict(changed) == "deny"
    assert "changed since you trusted them" in changed["systemMessage"]
    assert "rtk-policy trust" in changed["systemMessage"]

    assert cli("trust", str(project), cwd=src).returncode == 0
    assert verdict(hook("git push --force", src)) == "none"


def test_a_new_policy_file_breaks_the_trust(project):
    assert cli("trust", cwd=project).returncode == 0
    assert verdict(hook("git push --force", project)) == "none"
    (project / ".rtk-policy" / "policies" / "new.yaml").write_text(
        "name: new\nrules:\n  - {id: new-allow, decision: allow, match: 'true'}\n"
    )
    answer = hook("git push --force", project)
    assert verdict(answer) == "deny" and "changed since you trusted" in answer["systemMessage"]


def test_revoke_and_list(project):
    assert cli("trust", "--list", cwd=project).stdout == "no trusted projects\n"
    assert cli("trust", cwd=project).returncode == 0
    listed = cli("trust", "--list", cwd=project).stdout
    assert listed.startswith("trusted ") and f"{project.resolve()}/.rtk-policy" in listed
    (project / ".rtk-policy" / "config.toml").write_text("")
    assert cli("trust", "--list", cwd=project).stdout.startswith("changed ")
    done = cli("trust", "--revoke", cwd=project)
    assert done.returncode == 0 and "only tightens again" in done.stdout
    assert cli("trust", "--revoke", cwd=project).returncode == 1
    assert cli("trust", "--list", cwd=project).stdout == "no trusted projects\n"


def test_trust_needs_a_project_layer(tmp_path):
    done = cli("trust", cwd=tmp_path)
    assert done.returncode == 1 and "no .rtk-policy/ folder" in done.stderr
    assert not Path(paths.trust_file()).exists()


def test_the_record_is_private_and_atomic(project):
    layer = read_layer(PROJECT, str(project.resolve() / ".rtk-policy"))
    trust.trust_layer(layer)
    record_file = Path(paths.trust_file())
    assert record_file.stat().st_mode & 0o777 == 0o600
    assert list(record_file.parent.glob(".trust-*")) == []  # no temp file left behind
    entry = json.loads(record_file.read_text())["layers"][layer.folder]
    assert entry["digest"] == trust.layer_digest(layer)
    assert entry["files"] == ["config.toml"]


def test_the_digest_sees_every_change(project):
    folder = project.resolve() / ".rtk-policy"
    trust.trust_layer(read_layer(PROJECT, str(folder)))

    def status() -> str:
        return [layer.status for layer in find_layers(str(project)) if layer.kind == PROJECT][0]

    assert status() == TRUSTED
    config = folder / "config.toml"
    config.write_text(LOOSENING.replace("force", "forcf"))  # same size, one byte changed
    assert status() == CHANGED
    config.write_text(LOOSENING)
    assert status() == TRUSTED
    (folder / "policies" / "x.yml").write_text("name: x\nrules: []\n")
    assert status() == CHANGED
    (folder / "policies" / "x.yml").rename(folder / "policies" / "y.yml")
    assert status() == CHANGED
    (folder / "policies" / "y.yml").unlink()
    assert status() == TRUSTED
    (folder / "policies" / "z_test.yaml").write_text("tests: []\n")  # never loaded: no change
    assert status() == TRUSTED


def test_a_broken_trust_file_trusts_nothing(project):
    trust.trust_layer(read_layer(PROJECT, str(project.resolve() / ".rtk-policy")))
    Path(paths.trust_file()).write_text("{not json")
    statuses = [layer.status for layer in find_layers(str(project)) if layer.kind == PROJECT]
    assert statuses == [UNTRUSTED]
    assert verdict(hook("git push --force", project)) == "deny"


def test_trust_of_one_folder_does_not_cover_a_nested_one(project):
    assert cli("trust", cwd=project).returncode == 0
    nested = project / "src" / ".rtk-policy"
    nested.mkdir()
    (nested / "config.toml").write_text('disabled_rules = ["rm-recursive-root"]\n')
    assert verdict(hook("git push --force", project / "src")) == "none"  # the root's trust holds
    assert verdict(hook("rm -rf /", project / "src")) == "deny"  # the nested one is untrusted


def test_the_resident_engine_reloads_when_trust_changes(project):
    from rtk_policy.serve.resident import Resident, watched_paths

    assert paths.trust_file() in watched_paths(str(project))
    resident = Resident()
    engine = resident.engine_for(str(project))
    context = engine.context(agent="claude")
    assert engine.decide("git push --force", context).verdict == "deny"
    trust.trust_layer(read_layer(PROJECT, str(project.resolve() / ".rtk-policy")))
    import time

    time.sleep(0.05)  # past the recheck interval
    reloaded = resident.engine_for(str(project))
    assert reloaded is not engine
    assert reloaded.decide("git push --force", reloaded.context(agent="claude")).verdict == "none"
