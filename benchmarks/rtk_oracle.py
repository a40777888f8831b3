"""Differential check of `rtk-policy rewrite` against a real RTK binary (`rtk rewrite`).

Usage (from the repository root; the RTK binary is not needed by the test suite):

    /work/venv/bin/python benchmarks/rtk_oracle.py [--rtk /work/peers/rtk/bin/rtk] [--out
    /tmp/oracle]

It builds a command set (every input of the public RTK corpus, every line of tests/corpus/*.txt and
*.jsonl, and generated variants of the rule table of reference §3.9 under wrappers, env prefixes,
operators, pipes, redirects and quoting), runs each command through `rtk rewrite CMD` (one process
per
command) and through `rtk-policy rewrite --batch -`, both with an empty HOME and XDG directories
under
`--out`, so no Claude Code rules or config apply, and compares exit code and stdout.

Writes `<out>/commands.jsonl` (the set), `<out>/diff.jsonl` (one object per difference, with its
origin and class) and prints the count per class. The set is built in rtk_oracle_set.py (probes in
rtk_oracle_probes.txt), the classes are in rtk_oracle_classes.py; each class was reviewed by hand
against the reference: see benchmarks/RTK_ORACLE.md.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rtk_oracle_classes import classify  # noqa: E402
from rtk_oracle_set import PUBLIC, command_set  # noqa: E402

__all__ = ["PUBLIC", "command_set", "sandbox_env", "main"]


def sandbox_env(out: Path) -> dict[str, str]:
    """An environment with an empty HOME and XDG dirs under `out` (no rules, no config)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RTK_", "CLAUDE_", "XDG_"))}
    home = out / "home"
    for sub in ("home", "config", "data", "cache", "state", "cwd"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(out / "config"),
        XDG_DATA_HOME=str(out / "data"),
        XDG_CACHE_HOME=str(out / "cache"),
        XDG_STATE_HOME=str(out / "state"),
    )
    return env


def run_rtk(
    rtk: str, cmds: list[str], env: dict[str, str], out: Path, hooks: dict[str, list[str]]
) -> list[tuple[int, str]]:
    """(exit, stdout) of `rtk rewrite CMD` for every command, cached in `<out>/rtk_cache*.jsonl`
    (the binary starts in ~70 ms, so a full run takes minutes the first time). `hooks`
    (exclude_commands, transparent_prefixes) goes to RTK's `[hooks]` table in
    `$XDG_CONFIG_HOME/rtk/config.toml`."""
    config = out / "config" / "rtk" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    lines = "".join(f"{key} = {json.dumps(value)}\n" for key, value in hooks.items())
    config.write_text("[hooks]\n" + lines if hooks else "", "utf-8")
    tag = (
        "-" + hashlib.sha256(json.dumps(hooks, sort_keys=True).encode()).hexdigest()[:12]
        if hooks
        else ""
    )
    cache_path = out / f"rtk_cache{tag}.jsonl"
    cache: dict[str, tuple[int, str]] = {}
    if cache_path.is_file():
        for line in cache_path.read_text(encoding="utf-8").splitlines():
            obj = json.loads(line)
            cache[obj["cmd"]] = (obj["exit"], obj["stdout"])

    def one(cmd: str) -> tuple[int, str]:
        proc = subprocess.run(
            [rtk, "rewrite", cmd], capture_output=True, env=env, cwd=out / "cwd", timeout=30
        )
        return proc.returncode, proc.stdout.decode("utf-8", "surrogateescape")

    missing = [cmd for cmd in dict.fromkeys(cmds) if cmd not in cache]
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(one, missing))
    with open(cache_path, "a", encoding="utf-8") as handle:
        for cmd, (code, text) in zip(missing, answers, strict=True):
            cache[cmd] = (code, text)
            handle.write(json.dumps({"cmd": cmd, "exit": code, "stdout": text}) + "\n")
    return [cache[cmd] for cmd in cmds]


