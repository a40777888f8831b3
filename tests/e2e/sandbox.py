"""The temporary world an agent CLI runs in during one end-to-end test.

Everything lives under one temporary folder: HOME with the XDG folders and the agents' own config
folders (~/.claude, ~/.codex, ~/.gemini, ~/.copilot), a `bin/` folder with the stub `rtk`, and
`work/<name>/` git repositories the commands run in, each with a bare `origin` beside it in
`remotes/` so that even a push stays inside the folder. rtk-policy is installed into that HOME the
way a user installs it: by running the real console script `rtk-policy init --global --agent X`.

The stub `rtk` appends `<cwd> TAB <argv>` to `rtk.log` and then runs the command it wraps, so a
test sees both that a rewrite really ran and where it ran.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

STUB_RTK = """#!/bin/sh
# stub rtk of the e2e suite: answer rtk-policy's `rtk --version` probe (rewrite = "auto" rewrites
# only for an RTK it can run), record where and how it was called, then run the wrapped command
if [ "$*" = --version ]; then echo "rtk 0.40.0"; exit 0; fi
printf '%s\\t%s\\n' "$PWD" "$*" >> '{log}'
exec "$@"
"""

PROBE_HOOK = """#!/bin/sh
# a hook that gives a canned answer: the stdout, stderr and exit code in the files beside it
cat > /dev/null
here=$(dirname "$0")
cat "$here/probe.out" 2>/dev/null
cat "$here/probe.err" >&2 2>/dev/null
exit "$(cat "$here/probe.code" 2>/dev/null || echo 0)"
"""

GIT_IDENTITY = ("-c", "user.name=e2e", "-c", "user.email=e2e@example.invalid")


def prose(text: str) -> str:
    """`text` without its file paths (a sandbox path may spell "rtk-policy" or "untrusted")."""
    return re.sub(r"\S*/\S*", "", text)


def rtk_policy_script() -> Path:
    """The `rtk-policy` console script of the environment running the tests."""
    return Path(sys.executable).parent / "rtk-policy"


def git(*args: str, cwd: Path) -> str:
    """Run git quietly in `cwd`; its stdout."""
    done = subprocess.run(
        ["git", *GIT_IDENTITY, *args], cwd=cwd, capture_output=True, text=True, check=True
    )
    return done.stdout


class Sandbox:
    """A private HOME (and XDG folders) under `root`, a stub `rtk` when `rtk`, a policy cache.

    `rtk_policy` is the console script that `init` runs (default: the one beside the Python
    running the tests); `cache` is the XDG cache folder, shared between sandboxes so the
    policies are compiled once per session.
    """

    def __init__(
        self, root: Path, cache: Path, *, rtk: bool = True, rtk_policy: Path | None = None
    ) -> None:
        self.root = root
        self.home = root / "home"
        self.config = self.home / ".config"
        self.state = self.home / ".local" / "state"
        self.runtime = root / "run"
        self.cache = cache
        self.bin = root / "bin"
        self.rtk_log = root / "rtk.log"
        self.rtk_policy = rtk_policy or rtk_policy_script()
        for folder in (self.home, self.config, self.state, self.bin, root / "work", cache):
            folder.mkdir(parents=True, exist_ok=True)
        self.runtime.mkdir(mode=0o700, exist_ok=True)
        if rtk:
            stub = self.bin / "rtk"
            stub.write_text(STUB_RTK.format(log=self.rtk_log))
            stub.chmod(0o755)

    def path(self) -> str:
        """The PATH the agents and their commands run with: the stub first, then node and git."""
        folders = [str(self.bin)]
        for program in ("node", "git"):
            found = shutil.which(program)
            if found and str(Path(found).parent) not in folders:
                folders.append(str(Path(found).parent))
        return ":".join(folders + ["/usr/local/bin", "/usr/bin", "/bin"])

    def env(self, **extra: str) -> dict[str, str]:
        """A clean environment for an agent CLI: this HOME, no inherited secrets or settings."""
        env = {
            "PATH": self.path(),
            "HOME": str(self.home),
            "USER": os.environ.get("USER", "e2e"),
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            "NO_COLOR": "1",
            "XDG_CONFIG_HOME": str(self.config),
            "XDG_STATE_HOME": str(self.state),
            "XDG_CACHE_HOME": str(self.cache),
            "XDG_RUNTIME_DIR": str(self.runtime),
            "TMPDIR": str(self.root),
            # a resident engine left behind by a failed test exits on its own soon
            "RTK_POLICY_SERVE_IDLE": "120",
        }
        env.update(extra)
        return env

    def init(self, agent: str, *, in_process: bool = False, **env: str) -> str:
        """Run `rtk-policy init --global --agent AGENT [--in-process]`; its output (stdout, then
        stderr)."""
        argv = [str(self.rtk_policy), "init", "--global", "--agent", agent]
        if in_process:
            argv.append("--in-process")
        done = subprocess.run(
            argv, cwd=self.root, env=self.env(**env), capture_output=True, text=True
        )
        assert done.returncode == 0, f"rtk-policy init failed: {done.stderr}"
        return done.stdout + done.stderr

    def doctor(self) -> str:
        """`rtk-policy doctor`'s output (stdout, then stderr) in this HOME."""
        argv = [str(self.rtk_policy), "doctor"]
        done = subprocess.run(argv, cwd=self.root, env=self.env(), capture_output=True, text=True)
        return done.stdout + done.stderr

    def probe_hook(self, stdout: str = "", stderr: str = "", code: int = 0) -> Path:
        """A hook script giving this canned answer (each call rewrites the answer)."""
        folder = self.root / "probe"
        folder.mkdir(exist_ok=True)
        (folder / "probe.out").write_text(stdout)
        (folder / "probe.err").write_text(stderr)
        (folder / "probe.code").write_text(f"{code}\n")
        script = folder / "probe-hook.sh"
        script.write_text(PROBE_HOOK)
        script.chmod(0o755)
        return script

    def user_policy(self, name: str, text: str) -> Path:
        """Write a user policy file, `$XDG_CONFIG_HOME/rtk-policy/policies/NAME.yaml`."""
        folder = self.config / "rtk-policy" / "policies"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{name}.yaml"
        path.write_text(text)
        return path

    def repo(self, name: str) -> Path:
        """A fresh git repository `work/NAME` (branch main, one commit of `tracked.txt`) whose
        `origin` is a bare repository in `remotes/`, all inside the sandbox."""
        work = self.root / "work" / name
        remote = self.root / "remotes" / f"{name}.git"
        remote.mkdir(parents=True)
        git("init", "-q", "--bare", "-b", "main", str(remote), cwd=self.root)
        work.mkdir(parents=True)
        git("init", "-q", "-b", "main", cwd=work)
        (work / "tracked.txt").write_text("committed\n")
        git("add", "tracked.txt", cwd=work)
        git("commit", "-q", "-m", "init", cwd=work)
        git("remote", "add", "origin", str(remote), cwd=work)
        return work

    def remote_has(self, name: str, branch: str = "main") -> bool:
        """Whether `branch` was pushed to the bare origin of repository NAME."""
        remote = self.root / "remotes" / f"{name}.git"
        ref = f"refs/heads/{branch}"
        done = subprocess.run(
            ["git", "--git-dir", str(remote), "rev-parse", "--verify", "-q", ref],
            capture_output=True,
        )
        return done.returncode == 0

    def rtk_calls(self) -> list[tuple[str, str]]:
        """(cwd, argv) of every call of the stub `rtk`, in order."""
        if not self.rtk_log.exists():
            return []
        rows = [line.split("\t", 1) for line in self.rtk_log.read_text().splitlines()]
        return [(row[0], row[1] if len(row) > 1 else "") for row in rows]

    def audit(self, cwd: Path | None = None) -> list[dict]:
        """The audit records our hook wrote (only those whose `cwd` is `cwd`, when given)."""
        path = self.state / "rtk-policy" / "audit.jsonl"
        if not path.exists():
            return []
        records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        return [r for r in records if cwd is None or r.get("cwd") == str(cwd)]

    def stop_servers(self) -> None:
        """Stop the resident engine the thin client started for this sandbox, if any (its pid is
        in the lock file beside its socket)."""
        lock = self.runtime / "rtk-policy" / "engine.lock"
        try:
            pid = int(lock.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass
