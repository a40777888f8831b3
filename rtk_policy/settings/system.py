"""The machine-wide install (`init --system`): each agent's machine-wide hook settings, and the
checks that make them worth having.

A hook the agent's own user can change decides nothing the user cannot undo, so the system install
writes each agent's root-owned settings (`SYSTEM_SETTINGS`, sources in the README's threat model),
runs a root-owned Python with `-I` (no `PYTHONPATH`, no user site) and `hook --system` (policies and
config of the managed folder only, a root-owned compiled cache), and refuses an interpreter or
package that the agent's user could replace (`install_problems`).

`root` is where `/` is taken to be: "/" for real, a temporary folder in tests.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

from rtk_policy.config.managed import managed_folder, owner_problems, platform, system_cache
from rtk_policy.settings.targets import Target, with_file_tools
from rtk_policy.util import record

LINUX, MAC = "linux", "darwin"
#: each agent's machine-wide settings file that holds hooks, per platform (relative to `root`)
SYSTEM_SETTINGS = {
    "claude": {
        LINUX: "etc/claude-code/managed-settings.json",
        MAC: "Library/Application Support/ClaudeCode/managed-settings.json",
    },
    "codex": {LINUX: "etc/codex/hooks.json", MAC: "etc/codex/hooks.json"},
    "gemini": {
        LINUX: "etc/gemini-cli/settings.json",
        MAC: "Library/Application Support/GeminiCli/settings.json",
    },
    "copilot": {
        LINUX: "etc/github-copilot/policy.d/rtk-policy.json",
        MAC: "etc/github-copilot/policy.d/rtk-policy.json",
    },
    "cursor": {
        LINUX: "etc/cursor/hooks.json",
        MAC: "Library/Application Support/Cursor/hooks.json",
    },
}


def system_targets(agent: str, shell: Target, root: str = "/") -> tuple[Target, ...]:
    """`agent`'s machine-wide entries: the entries of its user-level target `shell` (same event,
    matcher and handler shape) in its machine-wide settings file."""
    path = Path(root) / SYSTEM_SETTINGS[agent][platform()]
    return with_file_tools(record.evolve(shell, path=path))


def system_hook_command(agent: str, python: str = sys.executable) -> str:
    """`<python> -I -m rtk_policy hook AGENT --system`: isolated, and on the managed layer only."""
    return f"{shlex.quote(python)} -I -m rtk_policy hook {agent} --system"


def install_problems(python: str = sys.executable) -> list[str]:
    """Why `python` and the rtk-policy it imports with `-I` could be changed by a user other than
    root (each path, and every folder above it, must be root-owned and not group- or
    other-writable); [] when they cannot."""
    probe = "import json, sys, rtk_policy; print(json.dumps([sys.path, rtk_policy.__file__]))"
    try:
        done = subprocess.run(
            [python, "-I", "-c", probe], capture_output=True, text=True, timeout=60, check=True
        )
        search, package = json.loads(done.stdout)
    except (OSError, subprocess.SubprocessError, ValueError) as error:
        return [f"{python} -I cannot import rtk_policy ({error})"]
    places = [python, os.path.dirname(package), *(p for p in search if p and os.path.exists(p))]
    problems: list[str] = []
    for place in dict.fromkeys(os.path.realpath(p) for p in places):
        problems += [p for p in owner_problems(place) if p not in problems]
    return problems


def prepare_managed(root: str = "/") -> list[str]:
    """Create the managed folder (`policies/` in it) and the system cache, root-owned, mode 0755;
    return what was created."""
    made = []
    for folder in (os.path.join(managed_folder(root), "policies"), system_cache(root)):
        if not os.path.isdir(folder):
            os.makedirs(folder, mode=0o755, exist_ok=True)
            made.append(folder)
        os.chmod(folder, 0o755)
    return made


def remove_prepared(root: str = "/") -> list[str]:
    """Take back what `prepare_managed` and `compile_system_cache` made: the compiled policies
    in the system cache, and those folders once empty (a policy or config of the admin's keeps
    its folder); what was removed."""
    from rtk_policy.policy.cache import written_here

    removed = []
    cache = system_cache(root)
    if os.path.isdir(cache):
        for name in os.listdir(cache):
            if written_here(name):
                os.unlink(os.path.join(cache, name))
        removed.append(f"removed the compiled policies in {cache}")
    folder = managed_folder(root)
    for made in (cache, os.path.join(folder, "policies"), folder):
        try:
            os.rmdir(made)
        except OSError:  # not there, or not empty: kept
            continue
        removed.append(f"removed the empty folder {made}")
    return removed


def compile_system_cache(root: str = "/") -> int:
    """Compile the policies a system hook loads into the system cache, readable by every user;
    returns the number of rules."""
    from rtk_policy.engine.pipeline import load_engine

    engine = load_engine(system=True, system_root=root)
    cache = system_cache(root)
    for name in os.listdir(cache):
        os.chmod(os.path.join(cache, name), 0o644)
    return len(engine.policies.rules)