def run_ours(
    cmds: list[str],
    env: dict[str, str],
    cwd: Path,
    policies: list[str],
    hooks: dict[str, list[str]],
) -> list[tuple[int, str]]:
    """(exit, stdout) of `rtk-policy rewrite --batch -` for every command, `hooks` as config
    overrides."""
    extra_config = {"config": hooks} if hooks else {}
    lines = [{"command": c, **extra_config} for c in cmds]
    extra = [arg for path in policies for arg in ("--policies", path)]
    return batch_answers(lines, env, cwd, ["--jobs", "2", *extra])


def batch_answers(
    lines: list[dict], env: dict[str, str], cwd: Path, options: list[str]
) -> list[tuple[int, str]]:
    """(exit, stdout) of `rtk-policy rewrite --batch - OPTIONS` for each input line (an error's
    text as stdout, exit -1)."""
    proc = subprocess.run(
        [sys.executable, "-m", "rtk_policy", "rewrite", "--batch", "-", *options],
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        check=True,
    )
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    return [(a.get("exit", -1), a.get("stdout", a.get("error", ""))) for a in answers]


def main(argv: list[str] | None = None) -> int:
    """Build the set, run both sides, write the differences, print the summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rtk", default="/work/peers/rtk/bin/rtk")
    parser.add_argument("--out", default="/tmp/rtk-oracle")
    parser.add_argument(
        "--policies",
        action="append",
        default=[],
        help="policy file/folder for rtk-policy (repeatable; default: the shipped search path;"
        " policies/rtk-rewrite.yaml alone isolates the rewrite engine from the security packs)",
    )
    parser.add_argument(
        "--exclude",
        action="append",
        default=[],
        help="an exclude_commands entry given to both sides (repeatable)",
    )
    parser.add_argument(
        "--prefix",
        action="append",
        default=[],
        help="a transparent_prefixes entry given to both sides (repeatable)",
    )
    parser.add_argument(
        "--claude-settings",
        default="",
        help="a Claude Code settings.json copied to <out>/cwd/.claude/ for both sides (use a"
        " separate --out per settings file: the RTK answer cache is per --out)",
    )
    parser.add_argument(
        "--only", default="", help="keep only commands whose origin starts with this"
    )
    args = parser.parse_args(argv)
    out = Path(args.out)
    env = sandbox_env(out)
    settings = out / "cwd" / ".claude" / "settings.json"
    if args.claude_settings:
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(
            Path(args.claude_settings).read_text(encoding="utf-8"), encoding="utf-8"
        )
    elif settings.exists():
        settings.unlink()
    entries = [e for e in command_set() if e[0].startswith(args.only)]
    cmds = [cmd for _, cmd in entries]
    hooks = {
        key: value
        for key, value in (
            ("exclude_commands", args.exclude),
            ("transparent_prefixes", args.prefix),
        )
        if value
    }
    theirs = run_rtk(args.rtk, cmds, env, out, hooks)
    ours = run_ours(cmds, env, out / "cwd", [str(Path(p).resolve()) for p in args.policies], hooks)
    with open(out / "commands.jsonl", "w", encoding="utf-8") as handle:
        for (origin, cmd), t, o in zip(entries, theirs, ours, strict=True):
            handle.write(json.dumps({"origin": origin, "cmd": cmd, "rtk": t, "ours": o}) + "\n")
    diffs = [(e, t, o) for e, t, o in zip(entries, theirs, ours, strict=True) if t != o]
    with open(out / "diff.jsonl", "w", encoding="utf-8") as handle:
        for (origin, cmd), t, o in diffs:
            handle.write(
                json.dumps(
                    {
                        "origin": origin,
                        "cmd": cmd,
                        "rtk": t,
                        "ours": o,
                        "class": classify(cmd, t, o),
                    }
                )
                + "\n"
            )
    by_class = collections.Counter(classify(cmd, t, o) for (_, cmd), t, o in diffs)
    print(f"commands: {len(cmds)}  differences: {len(diffs)}")
    for name, count in by_class.most_common():
        print(f"  {count:5d}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
