"""The rules on Gemini CLI's and Copilot CLI's own command lines (issue 16 point 4), read from the
agent process above the hook through `/proc` (`settings.host_process`), as Claude Code's are: a
deny rule there is enforced on the command as typed and never slipped past by a rewrite; where
the process cannot be read, no rewrite is handed over."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rtk_policy.agents.samples import sample_payload
from rtk_policy.hook.service import HookOptions, answer_stream
from rtk_policy.settings import copilot_cli, gemini_cli, host_process

DENY_PUSH = (
    '[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = "git push"\ndecision = "deny"\n'
)
ASK_DOCKER = (
    '[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = "docker"\ndecision = "ask_user"\n'
)


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private HOME (no Gemini, Claude or Cursor files), and a project folder `proj`."""
    home = tmp_path / "home"
    (home / "proj").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    for name in ("GEMINI_CLI_HOME", "GEMINI_CLI_SYSTEM_SETTINGS_PATH", "CLAUDE_CONFIG_DIR"):
        monkeypatch.delenv(name, raising=False)
    return home


def agent_above(monkeypatch: pytest.MonkeyPatch, argv: list[str], cwd: str) -> None:
    """Make `argv` (in `cwd`) the process above the hook, for a reader that accepts it."""

    def found(start: int, is_agent):  # noqa: ANN001, ANN202 - the patched helper's signature
        return (4242, argv, cwd) if is_agent(argv) else None

    monkeypatch.setattr(host_process, "agent_process", found)


def hook(agent: str, command: str, cwd: Path) -> tuple[dict | None, str]:
    """The real hook's answer (and stderr) for `agent`'s payload of `command` run in `cwd`."""
    out, err = io.StringIO(), io.StringIO()
    payload = json.dumps(sample_payload(agent, command, str(cwd)))
    answer_stream(HookOptions(agent=agent), io.StringIO(payload), out, err)
    return (json.loads(out.getvalue()) if out.getvalue().strip() else None), err.getvalue()


# -- Gemini CLI -------------------------------------------------------------------------------


def test_gemini_policy_options_as_yargs_reads_them(home: Path) -> None:
    """`--policy` / `--admin-policy` (`=` or a separate word, commas split, a folder's `*.toml`,
    `~` and relative paths) and the deprecated `--allowed-tools` allow list."""
    write(home / "deny.toml", DENY_PUSH)
    write(home / "pol" / "ask.toml", ASK_DOCKER)
    write(home / "pol" / "ignored.txt", DENY_PUSH.replace("git push", "ls"))
    argv = ["node", "/x/gemini-cli/bundle/gemini.js", "--policy", "deny.toml,~/missing.toml",
            "--admin-policy=~/pol", "--allowed-tools", "run_shell_command(git status)",
            "-p", "hi"]  # fmt: skip
    found = gemini_cli.rules_of_argv(argv, str(home))
    assert found["deny"] == ["git push"]
    assert found["ask"] == ["docker"]
    assert found["allow"] == ["git status"]
    assert found["keep"] == ["^(?:)"]  # the allow list narrows and does not allow `rtk`


def test_gemini_policy_one_value_per_option(home: Path) -> None:
    """`nargs: 1`: the word after a policy file is the prompt, not a second policy."""
    argv = ["gemini", "--policy", str(home / "a.toml"), str(home / "b.toml")]
    write(home / "a.toml", DENY_PUSH)
    write(home / "b.toml", ASK_DOCKER)
    assert gemini_cli.rules_of_argv(argv, "")["ask"] == []


@pytest.mark.parametrize(
    ("argv", "gemini"),
    [
        (["node", "/usr/lib/node_modules/@google/gemini-cli/bundle/gemini.js", "-p", "x"], True),
        (["node", "--max-old-space-size=8192", "/opt/gemini-cli/bundle/gemini.js"], True),
        (["/usr/bin/gemini", "--yolo"], True),
        (["node", "/srv/app/server.js", "--policy", "x"], False),
        (["bash", "-c", "gemini-helper"], False),
    ],
)
def test_which_process_is_gemini(argv: list[str], gemini: bool) -> None:
    """Gemini's node process (and its relaunch with memory flags), not a look-alike."""
    assert gemini_cli.is_gemini(argv) is gemini


