"""`rtk-policy init [--global] [--agent NAME] [--in-process] [--fail MODE] [--system]`: write our
hook into an agent's settings, for shell commands and for the agent's file-writing tools
(`settings/targets.py`).

By default the hook is the resident engine's thin client (`<python> -S -I <…>/client.py AGENT`),
`--in-process` writes `rtk-policy hook AGENT` instead; either behind a guard that answers per the
fail mode when the install is broken (`rtk_policy.settings.hook_command`). The fail mode is
`--fail`, else `$RTK_POLICY_FAIL`, else the config's `fail_mode` (open by default); `closed` and
`deny` also set the agent's own block-on-failure switch where it has one (Claude Code's
`onFailure`, Cursor's `failClosed`). Every entry gets an explicit timeout. Running init again
switches an entry init wrote before (any form, any install) in place; for Codex it says when that
change needs a new review. `--system` (as root) writes every agent's machine-wide settings instead
(`settings/system.py`).
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import IO

from rtk_policy.agents import AGENTS
from rtk_policy.settings import codex_trust
from rtk_policy.settings.install import (
    IN_PROCESS,
    Change,
    command_form,
    install,
    is_ours,
    uninstall,
)
from rtk_policy.settings.jsonfile import SettingsError, read_json
from rtk_policy.settings.project import (
    NotProjectRoot,
    check_install_folder,
    keep_backups_out_of_git,
    keep_out_of_git,
)
from rtk_policy.settings.targets import (
    Target,
    hook_command,
    older_targets,
    target,
    targets,
    thin_client_command,
    thin_client_unavailable,
    with_file_tools,
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
SYSTEM_NOTE = (
    "The hooks run `{python} -I -m rtk_policy hook AGENT --system`: a root-owned Python, isolated\n"
    "from PYTHONPATH and the user site, deciding with the shipped packs and {managed} only\n"
    "(policies/ and config.toml there), compiled through the root-owned cache {cache}.\n"
    "Nothing the agent's user can write changes what these hooks enforce.\n"
)
WRITER_NOTE = (
    "The hooks hand each audit record to the audit writer (`rtk-policy audit-writer`, its own\n"
    "user): it stamps the sender's uid and pid, keys the chain with a key only it can read and\n"
    "keeps the log where the agent's user cannot write. Until it runs, each hook keeps its record\n"
    "in the user's state folder (audit-spool.jsonl) and says so on stderr.\n"
)
CODEX_TRUST_NOTE = (
    "Codex runs this hook only after you trust it: start `codex`, open `/hooks`, review the\n"
    "rtk-policy hook and trust it. `rtk-policy doctor` says whether Codex trusts it.\n"
)


def chosen_fail_mode(fail: str | None) -> str:
    """`fail` (`--fail`), else the config's `fail_mode` made stricter (never looser) by
    `$RTK_POLICY_FAIL` (`config.load.effective_fail_mode`)."""
    if fail in FAIL_MODES:
        return str(fail)
    from rtk_policy.config.load import effective_fail_mode, load_config

    return effective_fail_mode(load_config())


def codex_statuses(specs: tuple[Target, ...]) -> dict[str, str]:
    """{key: trust status} of our Codex hooks in the file of `specs` now ({} when unreadable)."""
    spec = specs[0]
    try:
        data = read_json(spec.path).data
    except SettingsError:
        return {}
    found = codex_trust.statuses(Path(spec.path), data, spec.event)
    return {key: status for key, (status, handler) in found.items() if is_ours(handler)}


def retrust_warning(before: dict[str, str], after: dict[str, str]) -> str:
    """A warning when a hook Codex trusted before is no longer trusted ("" otherwise)."""
    lost = [key for key, status in before.items() if status == codex_trust.TRUSTED]
    if all(after.get(key) == codex_trust.TRUSTED for key in lost):
        return ""
    return (
        "the hook Codex trusted has changed, so Codex will not run it until you review and trust"
        " it again in `/hooks`"
    )


def installed_command(
    agent: str, fail: str | None, in_process: bool, stderr: IO[str] | None = None
) -> tuple[str, str]:
    """(the hook command init writes for `agent` here, its fail mode: `fail` or the chosen one):
    the thin client, or the in-process hook with `in_process` or where the thin client cannot run
    (said on `stderr`)."""
    mode = chosen_fail_mode(fail)
    if not in_process and (reason := thin_client_unavailable()):
        if stderr is not None:
            stderr.write(f"rtk-policy init: the thin client cannot be used here ({reason}); ")
            stderr.write("installing the in-process hook\n")
        in_process = True
    command = hook_command(agent, mode) if in_process else thin_client_command(agent, mode)
    return command, mode


def run(
    *,
    agent: str | None = None,
    global_: bool = False,
    system: bool = False,
    root: str = "/",
    in_process: bool = False,
    serve: bool = False,
    fail: str | None = None,
    no_audit_writer: bool = False,
    as_json: bool = False,
    stdin: IO[str] | None = None,
    stdout: IO[str],
    stderr: IO[str],
) -> int:
    """Install the hook of `agent` (default claude; `global_`: user-wide) idempotently: the thin
    client, or `rtk-policy hook` with `in_process` (`serve`, the default, is kept as an alias);
    `fail` chooses the broken-install answer; `system`: every agent's machine-wide settings under
    `root` (with the audit writer service unless `no_audit_writer`); `as_json`: what was installed
    as one JSON object. Exit 1 (file untouched) when the
    settings file is not JSON or, for a project, when the working folder is not where the agent
    reads project settings."""
    if system:
        return run_system(agent, root, no_audit_writer, stdout, stderr)
    agent = agent or "claude"
    cwd = os.getcwd()
    specs = targets(agent, global_, cwd)
    if not global_:
        try:
            check_install_folder(specs[0].path, cwd, agent)
        except NotProjectRoot as error:
            stderr.write(f"rtk-policy init: error: {error}\n")
            return 1
    command, mode = installed_command(agent, fail, in_process, stderr)
    before = codex_statuses(specs) if agent == "codex" else {}
    created = not specs[0].path.exists()
    change = _install(specs, command, stderr, mode)
    if change is None:
        return 1
    after = codex_statuses(specs) if agent == "codex" else {}
    if change.changed and (warning := retrust_warning(before, after)):
        stderr.write(f"rtk-policy init: warning: {warning}\n")
    done = [change.message]
    if not global_:
        done += [*move_older(agent, cwd, stderr), *keep_out_of_git(specs[0].path, created)]
        done += keep_backups_out_of_git([older.path for older in older_targets(agent, False, cwd)])
    done = [line for line in done if line]
    trusted = bool(after) and all(status == codex_trust.TRUSTED for status in after.values())
    if as_json:
        compiled = compile_ahead(io.StringIO(), stderr)
        report = {"ok": True, "agent": agent, "file": change.path, "changed": change.changed,
                  "command": command, "form": command_form(command), "fail_mode": mode,
                  "done": done, "policies_compiled": compiled}  # fmt: skip
        if agent == "codex":
            report["codex_trusted"] = trusted
        stdout.write(json.dumps(report, indent=2) + "\n")
        return 0
    stdout.writelines(f"{line}\n" for line in done)
    stdout.write(IN_PROCESS_NOTE if command_form(command) == IN_PROCESS else THIN_CLIENT_NOTE)
    if agent == "claude":
        stdout.write(HTTP_NOTE)
    stdout.write(FAIL_NOTE.format(mode=mode, what=FAIL_WHAT[mode]))
    if agent == "codex":
        stdout.write("Codex trusts this hook.\n" if trusted else CODEX_TRUST_NOTE)
    compile_ahead(stdout, stderr)
    return 0


def move_older(agent: str, cwd: str, stderr: IO[str]) -> list[str]:
    """Take our entries out of the files older versions of init wrote for this project (Claude
    Code's committed `.claude/settings.json`), leaving everyone else's; what was done."""
    done = []
    for older in older_targets(agent, False, cwd):
        try:
            change = uninstall(with_file_tools(older))
        except (SettingsError, OSError) as error:
            stderr.write(f"rtk-policy init: warning: {older.path} keeps an older entry: {error}\n")
            continue
        if change.changed:
            done.append(f"{change.message} (where an older init wrote it)")
    return done


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


def _install(
    specs: tuple[Target, ...], command: str, stderr: IO[str], mode: str = "open"
) -> Change | None:
    """Install into one file, reporting a failure on `stderr` (None then)."""
    try:
        change = install(specs, command, mode)
    except (SettingsError, ValueError) as error:
        stderr.write(f"rtk-policy init: error: {error}\n")
        stderr.write(
            "rtk-policy init: the file was left untouched; fix or move it, then run init again\n"
        )
        return None
    except OSError as error:
        stderr.write(f"rtk-policy init: error: cannot write {specs[0].path}: {error.strerror}\n")
        return None
    for warning in change.warnings:
        stderr.write(f"rtk-policy init: warning: {warning}\n")
    return change


def _install_writer(root: str, stdout: IO[str], stderr: IO[str]) -> bool:
    """Set up the audit writer service (`settings/writer_service.py`); False when it failed."""
    import subprocess
    import sys

    from rtk_policy.settings import writer_service

    try:
        done = writer_service.install(sys.executable, root)
    except (OSError, subprocess.CalledProcessError) as error:
        stderr.write(f"rtk-policy init --system: error: the audit writer: {error}\n")
        return False
    stdout.writelines(f"{line}\n" for line in done)
    stdout.write(WRITER_NOTE)
    return True


def run_system(
    agent: str | None, root: str, no_audit_writer: bool, stdout: IO[str], stderr: IO[str]
) -> int:
    """`init --system`: refuse unless root with a root-owned install; then every agent's (or the
    one `agent`) machine-wide settings under `root`, the managed folder and the system cache."""
    import sys

    from rtk_policy.settings import system

    if os.geteuid() != 0:
        stderr.write("rtk-policy init --system: error: run it as root (it writes /etc)\n")
        return 1
    problems = system.install_problems(sys.executable)
    if problems:
        stderr.write(
            "rtk-policy init --system: error: the agent's user could change this install, so a\n"
            "machine-wide hook running it would decide nothing; install rtk-policy root-owned\n"
            "(e.g. `sudo pip install rtk-policy` into a root-owned Python) and run init with\n"
            "that Python:\n"
        )
        stderr.writelines(f"  {problem}\n" for problem in problems)
        return 1
    for folder in system.prepare_managed(root):
        stdout.write(f"created {folder}\n")
    failed = False
    for name in [agent] if agent else AGENTS:
        specs = system.system_targets(name, target(name, True), root)
        change = _install(specs, system.system_hook_command(name), stderr)
        failed = failed or change is None
        if change is not None:
            stdout.write(change.message + "\n")
    rules = system.compile_system_cache(root)
    stdout.write(f"compiled {rules} rules into {system.system_cache(root)}\n")
    if not no_audit_writer:
        failed = not _install_writer(root, stdout, stderr) or failed
    stdout.write(SYSTEM_NOTE.format(python=sys.executable, managed=system.managed_folder(root),
                                    cache=system.system_cache(root)))  # fmt: skip
    return 1 if failed else 0
