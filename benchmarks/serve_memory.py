"""RSS of `rtk-policy serve` over many requests on its Unix socket: is there growth after warm-up?

Usage: python benchmarks/serve_memory.py [--requests 100000] [--seconds 900]
Prints RSS (KiB) after warm-up and at every tenth of the run, as one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from rtk_policy.serve.client import ask_server  # noqa: E402

COMMANDS = [
    "git status",
    "rm -rf /",
    "ls -la && cargo test 2>&1 | tail",
    "cat .env",
    "npm run build",
]


def rss_kib(pid: int) -> int:
    """Resident memory of process `pid` in KiB (VmRSS; 0 when it cannot be read)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main() -> int:
    """Run a server, send the requests, print one JSON line with its memory along the way."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=900.0)
    parser.add_argument("--unique", action="store_true", help="a different command per request")
    args = parser.parse_args()
    runtime = tempfile.mkdtemp(prefix="rtk-mem-")
    state = tempfile.mkdtemp(prefix="rtk-mem-state-")
    os.environ.update(XDG_RUNTIME_DIR=runtime, XDG_STATE_HOME=state)
    path = os.path.join(runtime, "rtk-policy", "engine.sock")
    server = subprocess.Popen([sys.executable, "-m", "rtk_policy", "serve", "--idle", "60"])
    try:
        payloads = [
            json.dumps(
                {
                    "session_id": f"m{i}",
                    "cwd": "/tmp",
                    "hook_event_name": "PreToolUse",
                    "tool_name": "Bash",
                    "tool_input": {"command": c},
                }
            ).encode()
            for i, c in enumerate(COMMANDS)
        ]
        deadline = time.monotonic() + 60
        while ask_server("claude", payloads[0], path) is None:
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(0.1)
        warm = min(2000, args.requests // 10)
        for i in range(warm):
            ask_server("claude", payloads[i % len(payloads)], path)
        samples = [(warm, rss_kib(server.pid))]
        end = time.monotonic() + args.seconds
        step = max(1, args.requests // 10)
        done = 0
        for i in range(args.requests):
            if time.monotonic() > end:
                break
            body = payloads[i % len(payloads)]
            if args.unique:
                body = body.replace(b'"command": "', f'"command": "echo {i}; '.encode(), 1)
            assert ask_server("claude", body, path) is not None
            done = i + 1
            if done % step == 0:
                samples.append((warm + done, rss_kib(server.pid)))
        print(
            json.dumps(
                {
                    "requests": done,
                    "unique": args.unique,
                    "rss_kib": samples,
                    "growth_kib": samples[-1][1] - samples[0][1],
                }
            )
        )
    finally:
        server.terminate()
        server.wait(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
