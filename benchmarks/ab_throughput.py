"""Engine throughput of two installs timed in turns (an A/B on a machine whose speed drifts).

Runs `batch_throughput.py --copies 0` with the first interpreter, then the second, for `--rounds`
rounds, and prints per install the median (and range) of the first pass, the steady passes and the
warm 1,000-segment command, and the ratio of the medians. Each install gets its own policy cache,
compiled once before the first round.

Usage: python benchmarks/ab_throughput.py PYTHON_A PYTHON_B [--rounds 5] [--seconds 8]
       [--backend cel-expr|cel-python]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROWS = (("first_pass_segments_per_s", "first pass, segments/s"),
        ("steady_segments_per_s", "steady, segments/s"),
        ("warm_1000_ms", "1,000-segment command, ms"))  # fmt: skip


def one_run(python: str, cache: str, seconds: float, backend: str) -> dict[str, float]:
    """One `batch_throughput.py` process: its figures, the 1,000-segment time as `warm_1000_ms`."""
    env = {**os.environ, "XDG_CACHE_HOME": cache}
    done = subprocess.run(
        [python, os.path.join(HERE, "batch_throughput.py"), "--copies", "0", "--seconds",
         str(seconds), "--backend", backend],
        env=env, check=True, capture_output=True, text=True,
    )  # fmt: skip
    found = json.loads(done.stdout.strip().splitlines()[-1])
    found["warm_1000_ms"] = found["warm_ms_by_segments"].get("1000", float("nan"))
    return found


def main() -> int:
    """Print the A/B table."""
    parser = argparse.ArgumentParser()
    parser.add_argument("pythons", nargs=2)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--backend", default="cel-expr")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        caches = [os.path.join(folder, f"cache{at}") for at in range(2)]
        for python, cache in zip(args.pythons, caches, strict=True):
            one_run(python, cache, 0.5, args.backend)  # compile the policy cache
        runs: list[list[dict[str, float]]] = [[], []]
        for _ in range(args.rounds):
            for at, (python, cache) in enumerate(zip(args.pythons, caches, strict=True)):
                runs[at].append(one_run(python, cache, args.seconds, args.backend))
    for key, label in ROWS:
        medians = []
        for at, python in enumerate(args.pythons):
            values = [run[key] for run in runs[at]]
            medians.append(statistics.median(values))
            print(f"{label:28s} {python}: median {medians[-1]:.1f} "
                  f"(range {min(values):.1f}-{max(values):.1f})")  # fmt: skip
        print(f"{label:28s} B/A: {medians[1] / medians[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
