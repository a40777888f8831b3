"""Codex's execpolicy rules (issue 16 point 4): `prefix_rule`s of `.rules` files read without
running them, so a `forbidden` rule is our deny (never slipped past by `rtk …`), a `prompt` rule
keeps the command as typed, and a file we cannot read keeps every command as typed, saying why."""

from __future__ import annotations

import io
import json
import os
import time
from pathlib import Path

import pytest

from rtk_policy.agents.samples import sample_payload
from rtk_policy.hook.service import HookOptions, answer_stream
from rtk_policy.settings import codex_rules
from rtk_policy.settings.agent_rules import EVERY_COMMAND, load_agent_rules
from rtk_policy.settings.codex_execpolicy import RulesError, parse_rules

RULES = """
# what the TUI writes, and what the docs show
prefix_rule(pattern=["git", ["push", "fetch"]], decision="forbidden",
            justification="no pushing from the agent")
prefix_rule(
    pattern = ["gh", "pr", "view"],
    decision = "prompt",
    match = ["gh pr view 7888", ["gh", "pr", "view", "1"]],
    not_match = ['gh pr --repo openai/codex view 7888'],
)
prefix_rule(["cargo", "test"])  # positional; decision defaults to allow
prefix_rule(pattern=["rm", "-rf"], decision='''forbidden''')
host_executable(name="git", paths=["/usr/bin/git"])
"""


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private HOME with `~/.codex` and a git project `proj`; the system folder in tmp too."""
    home = tmp_path / "home"
    (home / "proj" / ".git").mkdir(parents=True)
    (home / ".codex" / "rules").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.setattr(codex_rules, "SYSTEM_DIR", str(tmp_path / "etc-codex"))
    return home


def rules_file(home: Path, text: str, name: str = "default.rules") -> Path:
    """Write a user rules file."""
    path = home / ".codex" / "rules" / name
    path.write_text(text, encoding="utf-8")
    return path


def hook(command: str, cwd: Path) -> tuple[dict | None, str]:
    """The real hook's answer (and stderr) for Codex's payload of `command` run in `cwd`."""
    out, err = io.StringIO(), io.StringIO()
    payload = json.dumps(sample_payload("codex", command, str(cwd)))
    answer_stream(HookOptions(agent="codex"), io.StringIO(payload), out, err)
    return (json.loads(out.getvalue()) if out.getvalue().strip() else None), err.getvalue()


def test_prefix_rules_as_patterns(home: Path) -> None:
    """forbidden → deny (one pattern per alternative), prompt → kept as typed, allow → allow."""
    rules_file(home, RULES)
    deny, ask, allow, keep = load_agent_rules("codex", str(home / "proj"))
    assert deny == ("git push", "git fetch", "rm -rf")
    assert ask == ()
    assert allow == ("cargo test",)
    assert keep == ("gh pr view",)


def test_codex_home_and_project_layers(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`$CODEX_HOME/rules` replaces ~/.codex; a project's `.codex/rules` (git top level down to
    the folder) tightens only: its allow rules are not read."""
    elsewhere = home / "ch"
    (elsewhere / "rules").mkdir(parents=True)
    (elsewhere / "rules" / "a.rules").write_text('prefix_rule(["make"], "forbidden")\n')
    rules_file(home, 'prefix_rule(["ls"], "forbidden")\n')
    monkeypatch.setenv("CODEX_HOME", str(elsewhere))
    project = home / "proj" / ".codex" / "rules"
    project.mkdir(parents=True)
    (project / "p.rules").write_text('prefix_rule(["npm"], "forbidden")\nprefix_rule(["curl"])\n')
    (home / "proj" / "sub").mkdir()
    deny, _, allow, _ = load_agent_rules("codex", str(home / "proj" / "sub"))
    assert deny == ("make", "npm")
    assert allow == ()


def test_managed_requirements(home: Path) -> None:
    """`[rules] prefix_rules` of the managed requirements.toml."""
    system = Path(codex_rules.SYSTEM_DIR)
    system.mkdir()
    (system / "requirements.toml").write_text(
        "[rules]\nprefix_rules = [\n"
        '  { pattern = [{ token = "git" }, { any_of = ["push", "tag"] }],'
        ' decision = "forbidden" },\n'
        '  { pattern = [{ token = "kubectl" }], decision = "prompt" },\n]\n'
    )
    deny, _, _, keep = load_agent_rules("codex", str(home / "proj"))
    assert deny == ("git push", "git tag")
    assert keep == ("kubectl",)


def test_forbidden_rule_through_the_hook(home: Path) -> None:
    """`git push origin main` is denied as typed (so `rtk git push` never reaches Codex); a
    prompt rule's command is left as typed for Codex to ask about; others are rewritten."""
    rules_file(home, RULES)
    answer, _ = hook("git push origin main", home / "proj")
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny", answer
    answer, _ = hook("sudo git fetch", home / "proj")
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny", answer
    answer, _ = hook("gh pr view 12", home / "proj")
    assert answer is None or "updatedInput" not in answer.get("hookSpecificOutput", {}), answer
    answer, _ = hook("git status", home / "proj")
    assert answer["hookSpecificOutput"]["updatedInput"]["command"] == "rtk git status", answer


