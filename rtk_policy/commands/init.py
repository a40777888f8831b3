"""`rtk-policy init [--global] [--agent NAME] [--in-process] [--fail MODE]`: write our hook into an
agent's settings.

By default the hook is the resident engine's thin client (`<python> -S -I <…>/client.py AGENT`),
`--in-process` writes `rtk-policy hook AGENT` instead; either behind a guard that answers per the
fail mode when the install is broken (`rtk_policy.settings.hook_command`). The fail mode is
`--fail`, else `$RTK_POLICY_FAIL`, else the config's `fail_mode` (open by default); `closed` and
`deny` also set the agent's own block-on-failure switch where it has one (Claude Code's
`onFailure`, Cursor's `failClosed`). Every entry gets an explicit timeout. Running init again
switches an entry init wrote before (any form, any install) in place; for Codex it says when that
change needs a new review.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO, Any

from rtk_policy.settings import codex_trust
from rtk_policy.settings.install import install
from rtk_policy.settings.jsonfile import SettingsError, read_json
from rtk_policy.settings.targets import (
    Target,
    hook_command,
    target,
    thin_client_command,
    thin_client_unavailable,
)

FAIL_MODES = ("open", "closed", "deny")
THIN_CLIENT_NOTE = (
    "The hook is the thin client: a tiny program, started by absolute path with this install's\n"
    "Python, that hands each call to the resident engine (`rtk-policy serve`: policies compiled\n"
    "once, a private Unix socket, exits when idle) and prints its answer. When no engine answers,\n"
    "it starts one in the background and decides that call itself, so no command goes unchecked.\n"
    "(`rtk-policy init --in-process` installs the plain `rtk-policy hook` command instead.)\n"
)
HTTP_NOTE = (
    "No http hook is installed: Claude Code treats an http hook whose server is down as\n"
    "no opinion, so commands would run unchecked.\n"
)
IN_PROCESS_NOTE = (
    "The hook decides every call in a fresh process (`rtk-policy hook`, no resident engine);\n"
    "plain `rtk-policy init` installs the faster thin client instead.\n"
)
FAIL_NOTE = (
    "If this install breaks (package uninstalled, interpreter gone), the hook answers with fail\n"
    "mode {mode!r}: {what} (change it with `rtk-policy init --fail open|closed|deny`).\n"
)
FAIL_WHAT = {
    "open": "no opinion, the agent's own rules decide",
    "closed": "the agent asks the user (Codex, which cannot ask, refuses)",
    "deny": "every shell command is refused",
}
CODEX_TRUST_NOTE = (
    "Codex runs this hook only after you trust it: start `codex`, open `/hooks`, review the\n"
    "rtk-policy hook and trust it. `rtk-policy doctor` says whether Codex trusts it.\n"
)


def chosen_fail_mode(args: Any) -> str:
    """`--fail`, else `$RTK_POLICY_FAIL`, else the config's `fail_mode`, else `open`."""
    mode = getattr(args, "fail", None) or os.environ.get("RTK_POLICY_FAIL", "")
    if mode in FAIL_MODES:
        return mode
    try:
        from rtk_policy.config.load import load_config

        mode = load_config().fail_mode
    except Exception:  # noqa: BLE001 - an unreadable config leaves the default
        mode = "open"
    return mode if mode in FAIL_MODES else "open"


def codex_statuses(spec: Target) -> dict[str, tuple[str, str]]:
    """{command: (trust status, key)} of the Codex hooks in `spec.path` now ({} when unreadable)."""
    try:
        data = read_json(spec.path).data
    except SettingsError:
        return {}
    return codex_trust.statuses(Path(spec.path), data, spec.event)


def retrust_warning(before: dict[str, tuple[str, str]], after: dict[str, tuple[str, str]]) -> str:
    """A warning when a hook Codex trusted before is no longer trusted ("" otherwise)."""
    lost = [key for status, key in before.values() if status == codex_trust.TRUSTED]
    still = {key for status, key in after.values() if status == codex_trust.TRUSTED}
    if not [key for key in lost if key not in still]:
        return ""
    return (
        "the hook Codex trusted has changed, so Codex will not run it until you review and trust"
        " it again in `/hooks`"
    )


def run(args: Any, stdin: IO[str], stdout: IO[str], stderr: IO[str]) -> int:
    """Install the hook idempotently; exit 1 (file untouched) when the settings file is not JSON."""
    agent = getattr(args, "agent", "claude") or "claude"
    spec = target(agent, bool(getattr(args, "global_", False)))
    mode = chosen_fail_mode(args)
    in_process = bool(getattr(args, "in_process", False))
    if not in_process and (reason := thin_client_unavailable()):
        stderr.write(f"rtk-policy init: the thin client cannot be used here ({reason}); ")
        stderr.write("installing the in-process hook\n")
        in_process = True
    command = hook_command(agent, mode) if in_process else thin_client_command(agent, mode)
    before = codex_statuses(spec) if agent == "codex" else {}
    try:
        change = install(spec, command, mode)
    except (SettingsError, ValueError) as error:
        stderr.write(f"rtk-policy init: error: {error}\n")
        stderr.write(
            "rtk-policy init: the file was left untouched; fix or move it, then run init again\n"
        )
        return 1
    except OSError as error:
        stderr.write(f"rtk-policy init: error: cannot write {spec.path}: {error.strerror}\n")
        return 1
    warnings = list(change.warnings)
    after = codex_statuses(spec) if agent == "codex" else {}
    if change.changed:
        warnings.append(retrust_warning(before, after))
    for warning in filter(None, warnings):
        stderr.write(f"rtk-policy init: warning: {warning}\n")
    stdout.write(change.message + "\n")
    stdout.write(IN_PROCESS_NOTE if in_process else THIN_CLIENT_NOTE)
    if agent == "claude":
        stdout.write(HTTP_NOTE)
    stdout.write(FAIL_NOTE.format(mode=mode, what=FAIL_WHAT[mode]))
    if agent == "codex":
        trusted = after.get(command, ("",))[0] == codex_trust.TRUSTED
        stdout.write("Codex trusts this hook.\n" if trusted else CODEX_TRUST_NOTE)
    return 0
