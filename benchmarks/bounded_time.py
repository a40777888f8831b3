"""Wall time of one `rtk-policy hook claude` process on the largest inputs of many shapes (issue 18:
every decision in bounded time; target ≤ 1 s each on this machine).

    python benchmarks/bounded_time.py [--rtk-policy BIN] [--rounds N]

Each shape is a command of about 250 KiB (the analysed limit is 256 KiB): thousands of deletions,
assignments feeding deletions, function definitions and calls, one command with 25,000 arguments,
deep substitutions, long pipelines, a long heredoc, quoted words, nested shells and interpreter
scripts. Each runs as a fresh process under a clean environment, in a fresh git project outside
/tmp, after one call that compiles the policy cache; the best and worst of the rounds are
printed with the verdict and the start of the reason.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

LIMIT = 250 * 1024


def shapes() -> dict[str, str]:
    """name -> command, each cut at `LIMIT` characters."""
    made = {
        "deletions": "cd /tmp; " + "; ".join(f"rm -rf x{i}" for i in range(20000)),
        "assigned": "; ".join(f"x{i}=/; rm -rf $x{i}" for i in range(20000)),
        "functions": "; ".join(f"f{i}(){{ rm -rf $1; }}; f{i} /tmp/a" for i in range(10000)),
        "arguments": "rm -rf " + " ".join(f"/srv/x{i}" for i in range(25000)),
        "substitutions": "echo " + "$(echo " * 300 + "x" + ")" * 300,
        "pipeline": " | ".join(["cat"] * 999),
        "heredoc": "cat <<EOF\n" + "line $x `y` $(z)\n" * 14000 + "EOF",
        "quoted": "echo " + " ".join(f"'a{i}' \"b{i}\"" for i in range(12000)),
        "and-list": " && ".join(f"git status{i % 3}" for i in range(1990)),
        "nested-shell": "bash -c 'bash -c \"" + "; ".join("ls" for _ in range(1900)) + "\"'",
        "interpreter": "python3 -c '"
        + "\n".join(f'import os; os.system("rm -rf /tmp/x{i}")' for i in range(4000))
        + "'",
        "long-word": "echo " + "a" * LIMIT,
    }
    return {name: text[:LIMIT] for name, text in made.items()}


def run_once(binary: str, payload: bytes, env: dict[str, str], cwd: str) -> tuple[float, str]:
    """(seconds, answer) of one hook process."""
    started = time.perf_counter()
    done = subprocess.run([binary, "hook", "claude"], input=payload, capture_output=True,
                          env=env, cwd=cwd, check=False)  # fmt: skip
    return time.perf_counter() - started, done.stdout.decode(errors="replace")


def verdict(answer: str) -> str:
    """The permission decision and the start of its reason, or `none`."""
    if not answer.strip():
        return "none"
    output = json.loads(answer).get("hookSpecificOutput", {})
    reason = output.get("permissionDecisionReason", "")
    return f"{output.get('permissionDecision', 'none')}: {reason[:70]}"


def main() -> int:
    """Print each shape's best and worst wall time over the rounds, and the verdict."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rtk-policy", default=shutil.which("rtk-policy") or "rtk-policy")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    base = os.path.join(os.path.expanduser("~"), ".cache")
    os.makedirs(base, exist_ok=True)
    root = tempfile.mkdtemp(prefix="bounded-", dir=base)
    project = os.path.join(root, "project")
    subprocess.run(["git", "init", "-q", project], check=True)
    env = {"PATH": "/usr/bin:/bin", "HOME": root, "LANG": "C.UTF-8",
           "CLAUDE_PROJECT_DIR": project, "XDG_RUNTIME_DIR": os.path.join(root, "run")}  # fmt: skip
    os.makedirs(env["XDG_RUNTIME_DIR"], mode=0o700)
    worst = 0.0
    try:
        warm = json.dumps({"tool_name": "Bash", "tool_input": {"command": "ls"}, "cwd": project})
        run_once(args.rtk_policy, warm.encode(), env, project)  # the policy cache, compiled once
        for name, text in shapes().items():
            payload = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash",
                                  "tool_input": {"command": text}, "cwd": project,
                                  "session_id": "bounded"}).encode()  # fmt: skip
            times, answer = [], ""
            for _ in range(args.rounds):
                seconds, answer = run_once(args.rtk_policy, payload, env, project)
                times.append(seconds)
            worst = max(worst, max(times))
            print(f"{name:14} {len(text):7,} chars  best {min(times):5.2f} s  worst "
                  f"{max(times):5.2f} s  {verdict(answer)}")  # fmt: skip
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"worst of all: {worst:.2f} s (load {os.getloadavg()[0]:.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
