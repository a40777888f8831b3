"""`rewrite --batch` as a user runs it, whole processes: repeated and unique commands, --jobs N.

Two inputs of the same size: the golden corpus repeated (`repeated`: what a memo flatters) and
distinct commands made from it with a seed (`unique`: `unique_commands.py`, what the engine must
really do). Each is decided by whole `python -m rtk_policy rewrite --batch FILE --jobs N` processes,
started under `env -i` with a private HOME/XDG tree (no Claude Code rules of this machine, the
compiled-policy cache warm, as after a user's first run), so the batch command's own reading,
JSON answering and writing count. Per run: wall time, the CPU time of the process and its workers,
segments/s of wall time and per CPU second, and the load average before and after.

Several installs are timed in turns, one run each per round (an A/B on a machine whose speed
drifts); `--install NAME=PYTHON[:TREE]` runs PYTHON with `PYTHONPATH=TREE` (a checkout) when TREE
is given. Every install's answers are compared byte for byte on every input.

Each install must load its own shipped packs, all of them, or the run stops: PYTHON must not have
rtk-policy installed when TREE is given (an editable install maps `rtk_policy.packs` to its own
checkout's policies/, so an older TREE's code would run with the newer packs, leave out the files
it cannot compile and look fast). Use a venv with the dependencies only (`pip install .` then
`pip uninstall rtk-policy`).

Each round also times a fixed pure-Python workload (`REFERENCE`: calls, dict lookups, string
splits) with the first install's interpreter, so a reader can tell this machine's phase: its speed
drifts by a factor of two over hours, and a figure of segments/s means little without it.

Usage: python benchmarks/batch_e2e.py --install new=.venv/bin/python [--install old=PY:TREE]
       [--count 50000] [--jobs 1 2] [--rounds 3] [--inputs repeated unique] [--json OUT]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from unique_commands import corpus, unique_commands  # noqa: E402

#: the fixed workload timed beside the batches (CPU seconds; lower is a faster machine phase)
REFERENCE = """
def step(table, key):
    return table.get(key, 0) + len(key.split("1"))
table = {str(i): i for i in range(1000)}
total = 0
for i in range(1_000_000):
    total += step(table, str(i % 1500))
"""


def reference_cpu(python: str) -> float:
    """CPU seconds of one `REFERENCE` process run by `python` (no site, isolated)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([python, "-S", "-I", "-c", REFERENCE], check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _write(path: str, commands: list[str]) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps({"command": text}) + "\n" for text in commands)


