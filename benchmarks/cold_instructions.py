"""Instructions of one cold in-process `hook claude` (callgrind): the deterministic measure of the
cold path on a machine whose speed drifts, an A/B of installs that timing cannot resolve.

Per install (`--install NAME=PYTHON`, the venv's interpreter of a non-editable install): a private
HOME/XDG tree whose policy cache the first run warms, then per run a fresh state folder (no audit
log yet), `PYTHONHASHSEED=0`, `env -i`, no runtime folder (the thin client finds no server and the
hook decides in-process), `git status` on stdin. Under valgrind a decision runs ~50x slower and
would run out of its 0.75 s budget (`engine/budget.py`) and skip the work, so the hook runs through
a wrapper that turns the deadline off, as the tests' fixture does; the answer is printed to show
the command was judged. Bare `python -c pass` is counted too, for the ratio.

Usage: python benchmarks/cold_instructions.py --install new=.venv/bin/python [--install old=PY]
       [--runs 2] [--command 'git status']
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import tempfile

WRAPPER = """
import sys
from rtk_policy.engine import pipeline
pipeline.deadline = lambda budget_s: None  # valgrind is ~50x slower than the budget assumes
from rtk_policy.main import main
sys.argv[0] = "rtk-policy"
sys.exit(main())
"""


def environment(home: str) -> dict[str, str]:
    """A private, clean environment under `home`."""
    return {
        "PYTHONHASHSEED": "0", "HOME": home, "PATH": "/usr/bin:/bin",
        "XDG_CONFIG_HOME": f"{home}/config", "XDG_STATE_HOME": f"{home}/state",
        "XDG_CACHE_HOME": f"{home}/cache", "XDG_RUNTIME_DIR": f"{home}/none",
    }  # fmt: skip


def instructions(argv: list[str], env: dict[str, str], stdin: bytes, out: str) -> tuple[int, str]:
    """(instructions callgrind collected, the first 100 characters of stdout) of one run."""
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *argv],
        input=stdin, env=env, capture_output=True, check=False,
    )  # fmt: skip
    found = re.search(rb"Collected : (\d+)", done.stderr)
    if found is None:
        raise SystemExit(f"valgrind failed: {done.stderr.decode(errors='replace')[-500:]}")
    return int(found.group(1)), done.stdout.decode(errors="replace")[:100]


def main() -> None:
    """Count, print one JSON line per install and run."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--install", action="append", required=True, help="NAME=PYTHON")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--command", default="git status")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (Debian: apt-get install valgrind)")
    payload = json.dumps({
        "session_id": "bench", "cwd": "/", "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": args.command},
    }).encode()  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="cold-instructions-") as root:
        wrapper = os.path.join(root, "hook.py")
        with open(wrapper, "w", encoding="utf-8") as handle:
            handle.write(WRAPPER)
        out = os.path.join(root, "callgrind.out")
        installs = [spec.split("=", 1) for spec in args.install]
        bare = instructions([installs[0][1], "-c", "pass"], environment(root), b"", out)[0]
        print(json.dumps({"install": "python -c pass", "instructions": bare}))
        for name, python in installs:
            home = os.path.join(root, name)
            env = environment(home)
            subprocess.run([python, wrapper, "hook", "claude"], input=payload, env=env,
                           capture_output=True, check=False)  # fmt: skip  # warms the cache
            for _ in range(args.runs):
                shutil.rmtree(os.path.join(home, "state"), ignore_errors=True)
                count, answer = instructions([python, wrapper, "hook", "claude"], env, payload, out)
                print(json.dumps({"install": name, "instructions": count,
                                  "ratio": round(count / bare, 2), "answer": answer}))  # fmt: skip


if __name__ == "__main__":
    main()
