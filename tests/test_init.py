"""`rtk-policy init` / `uninstall` / `doctor` on settings files in a temporary HOME."""

from __future__ import annotations

import io
import json
from types import SimpleNamespace

import pytest

from rtk_policy.commands import doctor, init, uninstall

FOREIGN = (
    '{\n    "model": "opus",\n    "permissions": {"allow": ["Bash(ls:*)"]},\n'
    '    "hooks": {\n        "PreToolUse": [\n            {"matcher": "Edit", "hooks": [{"type": "command",'
    ' "command": "lint.sh"}]}\n        ],\n        "Stop": [{"hooks": [{"type": "command", "command": "bye"}]}]\n'
    '    },\n    "zeta": "ü"\n}\n'
)


@pytest.fixture()
def home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.chdir(tmp_path)
    return home


def cli(module, agent="claude", global_=True):
    out, err = io.StringIO(), io.StringIO()
    code = module.run(SimpleNamespace(agent=agent, global_=global_, serve=False), None, out, err)
    return code, out.getvalue(), err.getvalue()


def our_groups(data, event="PreToolUse"):
    return [
        g
        for g in data["hooks"][event]
        if "rtk_policy" in json.dumps(g) or "rtk-policy" in json.dumps(g)
    ]


def test_init_twice_is_byte_identical_and_keeps_foreign_content(home):
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(FOREIGN, encoding="utf-8")
    assert cli(init)[0] == 0
    first = settings.read_bytes()
    assert cli(init)[0] == 0
    assert settings.read_bytes() == first
    assert (home / ".claude" / "settings.json.bak").read_text(encoding="utf-8") == FOREIGN
    data = json.loads(first)
    original = json.loads(FOREIGN)
    assert list(data) == list(original) and data["zeta"] == "ü" and data["model"] == "opus"
    assert data["hooks"]["Stop"] == original["hooks"]["Stop"]
    assert data["hooks"]["PreToolUse"][0] == original["hooks"]["PreToolUse"][0]
    ours = data["hooks"]["PreToolUse"][1]
    assert ours["matcher"] == "Bash" and ours["hooks"][0]["type"] == "command"
    assert ours["hooks"][0]["command"].endswith(" hook claude")
    assert first.startswith(b'{\n    "model"')  # the file's 4-space indentation is kept


def test_uninstall_restores_the_original_bytes(home):
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(FOREIGN, encoding="utf-8")
    cli(init)
    code, out, _ = cli(uninstall)
    assert code == 0 and "removed" in out
    assert settings.read_text(encoding="utf-8") == FOREIGN


def test_init_creates_and_uninstall_deletes_a_new_file(home):
    settings = home / ".claude" / "settings.json"
    assert cli(init)[0] == 0
    data = json.loads(settings.read_text())
    assert len(our_groups(data)) == 1
    assert not (home / ".claude" / "settings.json.bak").exists()
    assert cli(uninstall)[0] == 0
    assert not settings.exists()


def test_uninstall_keeps_later_user_changes(home):
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(FOREIGN, encoding="utf-8")
    cli(init)
    data = json.loads(settings.read_text())
    data["theme"] = "dark"
    settings.write_text(json.dumps(data, indent=4))
    cli(uninstall)
    after = json.loads(settings.read_text())
    assert after["theme"] == "dark" and not our_groups(after)
    assert after["hooks"]["PreToolUse"] == json.loads(FOREIGN)["hooks"]["PreToolUse"]


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"hooks": []}'])
def test_corrupt_settings_are_left_untouched(home, content):
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(content)
    code, out, err = cli(init)
    assert code == 1 and out == ""
    assert err.startswith("rtk-policy init: error: ") and "untouched" in err
    assert settings.read_text() == content
    assert not (home / ".claude" / "settings.json.bak").exists()


def test_sibling_bash_hook_is_warned_about_and_kept(home):
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    other = {
        "hooks": {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "rtk hook claude"}]}
            ]
        }
    }
    settings.write_text(json.dumps(other, indent=2) + "\n")
    code, _, err = cli(init)
    assert code == 0 and "rtk hook claude" in err and "race" in err
    data = json.loads(settings.read_text())
    assert data["hooks"]["PreToolUse"][0] == other["hooks"]["PreToolUse"][0]


def test_project_install_uses_the_cwd(home, tmp_path):
    assert cli(init, global_=False)[0] == 0
    assert (tmp_path / ".claude" / "settings.json").exists()
    assert not (home / ".claude" / "settings.json").exists()


def test_claude_config_dir_is_honoured(home, tmp_path, monkeypatch):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cc"))
    cli(init)
    assert (tmp_path / "cc" / "settings.json").exists()


@pytest.mark.parametrize(
    ("agent", "relative", "event"),
    [
        ("codex", ".codex/hooks.json", "PreToolUse"),
        ("gemini", ".gemini/settings.json", "BeforeTool"),
        ("cursor", ".cursor/hooks.json", "beforeShellExecution"),
        ("copilot", ".copilot/hooks/rtk-policy.json", "preToolUse"),
    ],
)
def test_other_agents_install_idempotently(home, agent, relative, event):
    path = home / relative
    assert cli(init, agent)[0] == 0
    first = path.read_bytes()
    cli(init, agent)
    assert path.read_bytes() == first
    data = json.loads(first)
    assert f"hook {agent}" in json.dumps(data["hooks"][event])
    cli(uninstall, agent)
    assert not path.exists()


def test_doctor_reports_a_missing_hook(home):
    out = io.StringIO()
    assert doctor.run(SimpleNamespace(), None, out, io.StringIO()) == 1
    assert "PROBLEM an rtk-policy hook is installed" in out.getvalue()


def test_doctor_passes_after_init(home, monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    cli(init)
    out = io.StringIO()
    code = doctor.run(SimpleNamespace(), None, out, io.StringIO())
    text = out.getvalue()
    assert "claude hook installed" in text and "hook command runs" in text
    if "policies do not load" not in text:
        assert code == 0, text