def inputs(folder: str, count: int, seed: int) -> dict[str, str]:
    """The two input files, `count` lines each: the corpus repeated, and distinct variants."""
    lines = corpus()
    repeated = (lines * (count // len(lines) + 1))[:count]
    found = {"repeated": os.path.join(folder, "repeated.jsonl")}
    _write(found["repeated"], repeated)
    found["unique"] = os.path.join(folder, "unique.jsonl")
    _write(found["unique"], unique_commands(count, seed))
    return found


class Install:
    """An interpreter, optionally with a checkout on PYTHONPATH, and a private HOME of its own."""

    def __init__(self, spec: str, folder: str) -> None:
        self.name, _, rest = spec.partition("=")
        self.python, _, self.tree = rest.partition(":")
        self.python = os.path.abspath(self.python)
        self.home = os.path.join(folder, f"home-{self.name}")
        os.makedirs(os.path.join(self.home, "config"), exist_ok=True)

    def env(self) -> dict[str, str]:
        """The clean environment of a run."""
        home = self.home
        env = {"HOME": home, "PATH": "/usr/bin:/bin", "XDG_CONFIG_HOME": f"{home}/config"}
        env.update(XDG_STATE_HOME=f"{home}/state", XDG_CACHE_HOME=f"{home}/cache")
        env["XDG_RUNTIME_DIR"] = f"{home}/run"
        if self.tree:
            env["PYTHONPATH"] = os.path.abspath(self.tree)
        return env

    def prepare(self) -> None:
        """.pyc files of the tree written, the policy cache compiled."""
        if self.tree:
            subprocess.run([self.python, "-m", "compileall", "-q", self.tree], check=True,
                           stdout=subprocess.DEVNULL)  # fmt: skip
        subprocess.run([self.python, "-m", "rtk_policy", "rewrite", "git status"],
                       env=self.env(), cwd=self.home, stdout=subprocess.DEVNULL)  # fmt: skip
        self.check_packs()

    def check_packs(self) -> None:
        """Stop unless the install loads every file of its own shipped packs."""
        code = (
            "from rtk_policy.engine.pipeline import load_engine\n"
            "from rtk_policy.policy.load import packs_dir\n"
            "engine = load_engine()\n"
            "print(packs_dir()); print(len(engine.problems))"
        )
        done = subprocess.run([self.python, "-c", code], env=self.env(), cwd=self.home,
                              check=True, capture_output=True, text=True)  # fmt: skip
        packs, problems = done.stdout.split()
        tree = os.path.realpath(self.tree) if self.tree else ""
        if problems != "0" or (tree and not os.path.realpath(packs).startswith(tree + os.sep)):
            sys.exit(f"{self.name}: loads {packs} with {problems} problems: not its own packs "
                     "(see the module docstring)")  # fmt: skip

    def segments(self, source: str) -> int:
        """Segments of every line of `source` (the engine's own parse, not timed)."""
        code = (
            "import json, sys\nfrom rtk_policy.shell import parse\n"
            "print(sum(len(parse(json.loads(l)['command']).segments) for l in open(sys.argv[1])))"
        )
        done = subprocess.run([self.python, "-c", code, source], env=self.env(), check=True,
                              capture_output=True, text=True)  # fmt: skip
        return int(done.stdout)

    def run(self, source: str, jobs: int) -> dict[str, object]:
        """One whole batch process: wall and CPU seconds, the answers' digest, the load."""
        command = [self.python, "-m", "rtk_policy", "rewrite", "--batch", source]
        command += ["--jobs", str(jobs)]
        load = os.getloadavg()[0]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(command, env=self.env(), cwd=self.home, check=True,
                              capture_output=True)  # fmt: skip
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        digest = hashlib.sha256(done.stdout).hexdigest()[:16]
        return {"wall": wall, "cpu": cpu, "digest": digest,
                "load": (load, os.getloadavg()[0])}  # fmt: skip


def main() -> int:
    """Print one line per (input, jobs, install) and the ratios between installs."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--install", action="append", required=True)
    parser.add_argument("--count", type=int, default=50_000)
    parser.add_argument("--seed", type=int, default=20)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--inputs", nargs="+", default=["repeated", "unique"])
    parser.add_argument("--json", help="append the raw runs to this JSONL file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        files = inputs(folder, args.count, args.seed)
        installs = [Install(spec, folder) for spec in args.install]
        for install in installs:
            install.prepare()
        segments = {name: installs[0].segments(files[name]) for name in args.inputs}
        print(f"machine: {os.cpu_count()} cores, load {os.getloadavg()}; lines {args.count}; "
              f"segments {segments}")  # fmt: skip
        runs: dict[tuple[str, int, str], list[dict[str, object]]] = {}
        references: list[float] = []
        for _ in range(args.rounds):
            references.append(reference_cpu(installs[0].python))
            for name in args.inputs:
                for jobs in args.jobs:
                    for install in installs:
                        found = install.run(files[name], jobs)
                        runs.setdefault((name, jobs, install.name), []).append(found)
    report(runs, segments, args.count, installs)
    print(f"machine phase: the reference workload took {statistics.median(references):.3f} CPU-s "
          f"(median of {sorted(round(r, 3) for r in references)}; lower is faster)")
    if args.json:
        with open(args.json, "a", encoding="utf-8") as handle:
            for (name, jobs, install), found in runs.items():
                row = {"input": name, "jobs": jobs, "install": install}
                row.update(segments=segments[name], runs=found, reference_cpu=references)
                handle.write(json.dumps(row) + "\n")
    return 0


def report(runs: dict, segments: dict[str, int], lines: int, installs: list[Install]) -> None:
    """Medians per row; the answers' digests must agree across installs and rounds."""
    digests: dict[str, set[str]] = {}
    medians: dict[tuple[str, int, str], float] = {}
    for (name, jobs, install), found in runs.items():
        digests.setdefault(name, set()).update(str(f["digest"]) for f in found)
        wall = statistics.median(float(f["wall"]) for f in found)  # type: ignore[arg-type]
        cpu = statistics.median(float(f["cpu"]) for f in found)  # type: ignore[arg-type]
        loads = [load for f in found for load in f["load"]]  # type: ignore[union-attr]
        medians[(name, jobs, install)] = wall
        walls = sorted(round(float(f["wall"]), 2) for f in found)  # type: ignore[arg-type]
        print(f"{name:8s} --jobs {jobs} {install:8s} wall {wall:6.2f} s {walls} "
              f"{lines / wall:7.0f} lines/s {segments[name] / wall:7.0f} segments/s; "
              f"cpu {cpu:6.2f} s {segments[name] / cpu:7.0f} segments/cpu-s; "
              f"load {min(loads):.2f}-{max(loads):.2f}")  # fmt: skip
    for name, seen in digests.items():
        print(f"{name}: answers {'identical' if len(seen) == 1 else 'DIFFER: ' + str(seen)}")
    first = installs[0].name
    for (name, jobs, install), wall in medians.items():
        if install != first:
            base = medians[(name, jobs, first)]
            print(f"{name:8s} --jobs {jobs} {install} / {first}: x{base / wall:.2f} speed")


if __name__ == "__main__":
    sys.exit(main())
