"""Segments per second of the engine on the golden corpus (what `rewrite --batch` runs per line):
the first pass (every program met for the first time) and the steady state of later passes, one
process, one core; the warm time of a 1,000-segment command; then whole `rewrite --batch` processes
over the corpus repeated `--copies` times with --jobs 1 and --jobs 2 (scaling across cores).

Usage: python benchmarks/batch_throughput.py [--backend cel-expr|cel-python] [--seconds 20]
[--copies 5]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def corpus() -> list[str]:
    """The golden corpus commands (tests/corpus/commands.txt), comments and blank lines left out."""
    path = os.path.join(ROOT, "tests", "corpus", "commands.txt")
    with open(path, encoding="utf-8") as handle:
        return [line.rstrip("\n") for line in handle if line.strip() and not line.startswith("#")]


def engine_passes(engine, context, commands: list[str], seconds: float) -> dict[str, object]:
    """Segments/s of the first pass over the corpus (every program planned for the first time) and
    of the following passes (steady state), within `seconds`."""
    rates = []
    end = time.perf_counter() + seconds
    while not rates or time.perf_counter() < end:
        segments = 0
        start = time.perf_counter()
        for text in commands:
            segments += len(engine.evaluate(text, context).command_line.segments)
        rates.append(segments / (time.perf_counter() - start))
        if len(rates) >= 10:
            break
    steady = sorted(rates[1:])[len(rates[1:]) // 2] if len(rates) > 1 else None
    return {
        "segments_per_pass": segments,
        "first_pass_segments_per_s": round(rates[0]),
        "steady_segments_per_s": round(steady) if steady else None,
        "passes": len(rates),
    }


def long_commands(engine, context) -> dict[int, float]:
    """Warm time (ms) of one N-segment command; stops when it gets too long."""
    sizes = {}
    for count in (100, 200, 1000):
        big = " && ".join(["git status", "ls -la", "grep -rn foo src", "echo done"] * (count // 4))
        engine.evaluate(big, context)  # warm
        t0 = time.perf_counter()
        outcome = engine.evaluate(big, context)
        took = round((time.perf_counter() - t0) * 1000, 1)
        sizes[len(outcome.command_line.segments)] = took
        if took > 500:  # the next size would take minutes: report what was measured
            break
    return sizes


def batch_processes(backend: str | None, commands: list[str], copies: int) -> dict[str, object]:
    """Whole `rewrite --batch` processes over the corpus repeated `copies` times, --jobs 1 and 2."""
    import subprocess
    import tempfile

    from rtk_policy.shell import parse

    segments = copies * sum(len(parse(text).segments) for text in commands)
    found: dict[str, object] = {"lines": copies * len(commands), "segments": segments}
    with tempfile.TemporaryDirectory() as folder:
        source = os.path.join(folder, "in.jsonl")
        with open(source, "w", encoding="utf-8") as handle:
            for _ in range(copies):
                handle.writelines(json.dumps({"command": text}) + "\n" for text in commands)
        for jobs in (1, 2):
            command = [sys.executable, "-m", "rtk_policy", "rewrite", "--batch", source]
            command += ["--jobs", str(jobs)] + (["--backend", backend] if backend else [])
            start = time.perf_counter()
            subprocess.run(command, check=True, stdout=subprocess.DEVNULL, cwd=folder)
            took = time.perf_counter() - start
            found[f"jobs_{jobs}_s"] = round(took, 2)
            found[f"jobs_{jobs}_segments_per_s"] = round(segments / took)
    return found


def main() -> int:
    """Print one JSON line: engine passes, long commands and whole batch processes."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default=None)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--copies", type=int, default=5, help="corpus copies for the process runs")
    args = parser.parse_args()
    from rtk_policy.engine.pipeline import load_engine

    engine = load_engine(backend=args.backend)
    context = engine.context(agent="claude")
    commands = corpus()
    result: dict[str, object] = {"backend": engine.policies.backend, "commands": len(commands)}
    result.update(engine_passes(engine, context, commands, args.seconds))
    result["warm_ms_by_segments"] = long_commands(engine, context)
    if args.copies > 0:
        result["batch_processes"] = batch_processes(args.backend, commands, args.copies)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
