"""Load generator for the loopback http hook: N concurrent closed-loop keep-alive clients.

Usage: python benchmarks/http_load.py [--clients 8] [--requests 4000] [--seconds 60] [--unique]
Starts `rtk-policy serve --http PORT` itself (private runtime folder) unless --port is given, and
prints one JSON line: decisions per second, p50/p90/p99/max latency per decision in milliseconds,
and the CPU time per decision spent by the server (and the kernel's part of it) and by this load
generator. Loopback only.

Method (what a figure means):
- Each of the N clients is one TCP keep-alive connection with at most one request in flight (closed
  loop, no think time): it sends a request, waits for the whole answer, then sends the next one.
- A latency is the whole round trip of one decision: from just before the request's bytes are sent
  to the moment the last byte of the answer (status line, headers and Content-Length body) has been
  read.
- Every request carries its own `tool_use_id`, as Claude Code's do (so no answer can be replayed
  from the bytes of an earlier request); the command is the same in all (the server's outcome memo
  hits) or, with `--unique`, different in each (every request misses it and is evaluated).
- The N clients are driven by one thread with `selectors` over raw non-blocking sockets, and every
  request's bytes are built before the clock starts, so the generator's own cost per decision stays
  small; it is reported (`client_cpu_us`) next to the server's (`server_cpu_us`, from /proc). Both
  run on the same cores, so the generator's share is part of what the server competes with.
- A warm-up of 200 sequential requests precedes the measured run; the run stops after `--requests`
  answers in total or `--seconds`, whichever comes first. Every answer must be `200`.
"""

from __future__ import annotations

import argparse
import json
import os
import selectors
import socket
import subprocess
import sys
import tempfile
import time

PAYLOAD = json.dumps(
    {
        "session_id": "bench",
        "cwd": "/tmp",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "git status", "description": "bench"},
    }
).encode()


