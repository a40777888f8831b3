"""What a cold hook imports: a plain command is decided without `re`, `enum`, `json` or `typing`.

Importing `re` (with `enum`) and `json` costs a cold hook ~7 ms, a tenth of its time
(`benchmarks/RESULTS.md`, session 18): the hook reads and writes JSON through
`util.json_codec`, compiles its few Python regexes on first use (`util.lazy_re`) and splits plain
words without one. Each command here is decided as `init --in-process` runs the hook, by a fresh
interpreter, the policy cache warm (as after the first call); the test fails as soon as a
module on that path imports one of them, at its top or on the way of these commands. Site is
skipped (`-S`, the package folders added by hand): an editable install's import hook imports `re`
itself.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from rtk_policy.util import json_codec

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: and `importlib` with `warnings`, ~0.4 ms more (the hook imports by `__import__`)
HEAVY = ("re", "enum", "json", "typing", "importlib", "warnings")
#: this interpreter's package folders, without their `.pth` files
SITE = [path for path in sys.path if os.path.basename(path) == "site-packages"]
PROBE = f"""
import sys
sys.path[:0] = [{ROOT!r}]
sys.path += {SITE!r}
from rtk_policy.engine import pipeline
pipeline.deadline = lambda budget_s: None  # a slow machine decides all the same
from rtk_policy.main import main
sys.argv = ["rtk-policy", "hook", "claude"]
main()
sys.stdout.flush()
print(sorted(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)
"""


def _decided_cold(command, tmp_path):
    """The probe's run of the hook on `command` (the policy cache warmed by a first call)."""
    payload = json_codec.dumps({
        "session_id": "s", "transcript_path": "/dev/null", "cwd": str(tmp_path),
        "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": command},
    })  # fmt: skip
    warm = [sys.executable, "-m", "rtk_policy", "hook", "claude"]  # the policy cache, compiled
    subprocess.run(warm, input=payload.encode(), capture_output=True, timeout=120, check=True)
    done = subprocess.run(
        [sys.executable, "-S", "-c", PROBE],
        input=payload.encode(),
        capture_output=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert b"rtk-policy" not in done.stderr, done.stderr  # no internal error, no notice
    return done


def _allowed(done) -> bool:
    return json_codec.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "allow"


@pytest.mark.parametrize(
    "command", ["git status", "ls -la", "git log --oneline -5", "npm test", "make", "cat notes"]
)
def test_a_plain_command_is_decided_without_the_heavy_modules(command, tmp_path):
    """The hook decides (no error notice on stderr; `git status` is allowed) and none of `HEAVY`
    was imported."""
    done = _decided_cold(command, tmp_path)
    if command == "git status":  # judged: Claude Code's own rules allow it, we keep that
        assert _allowed(done)
    assert done.stderr.decode().splitlines()[-1] == "[]", done.stderr.decode()


def test_a_user_config_file_brings_none_of_them_either(tmp_path):
    """With a user config file (its keys read from the cache folder's JSON after the first call,
    `config/parsed.py`) `git status` is decided as fast: the config's JSON goes through the C
    codec too. `json` there cost ~3 ms of a 34 ms hook (session 19)."""
    folder = os.path.join(os.environ["XDG_CONFIG_HOME"], "rtk-policy")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.toml"), "w", encoding="utf-8") as handle:
        handle.write('rewrite_unapproved = true\nexclude_commands = ["terraform"]\n')
    done = _decided_cold("git status", tmp_path)
    assert _allowed(done)
    assert done.stderr.decode().splitlines()[-1] == "[]", done.stderr.decode()
