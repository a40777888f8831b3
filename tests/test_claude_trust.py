"""A project's Claude Code allow rules count only where Claude Code itself would honour them: in a
workspace whose trust dialog was accepted (`~/.claude.json`), as Claude Code 2.1.328 decides it
(`rtk_policy/settings/claude_trust.py`). Deny and ask rules of the project always count."""

from __future__ import annotations

import io
import json
import os
import subprocess
from pathlib import Path

import pytest
from fakes import trust_workspace

from rtk_policy.settings.claude_rules import load_claude_rules
from rtk_policy.settings.claude_trust import global_config_path, trust_key, workspace_trusted

RULES = {"allow": ["Bash(touch:*)"], "deny": ["Bash(rm -rf:*)"], "ask": ["Bash(git push:*)"]}


def project_with_rules(folder: Path, name: str = "settings.json") -> Path:
    """`folder` holding `.claude/<name>` with `RULES`."""
    (folder / ".claude").mkdir(parents=True, exist_ok=True)
    (folder / ".claude" / name).write_text(json.dumps({"permissions": RULES}), encoding="utf-8")
    return folder


def git(*args: str, cwd: Path) -> None:
    """Run git quietly in `cwd` (a throwaway identity, no user config)."""
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=cwd,
                   env=env, check=True, capture_output=True)  # fmt: skip


def write_global(data: object) -> None:
    """Claude Code's global config with `data`."""
    Path(global_config_path()).parent.mkdir(parents=True, exist_ok=True)
    Path(global_config_path()).write_text(json.dumps(data), encoding="utf-8")


@pytest.mark.parametrize("name", ["settings.json", "settings.local.json"])
def test_an_untrusted_project_keeps_its_deny_and_ask_but_not_its_allow(tmp_path, name):
    """The attack: an agent writes an allow rule into the project it works in. Claude Code
    drops it until the user trusts the workspace; so does the hook."""
    project = project_with_rules(tmp_path / "p", name)
    assert load_claude_rules(project) == (("rm -rf:*",), ("git push:*",), ())
    trust_workspace(project)
    assert load_claude_rules(project) == (("rm -rf:*",), ("git push:*",), ("touch:*",))


