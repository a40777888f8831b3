"""Gemini CLI's and Cursor's own permission rules (issue 16 point 4): read as Claude Code's are,
into the `claude` CEL variable, so their allow rules auto-approve rewrites and their deny rules are
never slipped past — through the real hook, in a private HOME."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

import pytest

from rtk_policy.agents.samples import sample_payload
from rtk_policy.hook.service import HookOptions, answer_stream
from rtk_policy.settings import cursor_rules, gemini_rules
from rtk_policy.settings.agent_rules import load_agent_rules

GEMINI_POLICY = """
[[rule]]
toolName = "run_shell_command"
commandPrefix = ["git reset", "git clean"]
decision = "deny"
priority = 100

[[rule]]
toolName = ["run_shell_command", "read_file"]
commandPrefix = "docker"
decision = "ask_user"

[[rule]]
toolName = "run_shell_command"
commandRegex = "curl .*example"
decision = "deny"

[[rule]]
toolName = "run_shell_command"
commandPrefix = "cargo"
decision = "allow"
modes = ["yolo"]

[[rule]]
toolName = "read_file"
decision = "deny"
"""


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private HOME with a project folder `proj`, no Gemini or Cursor variables."""
    home = tmp_path / "home"
    (home / "proj").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    for name in ("GEMINI_CLI_HOME", "GEMINI_CLI_TRUST_WORKSPACE", "GEMINI_CLI_TRUSTED_FOLDERS_PATH",
                 "GEMINI_CLI_SYSTEM_SETTINGS_PATH", "GEMINI_RESTRICTED_MODE"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture()
def gemini_above(monkeypatch: pytest.MonkeyPatch) -> None:
    """Gemini CLI's command line read, with no rule options on it (`settings.gemini_cli`): the hook
    hands rewrites over only then (tests/test_agent_cli_rules.py reads real command lines)."""
    from rtk_policy.settings import gemini_cli

    seen = gemini_cli.CliRules(seen=True, why="test: Gemini CLI with no rule options")
    monkeypatch.setattr(gemini_cli, "host_rules", lambda start_pid=None, stderr=None: seen)


def write(path: Path, text: str) -> None:
    """Write `text` to `path`, creating its folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def gemini_setup(home: Path) -> None:
    """User settings and a user policy file; project settings that only a trusted folder gets."""
    settings = {
        "tools": {
            "allowed": [
                "run_shell_command(git status)",
                "ShellTool(ls)",
                "read_file",
                "run_shell_command(rtk)",  # with an allow list, Gemini denies what it omits
            ],
            "exclude": ["run_shell_command(git push)"],
            "confirmationRequired": ["run_shell_command(npm publish)"],
        }
    }
    write(home / ".gemini" / "settings.json", json.dumps(settings))
    write(home / ".gemini" / "policies" / "mine.toml", GEMINI_POLICY)
    project = {"tools": {"allowed": ["run_shell_command(make)"], "exclude": ["ShellTool(rm)"]}}
    write(home / "proj" / ".gemini" / "settings.json", json.dumps(project))


def hook(agent: str, command: str, cwd: Path) -> dict | None:
    """The real hook's answer for `agent`'s payload of `command` run in `cwd`."""
    out, err = io.StringIO(), io.StringIO()
    payload = json.dumps(sample_payload(agent, command, str(cwd)))
    answer_stream(HookOptions(agent=agent), io.StringIO(payload), out, err)
    return json.loads(out.getvalue()) if out.getvalue().strip() else None


def test_gemini_rules_as_patterns(home: Path) -> None:
    """Settings lists and policy rules per verdict; regex rules kept as typed; a project's allow
    rules only once Gemini trusts the folder, its deny rules always."""
    gemini_setup(home)
    deny, ask, allow, keep = load_agent_rules("gemini", str(home / "proj"))
    assert deny == ("git push", "git reset", "git clean", "rm")
    assert ask == ("npm publish", "docker")
    assert allow == ("git status", "ls", "rtk")  # not `cargo` (yolo mode only), not `make`
    assert keep == ("^(?:curl .*example)",)
    trusted = {str(home / "proj"): "TRUST_FOLDER"}
    write(home / ".gemini" / "trustedFolders.json", json.dumps(trusted))
    assert load_agent_rules("gemini", str(home / "proj"))[2] == ("git status", "ls", "rtk", "make")


@pytest.mark.parametrize(
    ("rules", "where", "trusted"),
    [
        ({}, "proj", False),
        ({"{h}/proj": "TRUST_FOLDER"}, "proj/sub", True),
        ({"{h}/proj/x": "TRUST_PARENT"}, "proj", True),
        ({"{h}": "TRUST_FOLDER", "{h}/proj": "DO_NOT_TRUST"}, "proj", False),
        ({"{h}/pro": "TRUST_FOLDER"}, "proj", False),
    ],
)
def test_gemini_folder_trust(home: Path, rules: dict, where: str, trusted: bool) -> None:
    """trustedFolders.json as Gemini reads it: the longest matching rule wins."""
    data = {key.format(h=home): value for key, value in rules.items()}
    write(home / ".gemini" / "trustedFolders.json", json.dumps(data))
    (home / where).mkdir(parents=True, exist_ok=True)
    assert gemini_rules.folder_trusted(str(home / where)) is trusted


@pytest.mark.usefixtures("gemini_above")
def test_gemini_allow_rules_auto_approve_rewrites_and_deny_rules_hold(home: Path) -> None:
    """Through the hook: allowed `git status` becomes an allowed rewrite (every tool field kept);
    a deny rule's command is denied, nested or wrapped too; a regex deny is never rewritten."""
    gemini_setup(home)
    proj = home / "proj"
    allowed = hook("gemini", "git status", proj)
    assert allowed["decision"] == "allow"
    assert allowed["hookSpecificOutput"]["tool_input"]["command"] == "rtk git status"
    assert allowed["hookSpecificOutput"]["tool_input"]["dir_path"] == "."
    for command in ("git push origin main", "sudo git push", "bash -c 'git push'", "git reset x"):
        answer = hook("gemini", command, proj)
        assert answer["decision"] == "deny", command
        assert "Gemini CLI deny rule run_shell_command(" in answer["reason"]
    assert hook("gemini", "docker ps", proj)["decision"] == "ask"
    assert hook("gemini", "curl https://example.com", proj) is None  # kept as typed for Gemini
    assert hook("gemini", "curl https://other.org", proj)["hookSpecificOutput"]  # rewritten


@pytest.mark.usefixtures("gemini_above")
def test_a_gemini_allow_list_without_rtk_stops_every_rewrite(home: Path) -> None:
    """Gemini denies every shell command its allow list omits, `rtk …` too: with such a list and
    no `rtk` in it, an allowed command is allowed as typed, and no other command is rewritten."""
    settings = {"tools": {"allowed": ["run_shell_command(git status)"]}}
    write(home / ".gemini" / "settings.json", json.dumps(settings))
    assert load_agent_rules("gemini", str(home))[3] == (gemini_rules.EVERY_COMMAND,)
    assert hook("gemini", "git status", home) == {"decision": "allow"}
    assert hook("gemini", "ls -la", home) is None
    settings["tools"]["allowed"].append("ShellTool(rtk)")
    write(home / ".gemini" / "settings.json", json.dumps(settings))
    assert load_agent_rules("gemini", str(home))[3] == ()
    assert hook("gemini", "git status", home)["hookSpecificOutput"]["tool_input"]["command"] == (
        "rtk git status"
    )


def test_cursor_rules_as_patterns_and_through_the_hook(home: Path) -> None:
    """User config and every project cli.json from the git top level down; Shell(x) entries only."""
    write(home / ".cursor" / "cli-config.json",
          json.dumps({"permissions": {"allow": ["Shell(git)", "Read(**)"],
                                      "deny": ["Shell(git push)"]}}))  # fmt: skip
    (home / "proj" / ".git").mkdir()
    write(home / "proj" / ".cursor" / "cli.json",
          json.dumps({"permissions": {"allow": ["Shell(ls)"], "deny": ["Shell(rm)"]}}))  # fmt: skip
    write(home / "proj" / "sub" / ".cursor" / "cli.json",
          json.dumps({"permissions": {"deny": ["Shell(curl)"]}}))  # fmt: skip
    sub = home / "proj" / "sub"
    assert load_agent_rules("cursor", str(sub)) == (
        ("git push", "rm", "curl"),
        (),
        ("git", "ls"),
        (),
    )
    assert cursor_rules.shell_pattern("Shell(**)") == "*"
    assert hook("cursor", "git status", sub) == {"continue": True, "permission": "allow"}
    denied = hook("cursor", "FOO=1 git push --tags", sub)
    assert denied["permission"] == "deny"
    assert "Cursor deny rule Shell(git push)" in denied["user_message"]


def test_claude_code_rules_stay_claude_codes(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Claude Code, Copilot and Codex keep reading Claude's settings; Gemini's are not theirs."""
    gemini_setup(home)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    write(home / ".claude" / "settings.json",
          json.dumps({"permissions": {"deny": ["Bash(make:*)"]}}))  # fmt: skip
    for agent in ("claude", "copilot", "codex"):
        assert load_agent_rules(agent, str(home / "proj"))[0] == ("make:*",)
    assert "make:*" not in load_agent_rules("gemini", str(home / "proj"))[0]


def test_the_resident_engine_sees_a_changed_rule_file(home: Path) -> None:
    """FolderFacts remembers another host's rules until one of their files changes."""
    from rtk_policy.serve.memo import FolderFacts

    gemini_setup(home)
    time.sleep(0.1)  # files changed within the last 50 ms are read again (memo.RACY_NS)
    facts = FolderFacts()
    first = facts.agent_rules("gemini", str(home / "proj"))
    assert facts.agent_rules("gemini", str(home / "proj")) is first
    write(
        home / ".gemini" / "policies" / "more.toml",
        '[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = "kill"\ndecision = "deny"\n',
    )
    assert "kill" in facts.agent_rules("gemini", str(home / "proj"))[0]
