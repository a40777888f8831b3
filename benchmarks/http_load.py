"""Load generator for the loopback http hook: N concurrent keep-alive clients, bounded in count and time.

Usage: python benchmarks/http_load.py [--clients 8] [--requests 4000] [--seconds 60]
Starts `rtk-policy serve --http PORT` itself (private runtime folder) unless --port is given, and prints
p50/p90/p99/max latency per decision in milliseconds as one JSON line. Loopback only.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
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
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def worker(
    port: int, count: int, deadline: float, out: list[float], payload: bytes, unique: bool = False
) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    for n in range(count):
        body = payload.replace(b'"command": "', f'"command": "true {id(out)}-{n}; '.encode(), 1)
        if time.monotonic() > deadline:
            break
        start = time.perf_counter()
        connection.request(
            "POST",
            "/hook/claude",
            body=body if unique else payload,
            headers={"Content-Type": "application/json"},
        )
        response = connection.getresponse()
        response.read()
        out.append(time.perf_counter() - start)
        assert response.status == 200
    connection.close()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--requests", type=int, default=4000, help="in total")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--port", type=int)
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
        deadline = time.monotonic() + 60
        while True:  # wait until it answers (it loads policies first)
            try:
                worker(port, 1, deadline, [], payload)
                break
            except OSError:
                assert time.monotonic() < deadline, "server did not start"
                time.sleep(0.1)
        worker(port, 200, time.monotonic() + 30, [], payload)  # warm-up
        results: list[list[float]] = [[] for _ in range(args.clients)]
        end = time.monotonic() + args.seconds
        threads = [
            threading.Thread(
                target=worker,
                args=(port, args.requests // args.clients, end, r, payload, args.unique),
            )
            for r in results
        ]
        start = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - start
        latencies = [x for r in results for x in r]
        print(
            json.dumps(
                {
                    "clients": args.clients,
                    "unique": args.unique,
                    "requests": len(latencies),
                    "per_second": round(len(latencies) / wall),
                    **{
                        f"p{int(q * 100)}_ms": round(percentile(latencies, q) * 1000, 3)
                        for q in (0.5, 0.9, 0.99)
                    },
                    "max_ms": round(max(latencies) * 1000, 3),
                }
            )
        )
    finally:
        if server is not None:
            server.terminate()
            server.wait(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
