"""Count the asks and denies the installed rtk-policy gives on commands labelled safe.

    python benchmarks/safe_asks.py [--rtk-policy BIN] [--hook N] [--list] FILE...

Each FILE holds commands: JSON lines with a "command" field (rows whose "expect" is not "safe" are
skipped), a JSON array of strings, or plain text, one command a line. Every command goes through
`rtk-policy rewrite --batch -` from the installed package, run in a fresh git project folder with
a private HOME (no user rules, no user config), the project folder as the cwd and as
$CLAUDE_PROJECT_DIR. With `--hook N`, the first N commands also go through `rtk-policy hook claude`
one process each (the payload's cwd is the project folder), and the two answers are compared.

Prints the verdict counts per file and in all, and with `--list` every asked or denied command and
the rules that said so. This is how the README's coverage figures are measured: the peers' own
suites are read and measured from outside the project; `tests/corpus/safe.jsonl` holds our own
commands of the kinds they label safe.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter


def read_commands(path: str) -> list[str]:
    """The safe commands of one file (JSON lines, a JSON array, or plain lines)."""
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    if text.lstrip().startswith("["):
        return [c if isinstance(c, str) else c[-1] for c in json.loads(text)]
    commands = []
    for line in text.splitlines():
        if not line.strip():
            continue
        if line.startswith("{"):
            row = json.loads(line)
            if row.get("expect", "safe") == "safe":
                commands.append(row["command"])
        else:
            commands.append(line)
    return commands


def sandbox() -> tuple[str, dict[str, str]]:
    """A fresh project folder (a git repository) and an environment with a private HOME, both
    outside the shared temp folders, as on a user's machine."""
    # not under /tmp: a home or runtime folder there would make `rm -rf /tmp/*` touch the guard
    base = os.path.join(os.path.expanduser("~"), ".cache")
    os.makedirs(base, exist_ok=True)
    root = tempfile.mkdtemp(prefix="safe-asks-", dir=base)
    home, project = os.path.join(root, "home"), os.path.join(root, "home", "project")
    os.makedirs(os.path.join(project, ".claude"))
    subprocess.run(["git", "init", "-q", project], check=True)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "LANG": "C.UTF-8",
           "CLAUDE_PROJECT_DIR": project, "XDG_RUNTIME_DIR": os.path.join(root, "run"),
           "XDG_CONFIG_HOME": os.path.join(home, ".config")}  # fmt: skip
    return project, env


def batch_verdicts(binary: str, commands: list[str], project: str, env: dict) -> list[dict]:
    """The `rewrite --batch` answer of every command, in order."""
    lines = "".join(json.dumps({"command": c}) + "\n" for c in commands)
    done = subprocess.run(
        [binary, "rewrite", "--batch", "-", "--jobs", "2"],
        input=lines,
        capture_output=True,
        text=True,
        cwd=project,
        env=env,
        check=False,
    )
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    if len(answers) != len(commands):
        sys.exit(f"batch answered {len(answers)} of {len(commands)} lines: {done.stderr[-500:]}")
    return answers


def hook_verdict(binary: str, command: str, project: str, env: dict) -> str:
    """The permission decision `hook claude` gives (`none` for no opinion or a bare rewrite)."""
    payload = {"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": command}, "cwd": project}  # fmt: skip
    done = subprocess.run(
        [binary, "hook", "claude"],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=project,
        env=env,
        check=False,
    )
    if not done.stdout.strip():
        return "none"
    answer = json.loads(done.stdout).get("hookSpecificOutput", {})
    return answer.get("permissionDecision", "none")


def main(argv: list[str] | None = None) -> int:
    """Measure and print; exit 1 when a hook answer differs from the batch verdict."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--rtk-policy", default=shutil.which("rtk-policy") or "rtk-policy")
    parser.add_argument("--hook", type=int, default=0, help="commands also run through the hook")
    parser.add_argument("--list", action="store_true", help="print every asked or denied command")
    args = parser.parse_args(argv)
    args.rtk_policy = os.path.abspath(shutil.which(args.rtk_policy) or args.rtk_policy)
    project, env = sandbox()
    total, mismatches = Counter(), 0
    for path in args.files:
        commands = read_commands(path)
        answers = batch_verdicts(args.rtk_policy, commands, project, env)
        counts = Counter(a.get("verdict", "error") for a in answers)
        total.update(counts)
        print(
            f"{path}: {len(commands)} commands, "
            + ", ".join(
                f"{k} {counts[k]}" for k in ("ask", "deny", "allow", "none", "error") if counts[k]
            )
        )
        for command, answer in zip(commands, answers, strict=True):
            if args.list and answer.get("verdict") in ("ask", "deny", None):
                print(
                    f"  {answer.get('verdict')}\t{','.join(answer.get('rules', []))}\t{command!r}"
                )
        for command, answer in list(zip(commands, answers, strict=True))[: args.hook]:
            seen = hook_verdict(args.rtk_policy, command, project, env)
            wanted = answer.get("verdict") if answer.get("verdict") in ("ask", "deny") else "none"
            if seen.replace("allow", "none") != wanted:
                mismatches += 1
                print(f"  hook {seen} / batch {wanted}: {command!r}")
    print("all: " + ", ".join(f"{k} {v}" for k, v in sorted(total.items())))
    shutil.rmtree(os.path.dirname(os.path.dirname(project)), ignore_errors=True)
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
