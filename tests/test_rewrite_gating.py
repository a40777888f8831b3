"""Rewrites that help and never get in the way (issue 17, points 1–3), through the real console
script started as Claude Code starts a hook: a child of a (fake) Claude Code process whose command
line carries the rules a hook cannot read from any file (`--disallowedTools`, `--settings`).

- RTK absent: no rewrite, the same decision (`rewrite = "auto"`);
- RTK present: a read-only command is rewritten with an allow (it ran unasked, it still does);
- a command no rule approved is left as typed (Claude Code would match its rules on `rtk …`);
- a command-line deny rule is read and denies the command as typed;
- `rewrite_unapproved = true` is RTK's looser behaviour, from the user's config only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fakes import under_claude

from rtk_policy.engine import rtk_probe

PYTHON = sys.executable


@pytest.fixture()
def box(tmp_path: Path) -> dict[str, object]:
    """Private folders, a project, and the environment of a hook process (RTK on PATH)."""
    env = {
        k: v for k, v in os.environ.items() if k not in ("CLAUDE_PROJECT_DIR", "RTK_POLICY_FAIL")
    }
    for name in ("HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME"):
        folder = tmp_path / name.lower()
        folder.mkdir()
        env[name] = str(folder)
    env["CLAUDE_CONFIG_DIR"] = str(tmp_path / "home" / ".claude")
    env["CLAUDE_CODE_MANAGED_SETTINGS_PATH"] = str(tmp_path / "managed")
    project = tmp_path / "project"
    project.mkdir()
    return {"env": env, "project": project, "tmp": tmp_path}


def hook(box: dict, command: str, *claude_options: str, under: bool = True, env=None) -> dict:
    """The Claude Code hook's answer for `command` (parsed JSON; {} when silent)."""
    payload = {
        "session_id": "s",
        "cwd": str(box["project"]),
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "d"},
        "tool_use_id": "t",
        "permission_mode": "default",
    }
    argv = [PYTHON, "-m", "rtk_policy", "hook", "claude"]
    if under:
        argv = under_claude(box["tmp"] / "claude-bin", argv, *claude_options)
    done = subprocess.run(
        argv,
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=env or box["env"],
        cwd=str(box["project"]),
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout.decode()
    return json.loads(out).get("hookSpecificOutput", {}) if out else {}


def without_rtk(env: dict[str, str]) -> dict[str, str]:
    """`env` with every PATH folder that holds an `rtk` left out."""
    folders = env["PATH"].split(os.pathsep)
    kept = [f for f in folders if not os.path.exists(os.path.join(f, "rtk"))]
    return {**env, "PATH": os.pathsep.join(kept)}


def user_config(box: dict, text: str) -> None:
    folder = Path(box["env"]["XDG_CONFIG_HOME"]) / "rtk-policy"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text(text, encoding="utf-8")


def test_read_only_commands_are_rewritten_with_an_allow(box):
    for command, rewritten in (("git status", "rtk git status"), ("ls -la", "rtk ls -la")):
        answer = hook(box, command)
        assert answer["permissionDecision"] == "allow", command
        assert answer["updatedInput"] == {"command": rewritten, "description": "d"}


def test_without_rtk_nothing_is_rewritten_and_the_decision_stays(box):
    env = without_rtk(box["env"])
    assert hook(box, "git status", env=env) == {
        "hookEventName": "PreToolUse",
        "permissionDecision": "allow",
        "permissionDecisionReason": "Claude Code runs this read-only command without asking",
    }
    assert hook(box, "cargo build", env=env) == {}
    assert hook(box, "rm -rf /", env=env)["permissionDecision"] == "deny"


def test_rewrite_never_keeps_the_decisions(box):
    user_config(box, 'rewrite = "never"\n')
    answer = hook(box, "git log -3")
    assert answer["permissionDecision"] == "allow" and "updatedInput" not in answer


def test_an_unapproved_command_is_left_as_typed(box):
    """`git push` is not read-only and no rule allows it: Claude Code's own rules decide it as
    typed (a rewrite to `rtk git push` would slip past a deny rule on `git push`)."""
    assert hook(box, "git push origin main") == {}
    assert hook(box, "cargo build") == {}


def test_a_command_line_deny_rule_is_read_and_denies(box):
    answer = hook(box, "git log -3", "--disallowedTools", "Bash(git log:*) Edit")
    assert answer["permissionDecision"] == "deny"
    assert "Bash(git log:*)" in answer["permissionDecisionReason"]
    answer = hook(box, "git push origin main", "--disallowed-tools=Bash(git push:*)")
    assert answer["permissionDecision"] == "deny"


def test_a_settings_flag_is_read_inline_and_from_a_file(box):
    inline = json.dumps({"permissions": {"ask": ["Bash(git status)"]}})
    answer = hook(box, "git status", "--settings", inline)
    assert answer["permissionDecision"] == "ask" and "updatedInput" not in answer
    settings = box["tmp"] / "cli-settings.json"
    settings.write_text(json.dumps({"permissions": {"deny": ["Bash(ls:*)"]}}), encoding="utf-8")
    assert hook(box, "ls -la", "--settings", str(settings))["permissionDecision"] == "deny"


def test_a_command_line_allow_rule_rewrites_with_an_allow(box):
    answer = hook(box, "cargo build", "--allowedTools", "Bash(cargo build:*)")
    assert answer["permissionDecision"] == "allow"
    assert answer["updatedInput"]["command"] == "rtk cargo build"


def test_without_claude_code_above_the_hook_no_rewrite(box):
    """The command line cannot be read: an allow is still given, the rewrite is not."""
    answer = hook(box, "git status", under=False)
    assert answer["permissionDecision"] == "allow" and "updatedInput" not in answer


def test_managed_settings_and_their_drop_ins_are_read(box):
    managed = box["tmp"] / "managed"
    (managed / "managed-settings.d").mkdir(parents=True)
    (managed / "managed-settings.json").write_text(
        json.dumps({"permissions": {"deny": ["Bash(git log:*)"]}}), encoding="utf-8"
    )
    (managed / "managed-settings.d" / "10-team.json").write_text(
        json.dumps({"permissions": {"ask": ["Bash(ls:*)"]}}), encoding="utf-8"
    )
    assert hook(box, "git log -3")["permissionDecision"] == "deny"
    answer = hook(box, "ls")
    assert answer["permissionDecision"] == "ask" and "updatedInput" not in answer


def test_rewrite_unapproved_is_rtks_looser_behaviour_from_the_user_config_only(box):
    project_config = box["project"] / ".rtk-policy"
    project_config.mkdir()
    (project_config / "config.toml").write_text("rewrite_unapproved = true\n", encoding="utf-8")
    assert hook(box, "cargo build") == {}  # a project cannot loosen
    user_config(box, "rewrite_unapproved = true\n")
    answer = hook(box, "cargo build")
    assert "permissionDecision" not in answer
    assert answer["updatedInput"]["command"] == "rtk cargo build"
    answer = hook(box, "git status", under=False)
    assert answer["permissionDecision"] == "allow"
    assert answer["updatedInput"]["command"] == "rtk git status"


def test_an_asked_command_is_never_rewritten(box):
    user_config(box, "rewrite_unapproved = true\n")
    assert (
        rewrite_of(box, "git push --force-with-lease origin main")
        == "rtk git push --force-with-lease origin main"
    )
    answer = hook(box, "git push --force-with-lease origin main")
    assert answer["permissionDecision"] == "ask" and "updatedInput" not in answer


# -- the RTK probe ---------------------------------------------------------------------------------


def stub_rtk(folder: Path, version: str, log: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    stub = folder / "rtk"
    stub.write_text(f'#!/bin/sh\necho probed >> "{log}"\necho "{version}"\n', encoding="utf-8")
    stub.chmod(0o755)
    return stub


def test_the_probe_runs_once_per_binary_and_again_when_it_changes(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    log = tmp_path / "probes.log"
    stub = stub_rtk(tmp_path / "bin", "rtk 0.31.2", log)
    path = str(tmp_path / "bin")
    first = rtk_probe.rtk_status(path)
    assert (first.path, first.version, first.usable) == (str(stub), "rtk 0.31.2", True)
    assert rtk_probe.rtk_status(path) == first
    assert log.read_text().count("probed") == 1
    cached = json.loads((tmp_path / "cache" / "rtk-policy" / rtk_probe.PROBE_FILE).read_text())
    assert cached["version"] == "rtk 0.31.2"  # data, not code
    stub_rtk(tmp_path / "bin", "rtk 0.16.0", log)  # an older one installed over it
    os.utime(stub, ns=(1, 1))
    old = rtk_probe.rtk_status(path)
    assert old.version == "rtk 0.16.0" and not old.usable and "older than" in old.why
    assert log.read_text().count("probed") == 2


def test_no_rtk_and_a_broken_rtk_are_not_usable(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert not rtk_probe.rtk_status(str(tmp_path / "empty")).usable
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "rtk").write_text("#!/bin/sh\nexit 3\n", encoding="utf-8")
    (broken / "rtk").chmod(0o755)
    status = rtk_probe.rtk_status(str(broken))
    assert status.path and not status.usable and "no version" in status.why
    (broken / "rtk").chmod(0o644)  # not executable: not found at all
    assert rtk_probe.rtk_status(str(broken)).path == ""


@pytest.mark.parametrize(
    ("text", "expected"),
    [("rtk 0.31.2", (0, 31, 2)), ("rtk v1.2.3-beta", (1, 2, 3)), ("rtk", None), ("", None)],
)
def test_parse_version(text, expected):
    assert rtk_probe.parse_version(text) == expected


def rewrite_of(box: dict, command: str) -> str:
    """What `rtk-policy rewrite` prints for `command` (the rewrite the policies selected)."""
    done = subprocess.run(
        [PYTHON, "-m", "rtk_policy", "rewrite", "--", command],
        capture_output=True,
        env=box["env"],
        cwd=str(box["project"]),
        timeout=60,
        check=False,
    )
    return done.stdout.decode()


def test_doctor_says_whether_rtk_is_there_and_what_that_means(tmp_path, monkeypatch):
    import io

    from rtk_policy.commands import doctor

    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    doctor.run(stdout=out, stderr=io.StringIO())
    assert "note: RTK found: " in out.getvalue() and "is RTK 0.40.0;" in out.getvalue()
    monkeypatch.setenv("PATH", without_rtk(dict(os.environ))["PATH"])
    out = io.StringIO()
    doctor.run(stdout=out, stderr=io.StringIO())
    assert "RTK not usable (no `rtk` executable on PATH)" in out.getvalue()
    assert "decisions are unchanged" in out.getvalue()
