"""Reading Claude Code's Bash permission rules from the four settings files."""

from __future__ import annotations

import io
import json

import pytest

from rtk_policy.settings.claude_rules import bash_pattern, claude_project_dir, load_claude_rules


@pytest.fixture()
def home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    return home


def write(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))


def rules(deny=(), ask=(), allow=()):
    return {"permissions": {"deny": list(deny), "ask": list(ask), "allow": list(allow)}}


def test_four_files_are_merged(home, tmp_path):
    project = tmp_path / "work" / "app"
    write(project / ".claude" / "settings.json", rules(deny=["Bash(git push --force)"]))
    write(project / ".claude" / "settings.local.json", rules(ask=["Bash(npm publish)"]))
    write(home / ".claude" / "settings.json", rules(allow=["Bash(git status)", "Read(**)"]))
    write(
        home / ".claude" / "settings.local.json",
        rules(deny=["Bash(rm:*)", "Bash(git push --force)"]),
    )
    deny, ask, allow = load_claude_rules(project)
    assert deny == ("git push --force", "rm:*")
    assert ask == ("npm publish",)
    assert allow == ("git status",)


def test_project_is_found_from_a_subfolder_or_by_git(home, tmp_path):
    project = tmp_path / "p"
    (project / "a" / "b").mkdir(parents=True)
    write(project / ".claude" / "settings.json", rules(deny=["Bash(curl *)"]))
    assert load_claude_rules(project / "a" / "b")[0] == ("curl *",)
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "sub").mkdir()
    assert claude_project_dir(repo / "sub") == str(repo.resolve())


def test_claude_config_dir_is_honoured(home, tmp_path, monkeypatch):
    other = tmp_path / "cfg"
    write(other / "settings.json", rules(ask=["Bash(docker *)"]))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(other))
    assert load_claude_rules(tmp_path)[1] == ("docker *",)


def test_malformed_file_is_skipped_with_a_warning(home, tmp_path):
    write(home / ".claude" / "settings.json", "{not json")
    write(home / ".claude" / "settings.local.json", rules(deny=["Bash(rm -rf /)"]))
    err = io.StringIO()
    assert load_claude_rules(tmp_path, err)[0] == ("rm -rf /",)
    assert "malformed" in err.getvalue() and err.getvalue().count("\n") == 1


def test_wrong_types_are_ignored(home, tmp_path):
    write(
        home / ".claude" / "settings.json", {"permissions": {"deny": "Bash(x)", "ask": [1, None]}}
    )
    assert load_claude_rules(tmp_path) == ((), (), ())


@pytest.mark.parametrize(
    ("rule", "pattern"),
    [
        ("Bash(git push --force)", "git push --force"),
        ("Bash(npm run test:*)", "npm run test:*"),
        ("Bash(echo (x))", "echo (x)"),
        ("Bash()", ""),
        ("Read(.env)", None),
        ("Bash", None),
        (3, None),
    ],
)
def test_bash_pattern(rule, pattern):
    assert bash_pattern(rule) == pattern
