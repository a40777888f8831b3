"""The resident server under several agents at once (issue 18): how long a short call takes while
a ~250 KiB call is being decided on another connection, and the server's cost per call.

    PYTHONPATH=. python benchmarks/serve_concurrency.py [--rounds N]

The server runs in a thread of this process (`serve.serve_socket`) on a private socket, with a
private HOME, config and state under a temporary folder; the calls go through the thin client's
`ask_server`. Printed: `Resident.answer` per call in one thread (process CPU, repeated and unique
commands), the socket round trip per call (wall and process CPU, client and server together), and
the latency of the short calls sent one after another while each long call runs (median and
worst; with one lock around every call, as before issue 18, each of them waited for the long one)
with the long call's own time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time

LONG = "cd /tmp; " + "; ".join(f"rm -rf x{i}" for i in range(20000))[: 250 * 1024]


def payload(command: str, tool_use_id: str = "t1") -> bytes:
    """A Claude Code PreToolUse payload."""
    fields = {"session_id": "s", "cwd": "/tmp", "hook_event_name": "PreToolUse"}
    fields |= {"tool_name": "Bash", "tool_use_id": tool_use_id, "tool_input": {"command": command}}
    return json.dumps(fields).encode()


def private_environment() -> None:
    """HOME, config, state and runtime folders of this run's own."""
    base = tempfile.mkdtemp(prefix="rtk-serve-bench-")
    for name, sub in (
        ("HOME", "home"),
        ("XDG_CONFIG_HOME", "config"),
        ("XDG_STATE_HOME", "state"),
        ("XDG_RUNTIME_DIR", "run"),
    ):
        os.makedirs(os.path.join(base, sub), mode=0o700)
        os.environ[name] = os.path.join(base, sub)


def per_call(label: str, call, items: list, cpu: bool = True, passes: int = 3) -> None:
    """Best of `passes` passes over `items` (1 for items that must be new to the server), µs per
    call."""
    best = []
    for _ in range(passes):
        clock = time.process_time if cpu else time.perf_counter
        started = clock()
        for item in items:
            call(item)
        best.append((clock() - started) / len(items) * 1e6)
    print(f"{label}: {min(best):.0f} µs per call")


def main() -> int:
    """Run the measurements."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="long calls to send short ones past")
    rounds = parser.parse_args().rounds
    private_environment()
    from rtk_policy.serve import client
    from rtk_policy.serve import server as serve

    resident = serve.Resident()
    path = client.socket_path()
    threading.Thread(target=serve.serve_socket, args=(resident, path, 120.0), daemon=True).start()
    while client.ask_server("claude", b"", path) is None:
        time.sleep(0.02)
    env = {name: os.environ[name] for name in client.FORWARDED_ENV if name in os.environ}
    repeated = [payload(f"git status {i % 50}", f"r{i}") for i in range(2000)]
    unique = [payload(f"ls -la /srv/x{i} && grep -rn n{i} .", f"u{i}") for i in range(3000)]
    for item in repeated[:200] + unique[:200]:
        resident.answer("claude", item, env)
    answer = lambda p: resident.answer("claude", p, env)  # noqa: E731
    ask = lambda p: client.ask_server("claude", p, path)  # noqa: E731
    per_call("Resident.answer, repeated commands (CPU)", answer, repeated)
    per_call("Resident.answer, unique commands (CPU)", answer, unique[200:1600], passes=1)
    per_call("socket round trip, repeated commands (wall)", ask, repeated[:500], cpu=False)
    per_call("socket round trip, repeated commands (CPU)", ask, repeated[:500])
    per_call("socket round trip, unique commands (CPU)", ask, unique[1600:], passes=1)
    latencies: list[float] = []
    long_times: list[float] = []
    for _ in range(rounds):
        begun = time.perf_counter()
        long_call = threading.Thread(target=ask, args=(payload(LONG),))
        long_call.start()
        time.sleep(0.02)
        while long_call.is_alive():  # each short call is sent while the long one runs
            sent = time.perf_counter()
            ask(payload(f"git log -{len(latencies)}"))
            latencies.append((time.perf_counter() - sent) * 1000)
        long_times.append((time.perf_counter() - begun) * 1000)
    print(
        f"short calls while a 250 KiB call runs: {len(latencies)} answered, median "
        f"{statistics.median(latencies):.1f} ms, worst {max(latencies):.1f} ms; the long call "
        f"{statistics.median(long_times):.0f} ms"
    )
    resident.last_request = -1e9
    return 0


if __name__ == "__main__":
    sys.exit(main())