def test_gemini_command_line_deny_holds_through_the_hook(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A `--policy` deny rule denies `git push` (never `rtk git push`); other commands are still
    rewritten; an unreadable policy file named on the command line is said on stderr."""
    write(home / "deny.toml", DENY_PUSH)
    write(home / "bad.toml", "[[rule]\n")
    argv = ["node", "/x/gemini-cli/bundle/gemini.js", "--policy", "deny.toml", "--policy=bad.toml"]
    agent_above(monkeypatch, argv, str(home))
    answer, err = hook("gemini", "git push origin main", home / "proj")
    assert answer is not None and answer["decision"] == "deny", answer
    assert "run_shell_command(git push)" in answer["reason"]
    assert "bad.toml" in err
    answer, _ = hook("gemini", "git status", home / "proj")
    assert answer["hookSpecificOutput"]["tool_input"]["command"] == "rtk git status"


def test_gemini_unseen_command_line_means_no_rewrite(home: Path) -> None:
    """No Gemini process above the hook (this test): its `--policy` rules cannot be known, so no
    rewrite is handed over; the verdict is unchanged."""
    answer, _ = hook("gemini", "git status", home / "proj")
    assert answer is None or "hookSpecificOutput" not in answer, answer


def test_gemini_settings_policy_paths(home: Path) -> None:
    """`policyPaths` in settings.json name policy files as `--policy` does."""
    from rtk_policy.settings.agent_rules import load_agent_rules

    write(home / "extra" / "p.toml", DENY_PUSH)
    write(home / ".gemini" / "settings.json", json.dumps({"policyPaths": ["~/extra"]}))
    assert load_agent_rules("gemini", str(home / "proj"))[0] == ("git push",)


# -- Copilot CLI ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "deny", "allow", "keep"),
    [
        (["--deny-tool", "shell(git push)"], ["git push"], [], []),
        (["--deny-tool=shell(git:*)", "--allow-tool", "shell(ls)"], ["git:*"], ["ls"], []),
        (["--deny-tool", "shell(git)", "shell(npm run build)"], [], [], ["git", "npm run build"]),
        (["--allow-tool", "shell(git)", "shell(npm run build)", "write"], [], [], []),
        (["--deny-tool", "shell"], ["*"], [], []),
        (["--deny-tool", "shell(rm),shell( gh  pr create )"], ["rm", "gh pr create"], [], []),
        (["--deny-tool", "shell(^x)"], ["^x"], [], []),
        (["--deny-tool", "MyMCP(tool)", "url(github.com)"], [], [], []),
        (["--", "--deny-tool", "shell(rm)"], [], [], []),
    ],
)
def test_copilot_tool_rules(values: list[str], deny: list, allow: list, keep: list) -> None:
    """`shell(…)` rules as Copilot means them: exact ones become patterns, a deny rule our pattern
    cannot say is kept as typed (never rewritten), such an allow rule is not read."""
    found = copilot_cli.rules_of_argv(["copilot", "-p", "x", *values])
    assert found == (tuple(deny), tuple(allow), tuple(keep))


def test_copilot_deny_rule_through_the_hook(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--deny-tool 'shell(git push)'` denies `git push origin main`; `shell(git)` keeps `git …`
    as typed (Copilot's own rule judges it); an unrelated command is still rewritten."""
    argv = ["/x/node_modules/@github/copilot-linux-x64/copilot", "--allow-all-tools",
            "--deny-tool", "shell(git push)", "--deny-tool=shell(make)"]  # fmt: skip
    agent_above(monkeypatch, argv, str(home))
    answer, _ = hook("copilot", "git push origin main", home / "proj")
    assert answer is not None and answer["permissionDecision"] == "deny", answer
    answer, _ = hook("copilot", "make test", home / "proj")
    assert answer is None or "modifiedArgs" not in answer, answer
    answer, _ = hook("copilot", "git status", home / "proj")
    assert answer["modifiedArgs"]["command"] == "rtk git status", answer


def test_copilot_unseen_command_line_means_no_rewrite(home: Path) -> None:
    """No Copilot process above the hook: no rewrite."""
    answer, _ = hook("copilot", "git status", home / "proj")
    assert answer is None or "modifiedArgs" not in answer, answer


# -- the process above, through the real /proc --------------------------------------------------


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc")
def test_the_rules_are_read_from_the_real_process_above(tmp_path: Path) -> None:
    """A process named `copilot` with a `--deny-tool` starts a shell that starts the reader: the
    reader finds it through `/proc` (two levels up) and reads its rules."""
    launcher = tmp_path / "copilot"
    launcher.write_text(
        textwrap.dedent(
            """\
            import subprocess, sys
            code = ("from rtk_policy.settings import copilot_cli; r = copilot_cli.host_rules();"
                    " print(r.seen, r.deny, r.why)")
            shell = ["/bin/sh", "-c", '"$1" -c "$0"; true', code, sys.executable]
            sys.exit(subprocess.call(shell))
            """
        )
    )
    argv = [sys.executable, str(launcher), "--deny-tool", "shell(git push)", "-p", "x"]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True).stdout
    assert out.startswith("True ('git push',) the command line of Copilot CLI (pid "), out


def test_no_agent_above_and_an_unknown_asker() -> None:
    """This test process has no Copilot above it; pid 0 (an http hook) reads nothing."""
    assert not copilot_cli.host_rules().seen
    unknown = copilot_cli.host_rules(0)
    assert not unknown.seen and "not known" in unknown.why


def write(path: Path, text: str) -> None:
    """Write `text` to `path`, creating its folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
