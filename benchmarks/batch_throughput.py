"""Segments per second of the engine on the golden corpus (what `rewrite --batch` runs per line), and the
warm time of a 1,000-segment command. One process, one core.

Usage: python benchmarks/batch_throughput.py [--backend cel-expr|cel-python] [--seconds 20]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def corpus() -> list[str]:
    path = os.path.join(ROOT, "tests", "corpus", "commands.txt")
    with open(path, encoding="utf-8") as handle:
        return [line.rstrip("\n") for line in handle if line.strip() and not line.startswith("#")]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default=None)
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()
    from rtk_policy.engine import load_engine

    engine = load_engine(backend=args.backend)
    context = engine.context(agent="claude")
    commands = corpus()
    segments = 0
    start = time.perf_counter()
    end = start + args.seconds
    done = 0
    for text in commands:
        segments += len(engine.evaluate(text, context).command_line.segments)
        done += 1
        if time.perf_counter() > end:
            break
    elapsed = time.perf_counter() - start
    sizes = {}
    for count in (100, 200, 1000):  # warm time of an N-segment command; stop when it gets too long
        big = " && ".join(["git status", "ls -la", "grep -rn foo src", "echo done"] * (count // 4))
        engine.evaluate(big, context)  # warm
        t0 = time.perf_counter()
        outcome = engine.evaluate(big, context)
        took = round((time.perf_counter() - t0) * 1000, 1)
        sizes[len(outcome.command_line.segments)] = took
        if took > 500:  # the next size would take minutes: report what was measured
            break
    print(
        json.dumps(
            {
                "backend": engine.policies.backend,
                "commands": done,
                "segments": segments,
                "segments_per_s": round(segments / elapsed),
                "commands_per_s": round(done / elapsed),
                "warm_ms_by_segments": sizes,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
