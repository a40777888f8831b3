"""`rtk-policy init` / `uninstall` for a project, in real git repositories: the per-user file
(`.claude/settings.local.json`), kept out of git; the older `.claude/settings.json` entry moved;
a sub-folder the agent would not read refused."""

from __future__ import annotations

import io
import json
import subprocess
from types import SimpleNamespace

import pytest

from rtk_policy.commands import init, uninstall
from rtk_policy.settings.project import EXCLUDE_MARK
from rtk_policy.settings.targets import thin_client_command


@pytest.fixture()
def project(tmp_path, monkeypatch):
    """A git project (the working folder) and a HOME of its own."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q")
    monkeypatch.chdir(root)
    return root


def git(folder, *words):
    done = subprocess.run(["git", *words], cwd=folder, capture_output=True, text=True, check=True)
    return done.stdout


def untracked(folder):
    """What `git status` would offer to commit."""
    return git(folder, "status", "--porcelain", "--untracked-files=all").splitlines()


def cli(module, agent="claude", **options):
    out, err = io.StringIO(), io.StringIO()
    args = SimpleNamespace(agent=agent, global_=False, in_process=False, **options)
    code = module.run(args, None, out, err)
    return code, out.getvalue(), err.getvalue()


def our_commands(path, event="PreToolUse"):
    data = json.loads(path.read_text())
    groups = data.get("hooks", {}).get(event, [])
    return [
        h["command"] for g in groups for h in g.get("hooks", [g]) if "rtk_policy" in h["command"]
    ]


def test_a_project_install_is_the_per_user_file_kept_out_of_git(project):
    exclude = project / ".git" / "info" / "exclude"
    exclude_before = exclude.read_bytes()
    code, out, _ = cli(init)
    assert code == 0
    local = project / ".claude" / "settings.local.json"
    assert our_commands(local) and not (project / ".claude" / "settings.json").exists()
    assert f"added /.claude/settings.local.json to {exclude}" in out
    assert untracked(project) == []  # git offers nothing to commit
    assert cli(init)[0] == 0  # again: the line is not added twice
    assert exclude.read_text().count(EXCLUDE_MARK) == 1
    code, out, _ = cli(uninstall)
    assert code == 0 and not local.exists()
    assert f"removed /.claude/settings.local.json from {exclude}" in out
    # the backup uninstall keeps holds this machine's paths: it stays out of git, alone
    assert (project / ".claude" / "settings.local.json.bak").is_file()
    block = f"{EXCLUDE_MARK}\n/.claude/settings.local.json.bak\n"
    assert exclude.read_text() == exclude_before.decode() + block
    assert untracked(project) == []


def test_a_file_the_project_already_ignores_is_left_to_its_gitignore(project):
    (project / ".gitignore").write_text(".claude/settings.local.json\n")
    exclude_before = (project / ".git" / "info" / "exclude").read_bytes()
    code, out, _ = cli(init)
    assert code == 0 and "exclude" not in out
    assert (project / ".git" / "info" / "exclude").read_bytes() == exclude_before
    assert untracked(project) == ["?? .gitignore"]


TEAM_SETTINGS = {
    "permissions": {"allow": ["Bash(npm test)"]},
    "hooks": {
        "PreToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "lint"}]}]
    },
}


def older_install(project):
    """`.claude/settings.json` as the team committed it, plus the entries an older init added."""
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(TEAM_SETTINGS, indent=2) + "\n")
    git(project, "add", ".claude/settings.json")
    git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "team settings")
    data = json.loads(settings.read_text())
    handler = {"type": "command", "command": thin_client_command("claude"), "timeout": 30}
    data["hooks"]["PreToolUse"].append({"matcher": "Bash", "hooks": [handler]})
    settings.write_text(json.dumps(data, indent=2) + "\n")
    return settings


def test_init_moves_the_older_entry_out_of_the_committed_file(project):
    settings = older_install(project)
    code, out, _ = cli(init)
    assert code == 0
    assert f"removed the rtk-policy hook from {settings} (where an older init wrote it)" in out
    assert json.loads(settings.read_text()) == TEAM_SETTINGS  # the team's content, as it was
    assert our_commands(project / ".claude" / "settings.local.json")
    assert untracked(project) == []  # settings.json as committed, the local file ignored


def test_uninstall_removes_the_older_entry_and_keeps_the_teams(project):
    settings = older_install(project)
    code, out, _ = cli(uninstall)
    assert code == 0
    assert f"removed the rtk-policy hook from {settings}" in out
    assert json.loads(settings.read_text()) == TEAM_SETTINGS
    assert untracked(project) == []


def test_init_in_a_sub_folder_refuses_and_names_the_root(project, monkeypatch):
    sub = project / "src" / "app"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)
    code, out, err = cli(init)
    assert code == 1 and out == ""
    assert f"sub-folder of the git project {project}" in err
    assert f"Run `rtk-policy init` in {project}" in err
    assert not (sub / ".claude").exists() and not (project / ".claude").exists()
    code, _, err = cli(uninstall)
    assert code == 1 and "Run `rtk-policy uninstall` in" in err


def test_a_sub_folder_with_its_own_agent_folder_is_installed_there(project, monkeypatch):
    sub = project / "packages" / "api"
    (sub / ".claude").mkdir(parents=True)
    monkeypatch.chdir(sub)
    assert cli(init)[0] == 0
    assert our_commands(sub / ".claude" / "settings.local.json")
    assert untracked(project) == []


def test_outside_git_the_working_folder_is_the_project(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    folder = tmp_path / "plain"
    folder.mkdir()
    monkeypatch.chdir(folder)
    code, out, _ = cli(init)
    assert code == 0 and "exclude" not in out
    assert our_commands(folder / ".claude" / "settings.local.json")


def test_a_committed_agent_file_is_warned_about(project):
    settings = project / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"theme": "dark"}\n')
    git(project, "add", ".gemini/settings.json")
    git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "gemini")
    code, out, _ = cli(init, agent="gemini")
    assert code == 0
    assert f"{settings} is committed in git, and the hook entry holds this machine's paths" in out


@pytest.mark.parametrize(
    ("agent", "relative"),
    [("copilot", ".github/hooks/rtk-policy.json"), ("codex", ".codex/hooks.json"),
     ("cursor", ".cursor/hooks.json")],
)  # fmt: skip
def test_a_file_init_creates_for_another_agent_is_kept_out_of_git(project, agent, relative):
    code, out, _ = cli(init, agent=agent)
    assert code == 0 and (project / relative).exists()
    assert f"added /{relative} to" in out
    assert untracked(project) == []
    assert cli(uninstall, agent=agent)[0] == 0
    assert not (project / relative).exists()
    lines = (project / ".git" / "info" / "exclude").read_text().splitlines()
    assert f"/{relative}" not in lines and f"/{relative}.bak" in lines
    assert untracked(project) == []


def test_an_untracked_file_init_did_not_create_is_not_hidden(project):
    settings = project / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"theme": "dark"}\n')
    code, out, _ = cli(init, agent="gemini")
    assert code == 0
    assert "is not ignored by git and holds this machine's paths: do not commit it" in out
    lines = (project / ".git" / "info" / "exclude").read_text().splitlines()
    assert "/.gemini/settings.json" not in lines  # the user's file: theirs to commit or not
    assert "/.gemini/settings.json.bak" in lines  # the backup init wrote
    assert untracked(project) == ["?? .gemini/settings.json"]
