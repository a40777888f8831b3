"""`rtk-policy init [--global] [--agent NAME] [--serve]`: write our hook entry into an agent's settings.

`--serve` installs the thin client of the resident engine instead of `rtk-policy hook AGENT`.
"""

from __future__ import annotations

from typing import IO, Any

from rtk_policy.settings.install import install
from rtk_policy.settings.jsonfile import SettingsError
from rtk_policy.settings.targets import hook_command, target


def run(args: Any, stdin: IO[str], stdout: IO[str], stderr: IO[str]) -> int:
    """Install the hook idempotently; exit 1 (file untouched) when the settings file is not JSON."""
    agent = getattr(args, "agent", "claude") or "claude"
    spec = target(agent, bool(getattr(args, "global_", False)))
    serve = bool(getattr(args, "serve", False))
    try:
        change = install(spec, thin_client_command(agent) if serve else hook_command(agent))
    except (SettingsError, ValueError) as error:
        stderr.write(f"rtk-policy init: error: {error}\n")
        stderr.write(
            "rtk-policy init: the file was left untouched; fix or move it, then run init again\n"
        )
        return 1
    except OSError as error:
        stderr.write(f"rtk-policy init: error: cannot write {spec.path}: {error.strerror}\n")
        return 1
    for warning in change.warnings:
        stderr.write(f"rtk-policy init: warning: {warning}\n")
    stdout.write(change.message + "\n")
    if serve:
        stdout.write(SERVE_NOTE)
    return 0


SERVE_NOTE = (
    "The hook is the thin client: it hands each call to a resident engine (`rtk-policy serve`, started\n"
    "on demand, private socket, exits when idle) and decides in-process when none answers.\n"
    "An http hook (`rtk-policy serve --http PORT`) is NOT installed: Claude Code treats an http hook\n"
    "whose server is down as no opinion, so commands would run unchecked.\n"
)


def thin_client_command(agent: str) -> str:
    """`<python> -S -I <abs path of rtk_policy/client.py> AGENT`: the resident engine's thin client."""
    import shlex
    import sys
    from pathlib import Path

    import rtk_policy.client

    client = Path(rtk_policy.client.__file__).resolve()
    return f"{shlex.quote(sys.executable)} -S -I {shlex.quote(str(client))} {agent}"
