"""Reading Claude Code's Bash permission rules from the four settings files."""

from __future__ import annotations

import io
import json
import os

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


def test_the_users_own_claude_folder_makes_no_project_of_home(home, tmp_path, monkeypatch):
    """`~/.claude` is the user's config, not a project marker: from a git repo under the home
    folder the project is the repo; from a folder with neither, the folder itself."""
    from rtk_policy.settings.claude_rules import agent_project_dir

    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    repo = home / "src" / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "sub").mkdir()
    assert claude_project_dir(repo / "sub") == str(repo.resolve())
    plain = home / "notes"
    plain.mkdir()
    assert claude_project_dir(plain) is None
    assert agent_project_dir("claude", str(plain)) == str(plain)
    assert agent_project_dir("codex", str(repo / "sub")) == str(repo.resolve())
    assert agent_project_dir("claude", "") == ""
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(plain))
    assert agent_project_dir("claude", str(repo)) == str(plain)


def test_a_dotdot_escape_asks_with_no_project_dir_given(home, monkeypatch):
    """`rewrite` from a git repo under the home folder, no $CLAUDE_PROJECT_DIR: `cd ..` leaves the
    project, so the deletion there is asked; inside it stays the agent's business."""
    from rtk_policy.config.load import Config
    from rtk_policy.engine.answers import request_context
    from rtk_policy.engine.pipeline import Engine
    from rtk_policy.policy import load_policy_set
    from rtk_policy.policy.load import packs_dir

    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    repo = home / "src" / "repo"
    (repo / ".git").mkdir(parents=True)
    baseline = os.path.join(packs_dir() or "policies", "security-baseline.yaml")
    engine = Engine(policies=load_policy_set([baseline]), config=Config(audit_enabled=False))
    context = request_context(engine, str(repo))
    assert context.project_dir == str(repo.resolve())
    for text in ("cd .. && rm -rf build", "rm -rf ../other"):
        assert engine.decide(text, context).verdict == "ask", text
    assert engine.decide("rm -rf build", context).verdict == "none"


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
