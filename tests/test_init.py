"""`rtk-policy init` / `uninstall` / `doctor` on settings files in a temporary HOME."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys

import pytest
from fakes import under_claude
from conftest import private_folders
from test_client import server_pid, wait_for_server

import rtk_policy
from rtk_policy.commands import doctor, init, uninstall
from rtk_policy.settings.hook_command import unguarded
from rtk_policy.settings.targets import FILE_TOOL_MATCHERS, client_path, thin_client_unavailable

CLIENT = str(client_path())
needs_thin_client = pytest.mark.skipif(
    bool(thin_client_unavailable()), reason="the thin client needs Unix sockets"
)

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


def cli(module, agent="claude", global_=True, in_process=False, serve=False):
    out, err = io.StringIO(), io.StringIO()
    options = {"in_process": in_process, "serve": serve} if module is init else {}
    code = module.run(agent=agent, global_=global_, stdout=out, stderr=err, **options)
    return code, out.getvalue(), err.getvalue()


def thin_client_words(agent="claude"):
    return [sys.executable, "-S", "-I", CLIENT, agent]


def commands_of(settings, event="PreToolUse", file_tools=False):
    """Every handler command of `event` in the settings file, in order: of the shell's groups, or
    (`file_tools`) of the groups for the file-writing tools (`FILE_TOOL_MATCHERS`)."""
    data = json.loads(settings.read_text())
    found = []
    for group in data["hooks"][event]:
        if (group.get("matcher") in FILE_TOOL_MATCHERS.values()) != file_tools:
            continue
        for handler in group.get("hooks", [group]):
            found.append(handler.get("command") or handler.get("bash"))
    return found


def our_groups(data, event="PreToolUse"):
    return [
        g
        for g in data["hooks"][event]
        if "rtk_policy" in json.dumps(g) or "rtk-policy" in json.dumps(g)
    ]


@needs_thin_client
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
    assert unguarded(ours["hooks"][0]["command"]) == thin_client_words()
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
    assert [g["matcher"] for g in our_groups(data)] == ["Bash", "Write|Edit|MultiEdit|NotebookEdit"]
    assert commands_of(settings) == commands_of(settings, file_tools=True)
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
    assert (tmp_path / ".claude" / "settings.local.json").exists()
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
@needs_thin_client
def test_other_agents_install_idempotently(home, agent, relative, event):
    path = home / relative
    assert cli(init, agent)[0] == 0
    first = path.read_bytes()
    cli(init, agent)
    assert path.read_bytes() == first
    assert [unguarded(c) for c in commands_of(path, event)] == [thin_client_words(agent)]
    files = [thin_client_words(agent)] if agent in FILE_TOOL_MATCHERS else []
    assert [unguarded(c) for c in commands_of(path, event, file_tools=True)] == files
    cli(uninstall, agent)
    assert not path.exists()


def test_doctor_reports_a_missing_hook(home):
    out = io.StringIO()
    assert doctor.run(stdout=out, stderr=io.StringIO()) == 1
    assert "PROBLEM an rtk-policy hook is installed" in out.getvalue()


@pytest.fixture()
def runtime(tmp_path, monkeypatch):
    """A private runtime folder for the engine the thin client starts (killed at the end)."""
    folder = tmp_path / "run"
    folder.mkdir()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))
    monkeypatch.setenv("RTK_POLICY_SERVE_IDLE", "20")
    yield folder
    stop_server(folder)


def stop_server(runtime_dir):
    """SIGTERM the resident engine of `runtime_dir`, if one is running."""
    pid = server_pid(runtime_dir / "rtk-policy" / "engine.lock")
    if pid:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass


@pytest.mark.parametrize("in_process", [False, True], ids=["thin-client", "in-process"])
def test_doctor_passes_after_init(home, monkeypatch, tmp_path, runtime, in_process):
    if not in_process and thin_client_unavailable():
        pytest.skip("the thin client needs Unix sockets")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    cli(init, in_process=in_process)
    out = io.StringIO()
    code = doctor.run(stdout=out, stderr=io.StringIO())
    text = out.getvalue()
    kind = "in-process" if in_process else "the thin client"
    assert f"claude hook installed in {home}" in text and f"({kind}" in text
    assert "ok      hook command runs and answers" in text, text
    # doctor's probes ran in a sandbox: no engine was started in (or left in) the user's folder
    assert not (runtime / "rtk-policy" / "engine.sock").exists()
    assert not server_pid(runtime / "rtk-policy" / "engine.lock")
    if "policies do not load" not in text:
        assert code == 0, text


def old_settings(*commands):
    """Claude settings: a foreign hook, then our entries running `commands` (as older inits wrote)."""
    groups = [{"matcher": "Edit", "hooks": [{"type": "command", "command": "lint.sh"}]}]
    for command in commands:
        handler = {"type": "command", "command": command, "timeout": 30}
        groups.append({"matcher": "Bash", "hooks": [handler]})
    return {"model": "opus", "hooks": {"PreToolUse": groups}}


def write_settings(home, data):
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(exist_ok=True)
    settings.write_text(json.dumps(data, indent=2) + "\n")
    return settings


@needs_thin_client
def test_init_upgrades_an_old_in_process_entry_in_place(home):
    settings = write_settings(home, old_settings("/old/venv/bin/rtk-policy hook claude"))
    code, out, _ = cli(init)
    assert code == 0 and "replaced `/old/venv/bin/rtk-policy hook claude`" in out
    data = json.loads(settings.read_text())
    groups = data["hooks"]["PreToolUse"]
    assert len(groups) == 3 and groups[0]["hooks"][0]["command"] == "lint.sh"
    assert groups[2]["matcher"] == FILE_TOOL_MATCHERS["claude"]  # the file tools' entry is added
    ours = groups[1]["hooks"]
    assert len(ours) == 1 and ours[0]["timeout"] == 30  # the user's other fields are kept
    assert unguarded(ours[0]["command"]) == thin_client_words()
    first = settings.read_bytes()
    assert cli(init)[0] == 0 and settings.read_bytes() == first


@needs_thin_client
def test_init_leaves_one_hook_when_both_forms_were_installed(home):
    old = "/usr/bin/python3 -S -I /elsewhere/site-packages/rtk_policy/client.py claude"
    settings = write_settings(home, old_settings("python3 -m rtk_policy hook claude", old))
    assert cli(init)[0] == 0
    commands = commands_of(settings)
    assert commands[0] == "lint.sh" and len(commands) == 2
    assert unguarded(commands[1]) == thin_client_words()


def test_in_process_writes_the_hook_command_and_switches_back(home):
    settings = home / ".claude" / "settings.json"
    code, out, _ = cli(init, in_process=True)
    assert code == 0 and "fresh process" in out and "thin client" in out
    (command,) = commands_of(settings)
    words = unguarded(command)
    main = os.path.join(os.path.dirname(os.path.abspath(rtk_policy.__file__)), "__main__.py")
    # the package's script, not the console script (its wrapper imports `re`: ~7 ms a call)
    assert words == [sys.executable, "-P", main, "hook", "claude"]
    assert "client.py" not in command
    if not thin_client_unavailable():
        cli(init)
        assert [unguarded(c) for c in commands_of(settings)] == [thin_client_words()]
        cli(init, in_process=True)
        assert commands_of(settings) == [command]


@needs_thin_client
def test_serve_is_an_alias_of_the_default(home):
    code, out, _ = cli(init, serve=True)
    settings = home / ".claude" / "settings.json"
    assert code == 0 and [unguarded(c) for c in commands_of(settings)] == [thin_client_words()]
    assert "no opinion" in out and "http hook" in out and "in-process" in out


def test_the_cli_parses_the_form_flags():
    from rtk_policy.main import build_parser

    parser = build_parser()
    assert parser.parse_args(["init"]).in_process is False
    assert parser.parse_args(["init", "--in-process"]).in_process is True
    assert parser.parse_args(["init", "--serve"]).serve is True
    with pytest.raises(SystemExit):
        parser.parse_args(["init", "--serve", "--in-process"])


def test_a_customised_hook_command_is_kept(home):
    custom = "rtk-policy hook claude --policies /my/policies"
    settings = write_settings(home, old_settings(custom))
    before = settings.read_bytes()
    code, out, _ = cli(init)
    assert code == 0 and "customised" in out and settings.read_bytes() == before
    assert "no other entry was added" in out


def test_uninstall_removes_both_forms(home):
    thin = "/usr/bin/python3 -S -I /x/rtk_policy/client.py claude"
    settings = write_settings(home, old_settings("/venv/bin/rtk-policy hook claude", thin))
    code, out, _ = cli(uninstall)
    assert code == 0 and "removed" in out
    assert commands_of(settings) == ["lint.sh"]
    assert json.loads(settings.read_text())["model"] == "opus"


@pytest.mark.parametrize(
    ("command", "kind"),
    [
        ("/venv/bin/rtk-policy hook claude", "in-process"),
        ("'/my venv/bin/python' -m rtk_policy hook gemini", "in-process"),
        ("/venv/bin/python -P '/a b/rtk_policy/__main__.py' hook codex", "in-process"),
        ("/venv/bin/python -P /x/rtk_policy/__main__.py hook claude --policies p", None),
        ("/venv/bin/python -P /x/other/__main__.py hook claude", None),
        ("/usr/bin/python3 -S -I '/a b/rtk_policy/client.py' cursor", "thin client"),
        ("rtk-policy hook", "in-process"),
        ("rtk-policy hook claude --policies p", None),
        ("sh hooks/rtk-policy-hook.sh claude", None),
    ],
)
def test_command_forms(command, kind):
    from rtk_policy.settings.install import command_form

    assert command_form(command) == kind


@needs_thin_client
def test_the_installed_command_decides_end_to_end(home, tmp_path, runtime):
    """Run exactly what init wrote: in-process while no engine answers, then through the engine."""
    assert cli(init)[0] == 0
    (command,) = commands_of(home / ".claude" / "settings.json")
    assert unguarded(command) == thin_client_words()
    (tmp_path / "private").mkdir()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        **private_folders(tmp_path / "private"),
        "XDG_RUNTIME_DIR": str(runtime),
        "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"],
        "RTK_POLICY_SERVE_IDLE": "20",
    }

    def decide(shell_command, tool_name="Bash", tool_input=None):
        payload = {
            "session_id": "s1",
            "cwd": str(tmp_path),
            "hook_event_name": "PreToolUse",
            "tool_name": tool_name,
            "tool_use_id": "t1",
            "tool_input": tool_input or {"command": shell_command, "description": "d"},
        }
        done = subprocess.run(  # as Claude Code runs it: a shell, a child of Claude Code
            under_claude(tmp_path / "claude-bin", ["/bin/sh", "-c", command]),
            input=json.dumps(payload).encode(),
            capture_output=True,
            env=env,
            timeout=120,
            cwd=str(tmp_path),
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)["hookSpecificOutput"]

    assert decide("rm -rf /")["permissionDecision"] == "deny"  # no engine yet: decided in-process
    wait_for_server(env)
    assert decide("git status")["updatedInput"] == {"command": "rtk git status", "description": "d"}
    assert decide("rm -rf /")["permissionDecision"] == "deny"
    guarded_file = {"file_path": f"{env['HOME']}/.claude/settings.json", "content": "{}"}
    assert decide("", "Write", guarded_file)["permissionDecision"] == "ask"  # via the engine too


def test_doctor_reports_file_tools_that_an_older_init_left_unhooked(home):
    """An entry from before the file tools were hooked: doctor says so, and `init` adds it."""
    write_settings(home, old_settings("/old/venv/bin/rtk-policy hook claude"))
    out = io.StringIO()
    doctor.run(stdout=out, stderr=io.StringIO())
    line = "file-writing tools (Write|Edit|MultiEdit|NotebookEdit) are hooked"
    assert f"PROBLEM claude's {line}" in out.getvalue()
    assert cli(init, in_process=True)[0] == 0
    out = io.StringIO()
    doctor.run(stdout=out, stderr=io.StringIO())
    assert f"ok      claude's {line}" in out.getvalue()
