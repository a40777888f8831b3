"""The resident server answers calls at the same time (issue 18): a short call is answered while a
long one is still being decided, and every answer is the one its own client's forwarded
environment gives, however many clients with other environments call at once. Real server, real
socket, real threads."""

from __future__ import annotations

import json
import os
import threading
import time

import pytest
from conftest import private_folders

from rtk_policy.hook.service import answer_payload
from rtk_policy.serve import client
from rtk_policy.serve import server as serve
from rtk_policy.serve.thin_client import FORWARDED_ENV
from rtk_policy.util import environ

pytestmark = pytest.mark.budget  # the wall-clock budget is kept (tests/conftest.py)


def payload(command: str, cwd: str = "/tmp", tool_use_id: str = "t1") -> bytes:
    """A Claude Code PreToolUse payload for `command`."""
    return json.dumps(
        {
            "session_id": "s1",
            "cwd": cwd,
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_use_id": tool_use_id,
            "tool_input": {"command": command},
        }
    ).encode()


#: ~250 KiB of deletions: decided up to the time budget (~0.75 s), as `benchmarks/bounded_time.py`
LONG = "cd /tmp; " + "; ".join(f"rm -rf x{i}" for i in range(20000))[: 250 * 1024]


class Running:
    """`serve.serve_socket` in a thread of this process, on the private socket of `env`."""

    def __init__(self) -> None:
        self.resident = serve.Resident()
        self.path = client.socket_path()
        self.thread = threading.Thread(
            target=serve.serve_socket, args=(self.resident, self.path, 60.0), daemon=True
        )
        self.thread.start()
        deadline = time.monotonic() + 60
        while client.ask_server("claude", b"", self.path) is None:
            assert self.thread.is_alive() and time.monotonic() < deadline, "server did not start"
            time.sleep(0.02)

    def stop(self) -> None:
        """Make it idle out and wait for it."""
        deadline = time.monotonic() + 30
        while self.thread.is_alive() and time.monotonic() < deadline:
            self.resident.last_request = -1e9
            self.thread.join(0.1)
        assert not self.thread.is_alive()


@pytest.fixture()
def server(tmp_path, monkeypatch):
    for name, value in private_folders(tmp_path).items():
        monkeypatch.setenv(name, value)
    for name in ("CLAUDE_CONFIG_DIR", "CLAUDE_PROJECT_DIR", "RTK_POLICY_FAIL"):
        monkeypatch.delenv(name, raising=False)
    running = Running()
    yield running
    running.stop()


def test_a_short_call_is_answered_while_a_long_one_is_decided(server):
    finished: list[str] = []
    answers: dict[str, tuple[bytes, bytes] | None] = {}

    def ask(name: str, data: bytes) -> None:
        answers[name] = client.ask_server("claude", data, server.path)
        finished.append(name)

    started = server.resident.last_request
    long_call = threading.Thread(target=ask, args=("long", payload(LONG)))
    long_call.start()
    deadline = time.monotonic() + 30
    while server.resident.last_request == started:  # set when the server starts answering it
        assert time.monotonic() < deadline, "the long call never reached the server"
        time.sleep(0.001)
    ask("short", payload("git status"))
    long_call.join(60)
    assert finished == ["short", "long"]
    short, long_answer = answers["short"], answers["long"]
    assert short is not None and long_answer is not None
    assert json.loads(short[0])["hookSpecificOutput"]["permissionDecision"] == "allow"
    assert json.loads(long_answer[0])["hookSpecificOutput"]["permissionDecision"] in ("ask", "deny")


def client_env(folder, fail_mode: str | None = None, disabled: tuple[str, ...] = ()) -> dict:
    """The forwarded environment of a client of its own: HOME, config, state, project folder."""
    env = {name: os.environ[name] for name in FORWARDED_ENV if name in os.environ}
    for name, sub in (("HOME", "home"), ("XDG_CONFIG_HOME", "config"), ("XDG_STATE_HOME", "state")):
        (folder / sub).mkdir(parents=True)
        env[name] = str(folder / sub)
    #: outside the shared temporary folders, where deleting is judged against the project
    env["CLAUDE_PROJECT_DIR"] = f"/srv/rtk-policy-test-{folder.name}"
    lines = [f'fail_mode = "{fail_mode}"'] if fail_mode else []
    lines.append(f"disabled_rules = {json.dumps(list(disabled))}")
    (folder / "config" / "rtk-policy").mkdir()
    (folder / "config" / "rtk-policy" / "config.toml").write_text("\n".join(lines) + "\n")
    return env


