"""The loopback http hook server on raw sockets: keep-alive, pipelining, partial and aborted
requests, the refusals (400/403/405/408/411/413/431/505), the audit record of every answered
decision, and the stat-checked folder facts of the resident engine."""

from __future__ import annotations

import json
import os
import socket
import threading
import time

import pytest
from conftest import private_folders

from rtk_policy.serve import server as serve

from rtk_policy.serve import http_hook as serve_http

from rtk_policy.serve import http_wire as serve_http_wire
from rtk_policy.audit.verify import verify
from rtk_policy.serve.memo import FolderFacts


def payload(command: str, tool_use_id: str = "t1") -> bytes:
    """A Claude Code PreToolUse payload for `command`."""
    return json.dumps(
        {
            "session_id": "s1",
            "tool_use_id": tool_use_id,
            "cwd": "/tmp",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": command, "description": "d"},
        }
    ).encode()


def post(body: bytes, extra: str = "", host: str = "127.0.0.1") -> bytes:
    """The bytes of one request posting `body` (with `extra` header lines)."""
    head = (
        f"POST /hook/claude HTTP/1.1\r\nHost: {host}\r\nContent-Length: {len(body)}\r\n{extra}\r\n"
    )
    return head.encode() + body


@pytest.fixture()
def env(tmp_path, monkeypatch):
    """A private HOME, config, state and runtime folder."""
    for name, value in private_folders(tmp_path).items():
        monkeypatch.setenv(name, value)
    for name in ("CLAUDE_PROJECT_DIR", "RTK_POLICY_FAIL", "RTK_POLICY_BACKEND"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


@pytest.fixture()
def httpd(env):
    server = serve_http.start_http(serve.Resident(), 0)
    yield server
    server.shutdown()
    server.server_close()


def connect(server) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", server.server_address[1]), timeout=30)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


class Reader:
    """Reads whole answers (status, headers, body) off a socket."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.data = b""

    def answer(self) -> tuple[int, dict[str, str], bytes]:
        """The next answer: status, headers (lower-case names) and body."""
        while b"\r\n\r\n" not in self.data:
            self._more()
        head, self.data = self.data.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        length = int(headers.get("content-length", "0"))
        while len(self.data) < length:
            self._more()
        body, self.data = self.data[:length], self.data[length:]
        return int(lines[0].split()[1]), headers, body

    def closed(self) -> bool:
        """True when the server closed the connection (after what was already read)."""
        return self.sock.recv(1) == b""

    def _more(self) -> None:
        chunk = self.sock.recv(65536)
        assert chunk, "connection closed before a whole answer"
        self.data += chunk


def records(env) -> list[dict]:
    path = env / "state" / "rtk-policy" / "audit.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def verdict(body: bytes) -> str:
    return json.loads(body).get("hookSpecificOutput", {}).get("permissionDecision", "")


def test_keep_alive_answers_several_requests_on_one_connection_and_audits_each(httpd, env):
    with connect(httpd) as sock:
        reader = Reader(sock)
        for n, command in enumerate(["git status", "rm -rf /", "git status"]):
            sock.sendall(post(payload(command, f"t{n}")))
            status, headers, body = reader.answer()
            assert status == 200 and headers["content-type"] == "application/json"
            assert "connection" not in headers
        # Claude Code's read-only set: allowed; an http hook cannot read Claude Code's command
        # line (its deny rules), so no rewrite is handed over (engine/gating.py, unseen-rules)
        assert verdict(body) == "allow"
        assert "updatedInput" not in json.loads(body)["hookSpecificOutput"]
    logged = records(env)
    assert [r["command"] for r in logged] == ["git status", "rm -rf /", "git status"]
    assert [r["tool_use_id"] for r in logged] == ["t0", "t1", "t2"]
    assert verify(str(env / "state" / "rtk-policy" / "audit.jsonl")).ok


def test_pipelined_requests_are_answered_in_order(httpd, env):
    commands = ["rm -rf /", "git status", "ls", "rm -rf /"]
    with connect(httpd) as sock:
        sock.sendall(b"".join(post(payload(c, f"p{n}")) for n, c in enumerate(commands)))
        reader = Reader(sock)
        answers = [reader.answer() for _ in commands]
    assert [a[0] for a in answers] == [200] * 4
    assert verdict(answers[0][2]) == "deny" and verdict(answers[3][2]) == "deny"
    assert [verdict(a[2]) for a in answers[1:3]] == ["allow", "allow"]  # read-only, not rewritten
    assert not any("updatedInput" in json.loads(a[2])["hookSpecificOutput"] for a in answers[1:3])
    assert [r["tool_use_id"] for r in records(env)] == ["p0", "p1", "p2", "p3"]


def test_a_client_that_reads_late_gets_every_pipelined_answer(env, monkeypatch):
    monkeypatch.setattr(serve_http, "_BUFFER_LIMIT", 1000)  # room for a few answers only
    server = serve_http.start_http(serve.Resident(), 0)
    try:
        with connect(server) as sock:
            sock.sendall(b"".join(post(payload("rm -rf /", f"b{n}")) for n in range(20)))
            time.sleep(0.3)  # the server fills its outbox and stops taking requests
            reader = Reader(sock)
            answers = [reader.answer() for _ in range(20)]
    finally:
        server.shutdown()
        server.server_close()
    assert all(status == 200 and verdict(body) == "deny" for status, _, body in answers)
    assert [r["tool_use_id"] for r in records(env)] == [f"b{n}" for n in range(20)]


def test_a_request_arriving_in_pieces_is_answered_once_whole(httpd, env):
    data = post(payload("rm -rf /"))
    with connect(httpd) as sock:
        for cut in (5, 40, len(data) - 10, len(data)):  # inside the request line, head and body
            sock.sendall(data[:cut])
            data = data[cut:]
            time.sleep(0.05)
            if not data:
                break
        status, _, body = Reader(sock).answer()
    assert status == 200 and verdict(body) == "deny"
    assert len(records(env)) == 1


def test_expect_100_continue_gets_an_interim_answer(httpd):
    body = payload("rm -rf /")
    with connect(httpd) as sock:
        head = post(body, "Expect: 100-continue\r\n")[: -len(body)]
        sock.sendall(head)
        reader = Reader(sock)
        assert reader.answer()[0] == 100
        sock.sendall(body)
        status, _, answer = reader.answer()
    assert status == 200 and verdict(answer) == "deny"


@pytest.mark.parametrize(
    ("extra", "host", "status"),
    [
        ("Origin: https://evil.example\r\n", "127.0.0.1", 403),
        ("Origin: null\r\n", "localhost:8080", 403),
        ("", "evil.example", 403),
        ("", "127.0.0.1.evil.example:80", 403),
        ("Transfer-Encoding: chunked\r\n", "127.0.0.1", 411),
        ("Content-Length: 3\r\n", "127.0.0.1", 400),  # a second, different length
    ],
)
def test_refused_requests_are_not_judged_and_close_the_connection(httpd, env, extra, host, status):
    with connect(httpd) as sock:
        sock.sendall(post(payload("rm -rf /"), extra, host))
        reader = Reader(sock)
        got, headers, body = reader.answer()
        assert got == status and headers["connection"] == "close"
        assert b"permissionDecision" not in body
        assert reader.closed()
    assert records(env) == []


@pytest.mark.parametrize(
    ("length", "status"),
    [("abc", 400), ("-1", 400), ("1e3", 400), (" 12x", 400), ("1, 2", 400),
     (str(2 * 1024 * 1024), 413), ("9" * 20, 413)],
)  # fmt: skip
def test_a_bad_content_length_gets_400_and_too_large_one_413(httpd, env, length, status):
    """A length that is not plain digits is malformed (h11 refuses it); one over 1 MiB is too
    large. Either way nothing is judged and the connection closes."""
    with connect(httpd) as sock:
        head = f"POST /hook/claude HTTP/1.1\r\nHost: localhost\r\nContent-Length: {length}\r\n\r\n"
        sock.sendall(head.encode() + b"{}")
        reader = Reader(sock)
        assert reader.answer()[0] == status
        assert reader.closed()
    assert records(env) == []


@pytest.mark.parametrize(
    ("data", "status"),
    [
        (b"GET /hook/claude HTTP/1.1\r\nHost: localhost\r\n\r\n", 405),
        (b"PUT /hook/claude HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n\r\n", 405),
        (b"POST /hook/claude HTTP/2.0\r\nHost: localhost\r\n\r\n", 505),
        (b"POST /hook/claude\r\nHost: localhost\r\n\r\n", 400),
        (b"POST /hook/claude HTTP/1.1\r\nHost: localhost\r\n folded: x\r\n\r\n", 400),
        (b"POST /hook/claude HTTP/1.1\r\nHost: localhost\nX-A: b\r\n\r\n", 400),
        (b"POST /hook/claude HTTP/1.1\r\nX-Big: " + b"a" * 20000 + b"\r\n\r\n", 431),
        (b"POST /hook/claude HTTP/1.1\r\nHost: localhost\rX-A: b\r\n\r\n", 400),
        (b"POST /hook/claude HTTP/1.1\r\nHost: a\r\nHost: b\r\nContent-Length: 2\r\n\r\n{}", 400),
        (b"POST /hook/claude HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}", 400),  # no Host
        (b"POST /hook/claude HTTP/1.1\r\nHost: localhost\r\nX-A b\r\n\r\n", 400),
    ],
)
def test_malformed_and_other_method_requests_are_refused(httpd, env, data, status):
    with connect(httpd) as sock:
        sock.sendall(data)
        reader = Reader(sock)
        got, headers, _ = reader.answer()
        assert got == status
        assert headers["connection"] == "close"
        if status == 405:
            assert headers["allow"] == "POST"
    assert records(env) == []


def test_a_client_that_disconnects_mid_body_leaves_no_record_and_no_harm(httpd, env):
    body = payload("rm -rf /")
    with connect(httpd) as sock:
        sock.sendall(post(body)[:-20])
        time.sleep(0.05)
    with connect(httpd) as sock:  # the server still answers others
        sock.sendall(post(payload("git status")))
        assert Reader(sock).answer()[0] == 200
    assert [r["command"] for r in records(env)] == ["git status"]
    assert len(httpd._connections) <= 1


def test_http_1_0_and_connection_close_end_the_connection_after_the_answer(httpd):
    for request in (
        post(payload("ls")).replace(b"HTTP/1.1", b"HTTP/1.0", 1),
        post(payload("ls"), "Connection: close\r\n"),
    ):
        with connect(httpd) as sock:
            sock.sendall(request)
            reader = Reader(sock)
            status, headers, _ = reader.answer()
            assert status == 200 and headers["connection"] == "close"
            assert reader.closed()


def test_a_stalled_request_times_out_with_408(env, monkeypatch):
    monkeypatch.setattr(serve_http, "REQUEST_TIMEOUT", 0.2)
    server = serve_http.http_server(serve.Resident(), 0)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        with connect(server) as sock:
            sock.sendall(b"POST /hook/claude HTTP/1.1\r\nHost: local")
            reader = Reader(sock)
            assert reader.answer()[0] == 408
            assert reader.closed()
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
    assert not thread.is_alive()


def test_shutdown_returns_after_the_loop_ends_and_records_are_written(env):
    server = serve_http.start_http(serve.Resident(), 0)
    with connect(server) as sock:
        sock.sendall(post(payload("rm -rf /")))
        assert Reader(sock).answer()[0] == 200
        server.shutdown()
    server.server_close()
    assert len(records(env)) == 1
    server.shutdown()  # a second call does not hang


def test_the_server_listens_on_loopback_only():
    with pytest.raises(ValueError):
        serve_http.http_server(serve.Resident(), 0, host="0.0.0.0")


class _Pending(serve_http_wire.Connection):
    """The state `next_request` works on, without a socket."""

    def __init__(self, data: bytes) -> None:
        super().__init__(None, "127.0.0.1")
        self.inbox = bytearray(data)


def test_next_request_takes_whole_requests_and_keeps_the_rest():
    first, second = post(b'{"a":1}'), post(b"{}", "Connection: close\r\n")
    state = _Pending(b"\r\n" + first + second[:10])
    request = serve_http_wire.next_request(state)
    assert request.method == "POST" and request.body == b'{"a":1}' and not request.close
    assert request.headers["host"] == "127.0.0.1"
    assert serve_http_wire.answer(state, b"{}").startswith(b"HTTP/1.1 200 OK\r\n")
    assert not state.closing  # keep-alive: h11 starts the next request cycle
    assert serve_http_wire.next_request(state) is None
    state.inbox += second[10:]
    request = serve_http_wire.next_request(state)
    assert request.body == b"{}" and request.close
    assert b"Connection: close" in serve_http_wire.answer(state, b"{}") and state.closing
    assert not state.inbox and state.pending is None


def test_folder_facts_follow_changes_of_the_claude_settings(env, monkeypatch):
    monkeypatch.setattr("rtk_policy.serve.memo.RACY_NS", 0)
    project = env / "home" / "project"
    (project / ".claude").mkdir(parents=True)
    sub = project / "src"
    sub.mkdir()
    settings = project / ".claude" / "settings.json"
    facts = FolderFacts(recheck=0)  # every request stats (the interval has its own test)

    def rules() -> tuple:
        facts.new_request()
        return facts.claude_rules(str(sub))

    assert rules() == ((), (), ())
    assert facts.claude_project_dir(str(sub)) == str(project)
    settings.write_text(json.dumps({"permissions": {"deny": ["Bash(frob:*)"]}}))
    assert rules()[0] == ("frob:*",)
    settings.write_text(json.dumps({"permissions": {"ask": ["Bash(frob:*)"]}}))
    os.utime(settings, ns=(1, 1))  # even a same-size rewrite with an old mtime changes the stamp
    assert rules()[1] == ("frob:*",)
    (sub / ".rtk-policy").mkdir()
    facts.new_request()
    assert facts.project_dir(str(sub)) == str(sub)
    settings.write_text("{broken")

    class Err:
        text = ""

        def write(self, text: str) -> None:
            Err.text += text

    facts.new_request()
    assert facts.claude_rules(str(sub), Err()) == ((), (), ())
    assert "malformed" in Err.text


def test_folder_facts_re_read_a_file_written_in_the_same_timestamp_tick(env):
    project = env / "home" / "fresh"
    (project / ".claude").mkdir(parents=True)
    settings = project / ".claude" / "settings.json"
    now = time.time_ns()
    facts = FolderFacts(recheck=0)
    for verdict_list in ("deny", "ask"):  # same size, same inode, same mtime: the stamp is equal
        settings.write_text(json.dumps({"permissions": {verdict_list: ["Bash(frob:*)"]}}))
        os.utime(settings, ns=(now, now))
        facts.new_request()
        rules = facts.claude_rules(str(project))
    assert rules == ((), ("frob:*",), ())


def test_serve_with_http_answers_and_leaves_every_record_on_sigterm(env):
    import signal
    import subprocess
    import sys

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "rtk_policy", "serve", "--http", str(port), "--idle", "60"],
        env=dict(os.environ),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                sock = socket.create_connection(("127.0.0.1", port), timeout=30)
                break
            except OSError:
                assert time.monotonic() < deadline and process.poll() is None
                time.sleep(0.1)
        with sock:
            commands = ["rm -rf /", "git status", "ls"]
            sock.sendall(b"".join(post(payload(c, f"s{n}")) for n, c in enumerate(commands)))
            reader = Reader(sock)
            assert [reader.answer()[0] for _ in commands] == [200, 200, 200]
            process.send_signal(signal.SIGTERM)
            assert process.wait(30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert [r["tool_use_id"] for r in records(env)] == ["s0", "s1", "s2"]
    assert process.stderr.read() == b""
    process.stderr.close()


COLD_HOOKS = """
import io, json, sys
from rtk_policy.hook.service import answer_payload
for n in range(int(sys.argv[1])):
    body = {"session_id": "cold", "tool_use_id": f"c{n}", "cwd": "/tmp", "tool_name": "Bash",
            "tool_input": {"command": "git status" if n % 2 else "rm -rf /"}}
    answer_payload(json.dumps(body).encode(), "claude")
"""


def test_a_mixed_run_of_the_server_and_cold_hooks_keeps_one_valid_chain(httpd, env):
    """The server's batched appends (with its remembered last hash) and in-process hooks of other
    processes write the same log at once: every record is there once and the chain verifies."""
    import subprocess
    import sys

    cold = [
        subprocess.Popen([sys.executable, "-c", COLD_HOOKS, "30"], stderr=subprocess.PIPE)
        for _ in range(2)
    ]
    sent = 0
    with connect(httpd) as sock:
        reader = Reader(sock)
        while any(process.poll() is None for process in cold) or sent < 60:
            batch = [payload("git status" if n % 3 else "ls", f"h{sent + n}") for n in range(4)]
            sock.sendall(b"".join(post(body) for body in batch))
            assert [reader.answer()[0] for _ in batch] == [200] * 4
            sent += len(batch)
    assert [process.wait(120) for process in cold] == [0, 0]
    assert [process.stderr.read() for process in cold] == [b"", b""]
    found = [r["tool_use_id"] for r in records(env)]
    colds = [i for i, name in enumerate(found) if name.startswith("c")]
    assert any(name.startswith("h") for name in found[colds[0] : colds[-1]])  # interleaved
    assert sorted(found) == sorted(
        [f"h{n}" for n in range(sent)] + [f"c{n}" for n in range(30)] * 2
    )
    result = verify(str(env / "state" / "rtk-policy" / "audit.jsonl"))
    assert result.ok and result.records == sent + 60


def test_folder_facts_ignore_new_files_in_the_cwd_but_not_new_markers(env, monkeypatch):
    """A folder counts by its identity (a build writing files in the cwd does not re-read the
    facts); a marker or settings file appearing does."""
    import rtk_policy.serve.memo as memo

    monkeypatch.setattr(memo, "RACY_NS", 0)
    reads = []
    real = memo._read_facts
    monkeypatch.setattr(memo, "_read_facts", lambda cwd: reads.append(cwd) or real(cwd))
    project = env / "home" / "busy"
    (project / ".git").mkdir(parents=True)
    facts = FolderFacts(recheck=0)

    def project_dir():
        facts.new_request()
        return facts.claude_project_dir(str(project))

    assert project_dir() == str(project) and len(reads) == 1
    (project / "build.log").write_text("x")
    os.utime(project, ns=(1, 1))  # the folder's own mtime changed too
    assert project_dir() == str(project) and len(reads) == 1
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text('{"permissions": {"deny": ["Bash(x:*)"]}}')
    facts.new_request()
    assert facts.claude_rules(str(project))[0] == ("x:*",) and len(reads) == 2


def _h11_answer(request: bytes, body: bytes) -> tuple[bytes, bool]:
    """What h11 itself writes for a 200 JSON answer to `request`, and whether it must close."""
    import h11

    wire = h11.Connection(h11.SERVER)
    wire.receive_data(request)
    while type(wire.next_event()) is not h11.EndOfMessage:
        pass
    headers = [(b"Content-Type", b"application/json"), (b"Content-Length", b"%d" % len(body))]
    data = wire.send(h11.Response(status_code=200, reason=b"OK", headers=headers))
    data += wire.send(h11.Data(data=body)) + wire.send(h11.EndOfMessage())
    return data, wire.our_state is not h11.DONE


@pytest.mark.parametrize(
    "head",
    [
        b"POST /hook/claude HTTP/1.1\r\nHost: x\r\n",
        b"POST /hook/claude HTTP/1.1\r\nHost: x\r\nConnection: close\r\n",
        b"POST /hook/claude HTTP/1.1\r\nHost: x\r\nConnection: Keep-Alive, CLOSE\r\n",
        b"POST /hook/claude HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n",
        b"POST /hook/claude HTTP/1.0\r\n",
        b"POST /hook/claude HTTP/1.0\r\nConnection: keep-alive\r\n",
    ],
)
def test_answers_are_the_bytes_h11_writes_and_close_when_h11_would(head):
    """The 200 answer is written without h11's sending machinery: the same bytes, the same
    decision to close; a kept connection reads its next request with a fresh h11 machine."""
    request = head + b"Content-Length: 2\r\n\r\n{}"
    body = b'{"hookSpecificOutput":{"permissionDecision":"allow"}}'
    connection = serve_http_wire.Connection(None, "127.0.0.1")
    for _ in range(2):  # the second request on a kept connection, as pipelined clients send it
        connection.inbox += request
        taken = serve_http_wire.next_request(connection)
        assert taken is not None and taken.body == b"{}"
        data = serve_http_wire.answer(connection, body)
        assert (data, connection.closing) == _h11_answer(request, body)
        if connection.closing:
            break
