"""The thin client as installed (`python -S -I client.py claude`): served answers, in-process fallback
when no server answers or one dies mid-request, a server started in the background, nothing imported
on the fast path. Every server a test starts is killed at its end."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import private_folders
from fakes import under_claude

from rtk_policy.serve import client

CLIENT = str(Path(client.__file__).resolve())
PAYLOAD = json.dumps(
    {
        "session_id": "s1",
        "cwd": "/tmp",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_use_id": "t1",
        "tool_input": {"command": "git status", "description": "d"},
    }
).encode()
EXPECTED = {"command": "rtk git status", "description": "d"}


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("cache")


@pytest.fixture()
def env(tmp_path, cache_dir):
    """The process environment of a hook call with private folders and a short server idle time."""
    values = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **private_folders(tmp_path)}
    values.update(XDG_CACHE_HOME=str(cache_dir), RTK_POLICY_SERVE_IDLE="20")
    yield values
    lock = tmp_path / "run" / "rtk-policy" / "engine.lock"
    pid = server_pid(lock)
    if pid:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass


def server_pid(lock: Path) -> int:
    try:
        return int(lock.read_text().strip() or 0)
    except (OSError, ValueError):
        return 0


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def call(env, data: bytes = PAYLOAD, *extra: str) -> tuple[str, str]:
    """The client's answer, started as a Claude Code hook is (a child of Claude Code's process)."""
    folder = Path(env["HOME"]).parent / "claude-bin"
    done = subprocess.run(
        under_claude(folder, [sys.executable, "-S", "-I", CLIENT, "claude", *extra]),
        input=data,
        capture_output=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0
    return done.stdout.decode(), done.stderr.decode()


def wait_for_server(env, old_pid: int = 0) -> int:
    """The pid of a listening server other than `old_pid` (waits for it to start)."""
    path = os.path.join(env["XDG_RUNTIME_DIR"], "rtk-policy", "engine.sock")
    lock = Path(path).parent / "engine.lock"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        pid = server_pid(lock)
        if pid and pid != old_pid and alive(pid) and os.path.exists(path):
            probe = socket.socket(socket.AF_UNIX)
            try:
                probe.connect(path)
                return pid
            except OSError:
                pass
            finally:
                probe.close()
        time.sleep(0.05)
    raise AssertionError("no server started")


def records(env) -> list[dict]:
    log = Path(env["XDG_STATE_HOME"]) / "rtk-policy" / "audit.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_no_server_decides_in_process_then_starts_one(env):
    out, _ = call(env)
    assert json.loads(out)["hookSpecificOutput"]["updatedInput"] == EXPECTED
    pid = wait_for_server(env)
    out, _ = call(env)
    assert json.loads(out)["hookSpecificOutput"]["updatedInput"] == EXPECTED
    assert alive(pid)
    assert [r["command"] for r in records(env)] == ["git status", "git status"]


def test_killed_server_is_replaced_and_the_call_still_decided(env):
    call(env)
    pid = wait_for_server(env)
    os.kill(pid, signal.SIGKILL)
    out, _ = call(env)
    assert json.loads(out)["hookSpecificOutput"]["updatedInput"] == EXPECTED
    assert wait_for_server(env, old_pid=pid) != pid
    assert len(records(env)) == 2


def test_server_dying_mid_request_still_gets_a_decision(env):
    """A server that reads the request and dies without answering: the client decides in-process."""
    path = os.path.join(env["XDG_RUNTIME_DIR"], "rtk-policy", "engine.sock")
    os.makedirs(os.path.dirname(path), mode=0o700)
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(path)
    listener.listen(1)
    seen: list[bytes] = []

    def die_mid_request() -> None:
        conn, _ = listener.accept()
        seen.append(conn.recv(65536))
        conn.sendall(b'{"hookSpecificOutput": {"partial')  # no trailer: the answer is incomplete
        conn.close()

    thread = threading.Thread(target=die_mid_request, daemon=True)
    thread.start()
    out, _ = call(env)
    thread.join(10)
    listener.close()
    assert seen and seen[0].startswith(b"claude\0")
    assert json.loads(out)["hookSpecificOutput"]["updatedInput"] == EXPECTED
    assert [r["command"] for r in records(env)] == ["git status"]


def test_fast_path_imports_nothing_of_the_engine(env):
    call(env)
    wait_for_server(env)
    done = subprocess.run(
        under_claude(
            Path(env["HOME"]).parent / "claude-bin",
            [sys.executable, "-S", "-I", "-X", "importtime", CLIENT, "claude"],
        ),
        input=PAYLOAD,
        capture_output=True,
        env=env,
        timeout=60,
    )
    assert json.loads(done.stdout)["hookSpecificOutput"]["updatedInput"] == EXPECTED
    imported = [line.split("|")[-1].strip() for line in done.stderr.decode().splitlines()]
    assert imported and "select" in imported
    assert not [name for name in imported if name.split(".")[0] in ("attr", "attrs", "json")]
    # of the package, only the client and its runtime folder's checks (standard library alone)
    ours = [name for name in imported if name.split(".")[0] == "rtk_policy"]
    assert ours == [
        "rtk_policy", "rtk_policy.serve", "rtk_policy.serve.runtime", "rtk_policy.serve.thin_client"
    ]  # fmt: skip


def test_bad_input_through_the_server_is_answered_like_the_hook(env):
    call(env)
    wait_for_server(env)
    out, err = call(env, b"\xff\xfe not json")
    assert out == ""
    assert err.startswith("rtk-policy hook: ") and "UTF-8" in err


def test_broken_install_says_so_and_has_no_opinion(env, tmp_path):
    """When even the in-process path cannot import, one stderr line and no output."""
    copy = tmp_path / "lonely" / "client.py"
    copy.parent.mkdir()
    copy.write_bytes(Path(CLIENT).read_bytes())
    done = subprocess.run(
        [sys.executable, "-S", "-I", str(copy), "claude"],
        input=PAYLOAD,
        capture_output=True,
        env={**env, "XDG_RUNTIME_DIR": str(tmp_path / "nothing")},
        timeout=60,
        cwd=str(tmp_path),
    )
    # a client without its package starts no server (it has no runtime folder checks)
    assert server_pid(tmp_path / "nothing" / "rtk-policy" / "engine.lock") == 0
    assert done.returncode == 0
    assert done.stdout == b"" or json.loads(done.stdout)  # an editable install may still import
    if done.stdout == b"":
        assert b"cannot decide" in done.stderr


def test_init_serve_installs_the_thin_client_and_uninstall_removes_it(env, tmp_path, monkeypatch):
    import io

    from rtk_policy.commands import init, uninstall
    from rtk_policy.settings.hook_command import unguarded

    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    out = io.StringIO()
    assert init.run(global_=True, agent="claude", serve=True, stdout=out, stderr=io.StringIO()) == 0
    assert "no opinion" in out.getvalue()
    settings = json.loads((tmp_path / "claude" / "settings.json").read_text())
    command = settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    assert unguarded(command) == [sys.executable, "-S", "-I", CLIENT, "claude"]
    done = subprocess.run(
        under_claude(tmp_path / "claude-bin", ["/bin/sh", "-c", command]),
        input=PAYLOAD,
        capture_output=True,
        env=env,
        timeout=120,
    )
    assert json.loads(done.stdout)["hookSpecificOutput"]["updatedInput"] == EXPECTED
    wait_for_server(env)
    quiet = {"stdout": io.StringIO(), "stderr": io.StringIO()}
    assert uninstall.run(global_=True, agent="claude", **quiet) == 0
    left = tmp_path / "claude" / "settings.json"
    assert not left.exists() or "client.py" not in left.read_text()


@pytest.mark.parametrize(
    ("agent", "mode", "expected"),
    [
        ("claude", None, b""),
        ("cursor", None, {}),
        ("claude", "closed", {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                                     "permissionDecisionReason": "R",
                                                     "permissionDecision": "ask"}}),
        ("copilot", "deny", {"permissionDecisionReason": "R", "permissionDecision": "deny"}),
        ("gemini", "closed", {"decision": "ask", "reason": "R", "systemMessage": "R"}),
        ("codex", "closed", {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                                    "permissionDecisionReason": "R",
                                                    "permissionDecision": "deny"}}),
        ("cursor", "deny", {"continue": True, "permission": "deny", "user_message": "R",
                            "agent_message": "R"}),
    ],
)  # fmt: skip
def test_a_broken_install_answers_like_the_delegate_script(monkeypatch, agent, mode, expected):
    """RTK_POLICY_FAIL as `hooks/rtk-policy-hook.sh` reads it: open (no opinion), closed, deny."""
    from rtk_policy.serve import client

    if mode is None:
        monkeypatch.delenv("RTK_POLICY_FAIL", raising=False)
    else:
        monkeypatch.setenv("RTK_POLICY_FAIL", mode)
    out = client.undecided(agent, "ImportError: x")
    if expected == b"":
        assert out == b""
        return
    answer = json.loads(out)
    for shape in (answer, answer.get("hookSpecificOutput", {})):
        for key in ("reason", "permissionDecisionReason", "user_message", "agent_message",
                    "systemMessage"):
            if key in shape:
                assert "ImportError: x" in shape[key]
                shape[key] = "R"
    assert answer == expected


#: run the installed client's `main` as `client.py` does, then list the loaded modules on stderr
_MODULES_PROBE = (
    "import json, sys\n"
    "sys.path.append(sys.argv.pop(1))\n"
    "from rtk_policy.serve.thin_client import main\n"
    "main(sys.argv)\n"
    "sys.stderr.write('\\nMODULES ' + json.dumps(sorted(sys.modules)) + '\\n')\n"
)
#: what a hook call through the client must never load, served or decided in-process: the http
#: hook's wire format and the terminal tables and bar (issue 20.10), attrs, the CLI parser
_NEVER_ON_THE_HOOK_PATH = ("h11", "rich", "tqdm", "attr", "attrs", "argparse", "yaml")


def _client_modules(env) -> tuple[dict, list[str]]:
    root = str(Path(CLIENT).parent.parent.parent)
    folder = Path(env["HOME"]).parent / "claude-bin"  # a child of Claude Code, as `call` runs it
    done = subprocess.run(
        under_claude(folder, [sys.executable, "-S", "-I", "-c", _MODULES_PROBE, root, "claude"]),
        input=PAYLOAD, capture_output=True, env=env, timeout=120,
    )  # fmt: skip
    err = done.stderr.decode()
    assert done.returncode == 0 and "MODULES " in err, err
    return json.loads(done.stdout), json.loads(err.rsplit("MODULES ", 1)[1])


def test_a_client_call_never_loads_h11_or_rich_served_or_in_process(env):
    """Issue 20.10: the libraries of `serve --http` and of the terminal output stay unloaded."""
    # no server yet: the client starts one and decides in-process (the whole hook path)
    answer, modules = _client_modules(env)
    assert answer["hookSpecificOutput"]["updatedInput"] == EXPECTED
    assert "rtk_policy.hook.service" in modules  # it did decide in this process
    assert [name for name in _NEVER_ON_THE_HOOK_PATH if name in modules] == []
    wait_for_server(env)
    answer, modules = _client_modules(env)  # served: the engine is the server's
    assert answer["hookSpecificOutput"]["updatedInput"] == EXPECTED
    assert "rtk_policy.hook.service" not in modules
    assert [name for name in _NEVER_ON_THE_HOOK_PATH if name in modules] == []