def calls(first: dict, second: dict) -> list[bytes]:
    """Payloads whose answers depend on the client's HOME, project folder or config."""
    commands = [
        "git reset --hard",  # disabled by the first client's config
        "echo x >> ~/.bashrc",
        "rm -rf ~/x",
        "rm -rf ~/x*",  # a glob: decided again on every call, never remembered
        "git status && ls -la | head",
        LONG[:250],  # ~20 commands: the threads interleave inside one decision, well in budget
    ]
    for env in (first, second):
        commands += [
            f"echo x >> {env['HOME']}/.bashrc",
            f"rm -rf {env['CLAUDE_PROJECT_DIR']}/build",
        ]
    return [payload(command) for command in commands] + [b"not json"]  # fail mode


def alone(data: bytes, env: dict, monkeypatch) -> tuple[str, str]:
    """The in-process hook's answer under `env` (nothing else running)."""
    with monkeypatch.context() as patch:
        for name in FORWARDED_ENV:
            patch.delenv(name, raising=False)
        for name, value in env.items():
            patch.setenv(name, value)
        answer = answer_payload(data, "claude")
    return answer.stdout, answer.stderr


def test_each_answer_is_the_one_of_its_own_clients_environment(server, tmp_path, monkeypatch):
    first = client_env(tmp_path / "first", fail_mode="deny", disabled=("git-reset-hard",))
    second = client_env(tmp_path / "second")
    datas = calls(first, second)
    expected = {}
    for name, env in (("first", first), ("second", second)):
        for index, data in enumerate(datas):
            got = client.ask_server("claude", data, server.path, env)
            assert got is not None
            answer = (got[0].decode(), got[1].decode())
            assert answer == alone(data, env, monkeypatch)  # one call at a time: the hook's own
            expected[name, index] = answer
    differ = [i for i in range(len(datas)) if expected["first", i] != expected["second", i]]
    assert differ == [0, 1, 6, 7, 8, 9, 10]  # by config, HOME and project folder

    failures: list[str] = []

    def hammer(name: str, env: dict, shift: int) -> None:
        for round_ in range(6):
            for step in range(len(datas)):
                index = (step + shift + round_) % len(datas)
                got = client.ask_server("claude", datas[index], server.path, env)
                answer = None if got is None else (got[0].decode(), got[1].decode())
                if answer != expected[name, index]:
                    failures.append(f"{name} call {index}: {answer!r}")

    threads = [
        threading.Thread(target=hammer, args=(name, env, shift))
        for shift in range(4)
        for name, env in (("first", first), ("second", second))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    assert not failures, failures[:3]
    assert environ.current() is None  # no view left behind in this thread
    assert os.environ["HOME"] not in (first["HOME"], second["HOME"])  # never set for a call


def test_a_call_without_forwarded_variables_reads_none_of_the_servers_own(server, tmp_path):
    strict = client_env(tmp_path / "strict", fail_mode="deny")
    os.environ["RTK_POLICY_FAIL"] = "deny"  # the server's own environment (the test's process)
    try:
        env = {name: value for name, value in strict.items() if name != "RTK_POLICY_FAIL"}
        env["XDG_CONFIG_HOME"] = str(tmp_path / "nothing")
        got = client.ask_server("claude", b"not json", server.path, env)
    finally:
        del os.environ["RTK_POLICY_FAIL"]
    assert got is not None and got[0] == b""  # open: the client has no RTK_POLICY_FAIL


def test_threads_parsing_at_once_each_get_their_own_command_lines():
    from rtk_policy.shell import parse

    texts = [f"cd /srv/{n}; " + "; ".join(f"rm -rf x{n}_{i}" for i in range(400)) for n in range(6)]
    alone_ = [parse(text) for text in texts]
    got: dict[int, list] = {n: [] for n in range(len(texts))}

    def parse_often(n: int) -> None:
        for _ in range(4):
            got[n].append(parse(texts[n]))

    threads = [threading.Thread(target=parse_often, args=(n,)) for n in range(len(texts))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    for n, lines in got.items():
        assert len(lines) == 4 and all(line == alone_[n] for line in lines)
