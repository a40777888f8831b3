"""The real console path, `python -m rtk_policy hook claude`, fed hostile stdin: exit 0, one stderr line,
valid or empty stdout. Cases that need the real engine skip while it cannot be loaded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fakes import under_claude

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
DELEGATE = ROOT / "hooks" / "claude" / "rtk-rewrite.sh"

PAYLOAD = {
    "session_id": "abc",
    "transcript_path": "/tmp/t.jsonl",
    "cwd": "/tmp",
    "permission_mode": "default",
    "hook_event_name": "PreToolUse",
    "tool_name": "Bash",
    "tool_use_id": "toolu_1",
    "tool_input": {
        "command": "git status",
        "description": "status",
        "timeout": 1000,
        "run_in_background": False,
    },
}


@pytest.fixture()
def env(tmp_path):
    """A process environment with a private HOME, config and state."""
    values = dict(os.environ)
    values.update(
        HOME=str(tmp_path / "home"),
        XDG_STATE_HOME=str(tmp_path / "state"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        RTK_POLICY_STDIN_TIMEOUT="0.5",
    )
    for name in ("CLAUDE_CONFIG_DIR", "CLAUDE_PROJECT_DIR", "RTK_POLICY_FAIL"):
        values.pop(name, None)
    return values


def run_hook(data: bytes, env, *extra: str):
    """The hook's answer, run as Claude Code runs it (a child of Claude Code's process)."""
    folder = Path(env["HOME"]).parent / "claude-bin"
    done = subprocess.run(
        under_claude(folder, [PYTHON, "-m", "rtk_policy", "hook", "claude", *extra]),
        input=data,
        capture_output=True,
        env=env,
        timeout=60,
        cwd="/tmp",
    )
    return done.returncode, done.stdout.decode(), done.stderr.decode()


def engine_available() -> bool:
    try:
        from rtk_policy.engine.pipeline import load_engine

        load_engine()
        return True
    except Exception:  # noqa: BLE001
        return False


needs_engine = pytest.mark.skipif(
    not engine_available(), reason="the real engine does not load yet"
)

HOSTILE = {
    "empty": b"",
    "bom": b"\xef\xbb\xbf",
    "malformed": b"not valid json {{{",
    "missing command": json.dumps(
        {"tool_name": "Bash", "tool_input": {"description": "x"}}
    ).encode(),
    "non-string command": json.dumps({"tool_name": "Bash", "tool_input": {"command": 7}}).encode(),
    "over 1 MiB": b'{"tool_input":{"command":"' + b"x" * (1024 * 1024 + 10) + b'"}}',
    "invalid utf-8": b"\xc3\x28\xa0\xa1 binary \x00\xff",
}


@pytest.mark.parametrize("data", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_stdin_fails_open(data, env):
    code, out, err = run_hook(data, env)
    assert code == 0 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize(
    "data", [HOSTILE["malformed"], HOSTILE["invalid utf-8"]], ids=["malformed", "utf8"]
)
def test_hostile_stdin_fails_closed_when_configured(data, env, tmp_path):
    config = tmp_path / "closed.toml"
    config.write_text('fail_mode = "closed"\n')
    code, out, err = run_hook(data, env, "--config", str(config))
    assert code == 0 and err.count("\n") == 1
    assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "ask"


def test_stdin_that_never_closes(env):
    process = subprocess.Popen(
        [PYTHON, "-m", "rtk_policy", "hook", "claude"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        process.stdin.write(b'{"tool_name": "Bash", ')
        process.stdin.flush()
        code = process.wait(timeout=30)  # returns although stdin is still open
        out, err = process.stdout.read(), process.stderr.read()
    finally:
        process.stdin.close()
        if process.poll() is None:
            process.kill()
    assert code == 0 and out == b""
    assert err.decode().count("\n") == 1 and b"not closed" in err


def test_non_shell_tool_is_silent(env):
    code, out, err = run_hook(json.dumps({**PAYLOAD, "tool_name": "Read"}).encode(), env)
    assert (code, out, err) == (0, "", "")


@needs_engine
def test_real_payload_answers_valid_json_or_nothing(env):
    code, out, err = run_hook(json.dumps(PAYLOAD).encode(), env)
    assert code == 0 and "Traceback" not in err
    if out:
        answer = json.loads(out)
        updated = answer.get("hookSpecificOutput", {}).get("updatedInput")
        if updated is not None:
            assert {k: v for k, v in updated.items() if k != "command"} == {
                k: v for k, v in PAYLOAD["tool_input"].items() if k != "command"
            }


def test_delegate_script_fails_open_or_closed_without_the_binary(env):
    env = {**env, "RTK_POLICY_BIN": "/nonexistent/rtk-policy"}
    done = subprocess.run(
        ["sh", str(DELEGATE)],
        input=json.dumps(PAYLOAD).encode(),
        capture_output=True,
        env=env,
        timeout=30,
    )
    assert done.returncode == 0 and done.stdout == b"" and done.stderr.count(b"\n") == 1
    done = subprocess.run(
        ["sh", str(DELEGATE)],
        input=b"{}",
        capture_output=True,
        timeout=30,
        env={**env, "RTK_POLICY_FAIL": "closed"},
    )
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "ask"


@pytest.mark.parametrize(
    "data", [HOSTILE["malformed"], json.dumps({**PAYLOAD, "tool_name": "Edit"}).encode()]
)
def test_delegate_matches_the_direct_command(data, env, tmp_path):
    wrapper = tmp_path / "rtk-policy"
    wrapper.write_text(f'#!/bin/sh\nexec "{PYTHON}" -m rtk_policy "$@"\n')
    wrapper.chmod(0o755)
    delegate = subprocess.run(
        ["sh", str(DELEGATE)],
        input=data,
        capture_output=True,
        timeout=60,
        env={**env, "RTK_POLICY_BIN": str(wrapper)},
        cwd="/tmp",
    )
    code, out, err = run_hook(data, env)
    assert (delegate.returncode, delegate.stdout.decode(), delegate.stderr.decode()) == (
        code,
        out,
        err,
    )


@needs_engine
def test_the_hook_exits_without_teardown_and_loses_nothing(env, tmp_path):
    """`cli()` ends a hook call with `os._exit`: the answer, the exit code and the audit record
    must all be there, for a large answer too (a deny with its message)."""
    for command, expected in (("git status", "rtk git status"), ("rm -rf /", '"deny"')):
        payload = dict(PAYLOAD, tool_input={"command": command})
        code, out, err = run_hook(json.dumps(payload).encode(), env)
        assert code == 0 and expected in out and out.endswith("\n"), (out, err)
        json.loads(out)
    log = tmp_path / "state" / "rtk-policy" / "audit.jsonl"
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["command"] for r in records[-2:]] == ["git status", "rm -rf /"]


def test_other_subcommands_exit_normally_with_their_code(env):
    """Only `hook` skips the teardown; `rewrite` keeps its exit codes (1: nothing to rewrite)."""
    done = subprocess.run(
        [PYTHON, "-m", "rtk_policy", "rewrite", "frobnicate --now"],
        capture_output=True, env=env, timeout=60, cwd="/tmp",
    )
    assert done.returncode == 1 and done.stdout == b""
