"""What is wrong with one installed hook entry of ours (`rtk-policy doctor`): each broken state a
user can be in — the interpreter or the hook file gone, the package uninstalled, a command that
does not run or answer, no guard, no timeout, a Codex hook that is not trusted — as a `Finding`."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from rtk_policy.agents.samples import sample_payload
from rtk_policy.settings import codex_trust
from rtk_policy.settings.hook_command import fallback_mode, guard_paths, unguarded
from rtk_policy.settings.install import IN_PROCESS, THIN_CLIENT, command_form
from rtk_policy.settings.targets import Target
from rtk_policy.util import record


@record.frozen
class Finding:
    """One line of doctor's report: ok or a problem, what it is, and how to fix a problem."""

    ok: bool
    text: str
    fix: str = ""


#: What each agent does when a hook command fails without a guard (agents-real.md, the CLIs' code).
UNGUARDED_FAILURE = {
    "claude": "exit 2 (a removed package) blocks every Bash call",
    "codex": "exit 2 with an error on stderr (a removed package) blocks every call",
    "gemini": "an exit code other than 0 or 1 with stderr text blocks every call",
    "copilot": "any non-zero exit denies every call",
    "cursor": "an invalid answer blocks",
}


def describe(command: str) -> str:
    """What kind of hook `command` is (either form `init` writes, old installs included)."""
    form = command_form(command)
    if form == THIN_CLIENT:
        return "the thin client of the resident engine"
    if form == IN_PROCESS:
        return "in-process; running init again switches it to the faster thin client"
    return "a custom command"


def check_output(stdout: str) -> str:
    """'' when `stdout` is a valid hook answer (nothing, or one JSON object line), else why not."""
    text = stdout.strip()
    if not text:
        return ""
    if "\n" in text:
        return "more than one line on stdout"
    try:
        return "" if isinstance(json.loads(text), dict) else "stdout is JSON but not an object"
    except ValueError:
        return f"stdout is not JSON: {text[:80]!r}"


def run_command(command: str, agent: str, cwd: str, env: dict[str, str] | None = None) -> str:
    """Run an installed hook command on a sample payload (in the environment `env`, default this
    one's); "" when it answered correctly."""
    payload = json.dumps(sample_payload(agent, "git status", cwd))
    try:
        done = subprocess.run(
            command,
            shell=True,
            input=payload,
            capture_output=True,
            text=True,
            timeout=30,
            cwd=cwd,
            env=env,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"could not run: {error}"
    if done.returncode != 0:
        first = (done.stderr.strip().splitlines() or [""])[0]
        return f"exit {done.returncode}: {first}"
    if "the hook cannot run" in done.stderr:
        return done.stderr.strip().splitlines()[0]
    return check_output(done.stdout)


def needed_paths(command: str) -> list[tuple[str, str]]:
    """The (test, path) pairs the command needs: its guard's, or for a bare command of a form init
    writes, its interpreter or script and its hook file."""
    paths = guard_paths(command)
    if paths or command_form(command) is None:
        return paths
    words = unguarded(command) or []
    found = [("-x", words[0])] if words and os.path.isabs(words[0]) else []
    if command_form(command) == THIN_CLIENT:
        found.append(("-f", words[3]))
    elif words[1:2] == ["-P"]:  # the in-process hook's script
        found.append(("-f", words[2]))
    return found


def path_findings(command: str) -> list[Finding]:
    """A problem for each interpreter, script or hook file the command needs that is gone."""
    found = []
    for test, path in needed_paths(command):
        there = os.access(path, os.X_OK) if test == "-x" else os.path.isfile(path)
        if not there:
            what = "interpreter or script" if test == "-x" else "hook file"
            found.append(Finding(False, f"the hook's {what} {path} is missing"))
    return found


def package_finding(command: str) -> Finding | None:
    """For a command that runs a Python interpreter: whether rtk_policy imports in it."""
    words = unguarded(command) or []
    if command_form(command) is None or len(words) < 2 or words[1] not in ("-S", "-m", "-P"):
        return None
    if not os.access(words[0], os.X_OK):
        return None  # reported by path_findings
    probe = [words[0], "-I", "-c", "import rtk_policy.hook.service"]
    try:
        done = subprocess.run(probe, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as error:
        return Finding(False, f"cannot start {words[0]}: {error}")
    if done.returncode == 0:
        return None
    last = (done.stderr.strip().splitlines() or ["?"])[-1]
    return Finding(False, f"the rtk_policy package does not import in {words[0]} ({last})")


def trust_finding(spec: Target, data: dict[str, Any], handler: dict[str, Any]) -> Finding:
    """Whether Codex trusts the hook `handler` of `data` (it runs a user hook only once reviewed
    in `/hooks`)."""
    found = codex_trust.statuses(Path(spec.path), data, spec.event).values()
    status = next((status for status, one in found if one is handler), "")
    if status == codex_trust.TRUSTED:
        return Finding(True, "Codex trusts this hook")
    if status == codex_trust.DISABLED:
        return Finding(False, "this hook is disabled in Codex", "enable it in Codex's `/hooks`")
    why = "it changed since you trusted it" if status == codex_trust.MODIFIED else "not reviewed"
    return Finding(
        False,
        f"Codex does not run this hook until you trust it ({why})",
        "start `codex`, open `/hooks`, review the rtk-policy hook and trust it",
    )


def handler_findings(
    agent: str,
    spec: Target,
    data: dict[str, Any],
    handler: dict[str, Any],
    cwd: str,
    fix: str,
    env: dict[str, str] | None = None,
) -> list[Finding]:
    """Every finding about one handler of ours in `spec.path` (parsed as `data`); its command is
    run in the environment `env` (doctor's `Sandbox`; None: not run, e.g. when its audit
    records would reach the user's log)."""
    command = handler[spec.command_key]
    found = [Finding(True, f"{agent} hook installed in {spec.path} ({describe(command)})")]
    found += path_findings(command)
    package = package_finding(command)
    found += [package] if package is not None else []
    mode = fallback_mode(command)
    if mode is not None:
        found.append(Finding(True, f"if the install breaks, the hook answers per fail mode {mode}"))
    elif command_form(command) is not None:
        failure = UNGUARDED_FAILURE[agent]
        found.append(Finding(False, f"the hook command has no guard: {failure}", fix))
    if env is not None:
        problem = run_command(command, agent, cwd, env)
        shown = f" ({problem})" if problem else ""
        found.append(Finding(not problem, f"hook command runs and answers{shown}", fix))
    if spec.timeout is not None and spec.timeout[0] not in handler:
        found.append(Finding(False, f"the hook entry has no {spec.timeout[0]!r}", fix))
    if agent == "codex":
        found.append(trust_finding(spec, data, handler))
    return found