def free_port() -> int:
    """An unused loopback TCP port."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def request_bytes(port: int, body: bytes) -> bytes:
    """The whole HTTP/1.1 request posting `body` to the Claude hook path."""
    head = (
        f"POST /hook/claude HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


def bodies(payload: bytes, count: int, unique: bool, tag: str) -> list[bytes]:
    """`count` payloads, each with its own `tool_use_id` (as Claude Code sends them), the same
    command in all, or (`unique`) a different command in each."""
    found = []
    for n in range(count):
        body = payload.replace(b'"cwd": ', f'"tool_use_id": "toolu_{tag}_{n}", "cwd": '.encode(), 1)
        if unique:
            body = body.replace(b'"command": "', f'"command": "true {tag}-{n}; '.encode(), 1)
        found.append(body)
    return found


class Client:
    """One closed-loop connection: its prebuilt requests, its read buffer and its latencies."""

    def __init__(self, port: int, requests: list[bytes]) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.setblocking(False)
        self.requests = requests
        self.sent = 0
        self.started = 0.0
        self.buffer = b""
        self.latencies: list[float] = []

    def send_next(self) -> bool:
        """Send the next request; False when all are sent."""
        if self.sent >= len(self.requests):
            return False
        data = self.requests[self.sent]
        self.sent += 1
        self.started = time.perf_counter()
        self.sock.sendall(data)  # a few hundred bytes: the socket buffer takes them at once
        return True

    def on_readable(self) -> bool:
        """Read what arrived; True when a whole answer is complete (its latency recorded)."""
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("the server closed the connection")
        self.buffer += chunk
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            return False
        head = self.buffer[:end].decode("latin-1").split("\r\n")
        length = next(
            int(line.split(":", 1)[1])
            for line in head
            if line.lower().startswith("content-length:")
        )
        if len(self.buffer) < end + 4 + length:
            return False
        done = time.perf_counter()
        if head[0].split()[1] != "200":
            raise AssertionError(f"unexpected answer {head[0]!r}")
        self.buffer = self.buffer[end + 4 + length :]
        self.latencies.append(done - self.started)
        return True


def run_clients(clients: list[Client], deadline: float) -> None:
    """Drive every client to the end of its requests or to `deadline` (monotonic)."""
    selector = selectors.DefaultSelector()
    for client in clients:
        selector.register(client.sock, selectors.EVENT_READ, client)
        client.send_next()
    active = len(clients)
    while active:
        for key, _ in selector.select(timeout=1.0):
            client = key.data
            if client.on_readable():
                if time.monotonic() > deadline or not client.send_next():
                    selector.unregister(client.sock)
                    active -= 1
        if time.monotonic() > deadline + 30:
            raise TimeoutError("answers stopped coming")
    selector.close()


def percentile(values: list[float], q: float) -> float:
    """The `q` quantile of `values` (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def cpu_seconds(pid: int | None) -> float:
    """User + system CPU seconds of process `pid` (this process when None; 0 when unknown)."""
    return sum(cpu_split(pid))


def cpu_split(pid: int | None) -> tuple[float, float]:
    """(user, system) CPU seconds of process `pid` (this process when None; 0s when unknown)."""
    if pid is None:
        times = os.times()
        return times.user, times.system
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        tick = os.sysconf("SC_CLK_TCK")
        return int(fields[11]) / tick, int(fields[12]) / tick
    except (OSError, IndexError, ValueError):
        return 0.0, 0.0


def wait_until_answering(port: int, payload: bytes) -> None:
    """Retry one request until the server answers (it loads its policies first), then warm up."""
    deadline = time.monotonic() + 60
    while True:
        try:
            client = Client(port, [request_bytes(port, payload)] * 200)
            break
        except OSError:
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(0.1)
    run_clients([client], time.monotonic() + 30)  # sequential warm-up
    client.sock.close()


def main() -> int:
    """Run the load and print the figures as one JSON line."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--requests", type=int, default=4000, help="in total")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--port", type=int)
    parser.add_argument("--pid", type=int, help="with --port: the server's pid, for its CPU time")
    parser.add_argument("--command", default="git status")
    parser.add_argument(
        "--unique", action="store_true", help="a different command on every request (no memo hit)"
    )
    args = parser.parse_args()
    payload = PAYLOAD.replace(b"git status", args.command.encode())
    server = None
    port = args.port
    if port is None:
        port = free_port()
        env = dict(os.environ, XDG_RUNTIME_DIR=tempfile.mkdtemp(prefix="rtk-bench-"))
        server = subprocess.Popen(
            [sys.executable, "-m", "rtk_policy", "serve", "--http", str(port), "--idle", "120"],
            env=env,
        )
    try:
        wait_until_answering(port, payload)
        per_client = max(1, args.requests // args.clients)
        tag, unique = f"{os.getpid()}-{time.time_ns()}", args.unique
        clients = [
            Client(port, [request_bytes(port, b) for b in bodies(payload, per_client, unique, t)])
            for t in (f"{tag}-{i}" for i in range(args.clients))
        ]
        pid = server.pid if server else args.pid
        server_split = cpu_split(pid) if pid else (0.0, 0.0)
        own_cpu = cpu_seconds(None)
        start = time.perf_counter()
        run_clients(clients, time.monotonic() + args.seconds)
        wall = time.perf_counter() - start
        own_cpu = cpu_seconds(None) - own_cpu
        after = cpu_split(pid) if pid else (0.0, 0.0)
        server_user, server_sys = after[0] - server_split[0], after[1] - server_split[1]
        server_cpu = server_user + server_sys if pid else None
        for client in clients:
            client.sock.close()
        latencies = [x for c in clients for x in c.latencies]
        count = len(latencies)
        figures = {
            "clients": args.clients,
            "unique": args.unique,
            "requests": count,
            "per_second": round(count / wall),
            **{
                f"p{int(q * 100)}_ms": round(percentile(latencies, q) * 1000, 3)
                for q in (0.5, 0.9, 0.99)
            },
            "max_ms": round(max(latencies) * 1000, 3),
            "server_cpu_us": round(server_cpu / count * 1e6) if server_cpu is not None else None,
            "server_sys_us": round(server_sys / count * 1e6) if pid else None,
            "client_cpu_us": round(own_cpu / count * 1e6),
        }
        print(json.dumps(figures))
    finally:
        if server is not None:
            server.terminate()
            server.wait(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
