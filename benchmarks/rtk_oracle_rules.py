"""`rewrite` with Claude Code rules, against a real RTK binary: every case of the public corpus
arrays
`permissions` and `permissions_generated`, run with its own deny/ask/allow rules on both sides (RTK
reads them from `<project>/.claude/settings.json`, rtk-policy from the batch line's `claude` field),
shipped policies on our side. Exit codes and stdout are compared; see benchmarks/RTK_ORACLE.md.

    /work/venv/bin/python benchmarks/rtk_oracle_rules.py [--rtk PATH] [--out /tmp/rtk-oracle-perm]
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rtk_oracle import PUBLIC, batch_answers, sandbox_env  # noqa: E402


def cases() -> list[dict]:
    """The permission cases of the public corpus that carry rules and a command."""
    data = json.loads(PUBLIC.read_text(encoding="utf-8"))
    return [c for c in data["permissions"] + data["permissions_generated"] if "\0" not in c["cmd"]]


def _rules(case: dict) -> dict[str, list[str]]:
    return {key: list(case.get(key) or []) for key in ("deny", "ask", "allow")}


def run_rtk(rtk: str, todo: list[dict], env: dict[str, str], out: Path) -> list[tuple[int, str]]:
    """`rtk rewrite CMD` from a project whose settings hold the case's rules (one folder per rule
    set)."""
    folders: dict[str, Path] = {}
    for case in todo:
        key = json.dumps(_rules(case), sort_keys=True)
        if key not in folders:
            folder = out / "projects" / str(len(folders))
            (folder / ".claude").mkdir(parents=True, exist_ok=True)
            perms = {k: [f"Bash({p})" for p in v] for k, v in _rules(case).items()}
            (folder / ".claude" / "settings.json").write_text(
                json.dumps({"permissions": perms}), "utf-8"
            )
            folders[key] = folder

    def one(case: dict) -> tuple[int, str]:
        cwd = folders[json.dumps(_rules(case), sort_keys=True)]
        proc = subprocess.run(
            [rtk, "rewrite", case["cmd"]], capture_output=True, env=env, cwd=cwd, timeout=30
        )
        return proc.returncode, proc.stdout.decode("utf-8", "surrogateescape")

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        return list(pool.map(one, todo))


def run_ours(todo: list[dict], env: dict[str, str], cwd: Path) -> list[tuple[int, str]]:
    """`rtk-policy rewrite --batch -` with each case's rules as the line's `claude` field."""
    return batch_answers([{"command": c["cmd"], "claude": _rules(c)} for c in todo], env, cwd, [])


def main(argv: list[str] | None = None) -> int:
    """Run both sides on every case, write `<out>/diff.jsonl`, print counts by (RTK exit, our
    exit)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rtk", default="/work/peers/rtk/bin/rtk")
    parser.add_argument("--out", default="/tmp/rtk-oracle-perm")
    args = parser.parse_args(argv)
    out = Path(args.out)
    env = sandbox_env(out)
    todo = cases()
    theirs, ours = run_rtk(args.rtk, todo, env, out), run_ours(todo, env, out / "cwd")
    diffs = [(c, t, o) for c, t, o in zip(todo, theirs, ours, strict=True) if t != o]
    with open(out / "diff.jsonl", "w", encoding="utf-8") as handle:
        for case, t, o in diffs:
            handle.write(json.dumps({**case, "rtk": t, "ours": o}) + "\n")
    print(f"cases: {len(todo)}  differences: {len(diffs)}")
    for (t, o), n in collections.Counter((t[0], o[0]) for _, t, o in diffs).most_common():
        print(f"  {n:5d}  rtk exit {t}, ours {o}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
