"""`rtk-policy init [--global] [--agent NAME] [--in-process]`: write our hook into agent settings.

By default the hook is the resident engine's thin client (`<python> -S -I <…>/client.py AGENT`).
`--in-process` writes `rtk-policy hook AGENT` instead; `--serve` is an alias of the default, kept
for older docs and scripts. Running init again switches an entry init wrote before (either form, any
install) to the one asked for, in place.
"""

from __future__ import annotations

from typing import IO, Any

from rtk_policy.settings.install import install
from rtk_policy.settings.jsonfile import SettingsError
from rtk_policy.settings.targets import (
    hook_command,
    target,
    thin_client_command,
    thin_client_unavailable,
)

THIN_CLIENT_NOTE = (
    "The hook is the thin client: a tiny program, started by absolute path with this install's\n"
    "Python, that hands each call to the resident engine (`rtk-policy serve`: policies compiled\n"
    "once, a private Unix socket, exits when idle) and prints its answer. When no engine answers,\n"
    "it starts one in the background and decides that call itself, so no command goes unchecked.\n"
    "No http hook is installed: Claude Code treats an http hook whose server is down as\n"
    "no opinion, so commands would run unchecked. (`rtk-policy init --in-process` installs\n"
    "the plain `rtk-policy hook` command instead.)\n"
)
IN_PROCESS_NOTE = (
    "The hook decides every call in a fresh process (`rtk-policy hook`, no resident engine);\n"
    "plain `rtk-policy init` installs the faster thin client instead.\n"
)


def run(args: Any, stdin: IO[str], stdout: IO[str], stderr: IO[str]) -> int:
    """Install the hook idempotently; exit 1 (file untouched) when the settings file is not JSON."""
    agent = getattr(args, "agent", "claude") or "claude"
    spec = target(agent, bool(getattr(args, "global_", False)))
    in_process = bool(getattr(args, "in_process", False))
    if not in_process and (reason := thin_client_unavailable()):
        stderr.write(f"rtk-policy init: the thin client cannot be used here ({reason}); ")
        stderr.write("installing the in-process hook\n")
        in_process = True
    command = hook_command(agent) if in_process else thin_client_command(agent)
    try:
        change = install(spec, command)
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
    stdout.write(IN_PROCESS_NOTE if in_process else THIN_CLIENT_NOTE)
    compile_ahead(stdout, stderr)
    return 0


def compile_ahead(stdout: IO[str], stderr: IO[str]) -> bool:
    """Compile the policies the hook loads in this folder into the compiled cache now, so that
    the hook's first call reads them instead of compiling (seconds); True when they loaded. A
    policy that does not load is a warning here (the hook says so on every call)."""
    from rtk_policy.engine.pipeline import load_engine
    from rtk_policy.policy import PolicyLoadError

    try:
        engine = load_engine()
    except PolicyLoadError as error:
        stderr.write(f"rtk-policy init: warning: the policies do not load:\n{error.render()}\n")
        return False
    except Exception as error:  # noqa: BLE001 - the hook is installed; say why it cannot decide
        stderr.write(f"rtk-policy init: warning: the policies do not load: {error}\n")
        return False
    policies = engine.policies
    stdout.write(
        f"Policies compiled for the hook: {len(policies.rules)} rule(s) from "
        f"{len(policies.files)} file(s) on {policies.backend}.\n"
    )
    return True
