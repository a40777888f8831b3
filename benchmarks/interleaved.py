"""Whole processes timed in turns with bare `python -c pass`: one run of each command, then the next
round, so a machine whose speed drifts slows every command alike (hyperfine times one command's runs
after the other's). Prints, per command, the median and quartile times and their ratio to bare
python's.

Usage: python benchmarks/interleaved.py --python PY --stdin FILE [--env K=V ...] [--runs 40]
       -- 'COMMAND ONE' 'COMMAND TWO' ...   (commands are split on blanks, no shell)
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import subprocess
import sys
import time


def timed(argv: list[str], env: dict[str, str], stdin: bytes) -> float:
    """Wall time of one run of `argv`, in milliseconds."""
    started = time.perf_counter()
    subprocess.run(argv, input=stdin, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - started) * 1000


def rounds(
    commands: list[list[str]], env: dict[str, str], stdin: bytes, runs: int
) -> list[list[float]]:
    """The times of each command over `runs` rounds (after two warm-up rounds)."""
    times: list[list[float]] = [[] for _ in commands]
    for number in range(runs + 2):
        for at, argv in enumerate(commands):
            took = timed(argv, env, stdin)
            if number >= 2:
                times[at].append(took)
    return times


def main() -> int:
    """Print one JSON line per command: median, quartiles and ratios to the first (bare) command."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--python", required=True)
    parser.add_argument("--stdin", required=True)
    parser.add_argument("--env", action="append", default=[])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("commands", nargs="+")
    args = parser.parse_args()
    env = dict(item.split("=", 1) for item in args.env)
    with open(args.stdin, "rb") as handle:
        stdin = handle.read()
    commands = [[args.python, "-c", "pass"], *(shlex.split(text) for text in args.commands)]
    times = rounds(commands, env, stdin, args.runs)
    bare = statistics.quantiles(times[0], n=4)
    for argv, row in zip(commands, times, strict=True):
        q1, median, q3 = statistics.quantiles(row, n=4)
        print(json.dumps({"command": " ".join(argv), "median_ms": round(median, 1),
                          "q1_ms": round(q1, 1), "q3_ms": round(q3, 1),
                          "ratio_median": round(median / bare[1], 2),
                          "ratio_q1": round(q1 / bare[0], 2)}))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