@pytest.mark.parametrize(
    "text",
    [
        'RULES = ["git"]\nprefix_rule(pattern=RULES, decision="forbidden")\n',
        'load("//x.star", "f")\n',
        'def f():\n    prefix_rule(["git"])\n',
        'prefix_rule(pattern=["git"], decision="deny")\n',
        'prefix_rule(pattern=["git"] + ["push"])\n',
        'prefix_rule(pattern=[], decision="forbidden")\n',
        'prefix_rule(pattern=["git", []], decision="forbidden")\n',
        'prefix_rule(pattern=["git"], decision="forbidden"\n',
        'prefix_rule(pattern=["git\\q"])\n',
        'prefix_rule(pattern="git")\n',
        'for x in ["a"]:\n  prefix_rule([x])\n',
        'prefix_rule(pattern=["git"], pattern=["ls"])\n',
        "prefix_rule(pattern=[" + ",".join(['["a","b"]'] * 9) + "])\n",
    ],
)
def test_a_file_we_cannot_read_keeps_every_command_as_typed(home: Path, text: str) -> None:
    """Syntax outside the subset, or a rule Codex would refuse: no command is rewritten, and
    stderr says which file and why; the other files' rules still hold."""
    rules_file(home, text, "bad.rules")
    rules_file(home, 'prefix_rule(["make"], "forbidden")\n', "good.rules")
    err = io.StringIO()
    deny, _, _, keep = load_agent_rules("codex", str(home / "proj"), err)
    assert keep == (EVERY_COMMAND,)
    assert deny == ("make",)
    assert "bad.rules" in err.getvalue() and "no command is rewritten" in err.getvalue()
    answer, stderr = hook("git status", home / "proj")
    assert answer is None or "updatedInput" not in answer.get("hookSpecificOutput", {}), answer
    assert "bad.rules" in stderr


def test_huge_and_odd_files(home: Path) -> None:
    """Over 1 MiB, not UTF-8, a FIFO (never opened blocking), a symlink (followed, as Codex
    follows it), a dangling symlink (nothing to read), a non-.rules file (not read)."""
    outside = home / "elsewhere.rules"
    outside.write_text('prefix_rule(["terraform", "apply"], "forbidden")\n')
    os.symlink(outside, home / ".codex" / "rules" / "link.rules")
    os.symlink(home / "gone", home / ".codex" / "rules" / "dangling.rules")
    rules_file(home, 'prefix_rule(["ls"], "forbidden")\n', "notes.txt")
    assert load_agent_rules("codex", str(home / "proj"))[::3] == (("terraform apply",), ())
    for name, make in [
        ("huge.rules", lambda p: p.write_text("# x\n" * 300_000)),
        ("latin.rules", lambda p: p.write_bytes(b'prefix_rule(["caf\xe9"])\n')),
        ("fifo.rules", lambda p: os.mkfifo(p)),
    ]:
        path = home / ".codex" / "rules" / name
        make(path)
        err = io.StringIO()
        started = time.monotonic()
        keep = load_agent_rules("codex", str(home / "proj"), err)[3]
        assert time.monotonic() - started < 5
        assert keep == (EVERY_COMMAND,), name
        assert name in err.getvalue()
        path.unlink()


def test_parse_rules_reads_the_documented_forms() -> None:
    """Strings in both quotes and triple quotes, escapes, comments, trailing commas, True/None."""
    text = (
        "prefix_rule(pattern=['a\\'b', \"c\\\\d\", ['e', 'f',],], decision=\"prompt\", "
        "justification=None, match=[], not_match=[],)  # done\nnetwork_rule(host='x', allow=True)\n"
    )
    assert parse_rules(text) == [("prompt", [["a'b"], ["c\\d"], ["e", "f"]])]
    with pytest.raises(RulesError):
        parse_rules("prefix_rule(['x']) prefix_rule(")


def test_the_resident_engine_sees_a_changed_rules_file(home: Path) -> None:
    """FolderFacts remembers Codex's rules until a rules file changes (Claude's rules beside)."""
    from rtk_policy.serve.memo import FolderFacts

    rules_file(home, 'prefix_rule(["make"], "forbidden")\n')
    time.sleep(0.1)  # files changed within the last 50 ms are read again (memo.RACY_NS)
    facts = FolderFacts()
    first = facts.agent_rules("codex", str(home / "proj"))
    assert first[0] == ("make",)
    assert facts.agent_rules("codex", str(home / "proj")) == first
    rules_file(home, 'prefix_rule(["kill"], "forbidden")\n', "more.rules")
    assert facts.agent_rules("codex", str(home / "proj"))[0] == ("make", "kill")