def test_the_users_own_allow_rules_never_depend_on_trust(tmp_path):
    """`$CLAUDE_CONFIG_DIR/settings.json` is not project-scoped."""
    user = Path(os.environ["CLAUDE_CONFIG_DIR"])
    user.mkdir(parents=True, exist_ok=True)
    (user / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Bash(ls:*)"]}}))
    project = project_with_rules(tmp_path / "p")
    assert load_claude_rules(project)[2] == ("ls:*",)


def test_started_in_the_home_folder_the_project_file_is_the_users(tmp_path, monkeypatch):
    """Claude Code started in ~ reads `~/.claude/settings.json` as project and user settings at
    once; its allow rules are the user's and count without a trust record."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR")
    project_with_rules(home)
    assert load_claude_rules(home)[2] == ("touch:*",)
    assert not workspace_trusted(str(home))


def test_only_the_workspace_key_itself_counts_not_a_parent_folder(tmp_path):
    """A trust record of a folder above the project does not cover its allow rules, nor does a
    record of a subfolder; the key outside git is the folder itself."""
    project = project_with_rules(tmp_path / "parent" / "p")
    trust_workspace(tmp_path / "parent")
    trust_workspace(project / ".claude")
    assert load_claude_rules(project)[2] == ()
    trust_workspace(project)
    assert load_claude_rules(project)[2] == ("touch:*",)


def test_in_a_git_repository_the_key_is_its_top_level(tmp_path):
    """Claude Code keys trust by the repository's top level: a project folder inside a repository
    is trusted by the top level's record, not by its own."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git("init", "-q", cwd=repo)
    project = project_with_rules(repo / "sub")
    assert trust_key(str(project)) == str(repo.resolve())
    write_global({"projects": {str(project.resolve()): {"hasTrustDialogAccepted": True}}})
    assert load_claude_rules(project)[2] == ()
    trust_workspace(repo)
    assert load_claude_rules(project)[2] == ("touch:*",)


def test_a_linked_worktree_is_trusted_by_its_main_worktree(tmp_path):
    """`git worktree add`: the `.git` file leads to the main repository, whose record counts."""
    repo = tmp_path / "main"
    repo.mkdir()
    git("init", "-q", cwd=repo)
    git("commit", "-q", "--allow-empty", "-m", "x", cwd=repo)
    git("worktree", "add", "-q", str(tmp_path / "linked"), cwd=repo)
    linked = project_with_rules(tmp_path / "linked")
    assert trust_key(str(linked)) == str(repo.resolve())
    trust_workspace(repo)
    assert load_claude_rules(linked)[2] == ("touch:*",)


@pytest.mark.parametrize(
    "entry", [{"hasTrustDialogAccepted": "true"}, {"hasTrustDialogAccepted": 1}, {}, "yes"]
)
def test_only_a_true_trust_flag_counts(tmp_path, entry):
    """Claude Code compares the flag with `true`; anything else is untrusted."""
    project = project_with_rules(tmp_path / "p")
    write_global({"projects": {str(project.resolve()): entry}})
    assert load_claude_rules(project)[2] == ()


@pytest.mark.parametrize("content", [b"{not json", b"[]", b'{"projects": []}', b"\xff\xfe"])
def test_a_broken_global_config_is_untrusted(tmp_path, content):
    """A global config that cannot be read as Claude Code's trusts nothing (and raises nothing)."""
    project = project_with_rules(tmp_path / "p")
    Path(global_config_path()).parent.mkdir(parents=True, exist_ok=True)
    Path(global_config_path()).write_bytes(content)
    assert load_claude_rules(project)[2] == ()


def test_ignoring_persisted_trust_drops_the_allow_rules(tmp_path, monkeypatch):
    """`CLAUDE_CODE_IGNORE_PERSISTED_TRUST` (a self-hosted runner, an IDE's untrusted folder):
    no trust record counts."""
    project = project_with_rules(tmp_path / "p")
    trust_workspace(project)
    monkeypatch.setenv("CLAUDE_CODE_IGNORE_PERSISTED_TRUST", "1")
    assert load_claude_rules(project)[2] == ()


def test_the_hook_does_not_allow_what_an_untrusted_project_allows(tmp_path):
    """Through the hook: `touch x` with the project's `Bash(touch:*)` gets no allow (Claude Code
    then asks, as without the hook) until the workspace is trusted."""
    from rtk_policy.hook.service import HookOptions, answer_stream

    project = project_with_rules(tmp_path / "p")

    def answer() -> dict:
        payload = {"session_id": "s", "cwd": str(project), "hook_event_name": "PreToolUse",
                   "tool_name": "Bash", "tool_input": {"command": "touch x"}}  # fmt: skip
        out = io.StringIO()
        answer_stream(HookOptions(agent="claude"), io.StringIO(json.dumps(payload)), out,
                      io.StringIO())  # fmt: skip
        return json.loads(out.getvalue() or "{}").get("hookSpecificOutput", {})

    assert answer().get("permissionDecision") is None
    trust_workspace(project)
    assert answer()["permissionDecision"] == "allow"


def test_the_resident_server_sees_a_new_trust_record(tmp_path, monkeypatch):
    """The server's folder facts follow `~/.claude.json`: trusting the workspace is seen at once."""
    from rtk_policy.serve.memo import FolderFacts

    monkeypatch.setattr("rtk_policy.serve.memo.RACY_NS", 0)
    project = project_with_rules(tmp_path / "p")
    facts = FolderFacts(recheck=0)
    assert facts.claude_rules(str(project))[2] == ()
    trust_workspace(project)
    facts.new_request()
    assert facts.claude_rules(str(project))[2] == ("touch:*",)
