"""The package on a platform without the POSIX parts (Windows has no `fcntl`, `os.pwrite`,
`os.getuid`, `os.posix_spawn` nor, in older builds, `socket.AF_UNIX`): imported and run in a child
interpreter where those are taken away and `msvcrt.locking` is a stand-in, it still decides through
`rewrite`, `check` and `hook`, and writes its audit records under the portable lock."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

CHILD = textwrap.dedent(
    """
    import os, socket, sys, types, threading

    sys.modules["fcntl"] = None                      # import fcntl -> ImportError
    for name in ("pwrite", "getuid", "geteuid", "posix_spawn"):
        if hasattr(os, name):
            delattr(os, name)
    if hasattr(socket, "AF_UNIX"):
        del socket.AF_UNIX
    held, calls = threading.Lock(), []

    def locking(fd, mode, nbytes):                   # msvcrt.locking's shape
        calls.append(mode)
        if mode == msvcrt.LK_UNLCK:
            held.release()
        elif not held.acquire(blocking=mode == msvcrt.LK_LOCK):
            raise OSError("locked")

    msvcrt = types.ModuleType("msvcrt")
    msvcrt.LK_LOCK, msvcrt.LK_NBLCK, msvcrt.LK_UNLCK = 1, 2, 0
    msvcrt.locking = locking
    sys.modules["msvcrt"] = msvcrt

    import io, json
    from rtk_policy.main import main
    assert main(["check"]) == 0
    assert main(["rewrite", "sudo rm -rf /"]) == 2
    assert main(["rewrite", "git status"]) in (1, 3)
    sys.stdin = io.StringIO(json.dumps({
        "session_id": "s", "cwd": os.getcwd(), "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": "rm -rf ~"}, "tool_use_id": "t"}))
    out = io.StringIO()
    real, sys.stdout = sys.stdout, out
    try:
        main(["hook", "claude"])
    finally:
        sys.stdout = real
    print()  # rewrite printed its answer without a newline
    print("HOOK", out.getvalue().strip())
    print("LOCKS", sum(1 for mode in calls if mode == msvcrt.LK_LOCK))
    """
)


def test_decides_without_the_posix_parts(tmp_path):
    env = {
        **os.environ,
        "HOME": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_RUNTIME_DIR": str(tmp_path / "run"),
    }
    done = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=300,
        cwd=tmp_path, env=env, stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)
    answer = json.loads(lines["HOOK"])
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert int(lines["LOCKS"]) >= 3  # every audit append took the portable lock
    log = tmp_path / "state" / "rtk-policy" / "audit.jsonl"
    assert len(log.read_text(encoding="utf-8").splitlines()) >= 3
