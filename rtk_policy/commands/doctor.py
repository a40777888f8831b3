"""`rtk-policy doctor`: is the hook installed, does its command run, do the policies compile, does a
sample payload round-trip? Prints what to fix; exit 1 when something is wrong."""

from __future__ import annotations

import io
import json
import os
import subprocess
from typing import IO, Any

from rtk_policy.agents import AGENTS
from rtk_policy.settings.install import IN_PROCESS, THIN_CLIENT, command_form, our_commands
from rtk_policy.settings.jsonfile import SettingsError, read_json
from rtk_policy.settings.targets import Target, target


def sample_payload(agent: str, cwd: str) -> dict[str, Any]:
    """A harmless shell-tool payload in `agent`'s own shape."""
    command = "git status"
    if agent == "copilot":
        return {
            "sessionId": "doctor",
            "cwd": cwd,
            "toolName": "bash",
            "toolArgs": json.dumps({"command": command}),
        }
    if agent == "gemini":
        return {
            "session_id": "doctor",
            "cwd": cwd,
            "hook_event_name": "BeforeTool",
            "tool_name": "run_shell_command",
            "tool_input": {"command": command},
        }
    if agent == "cursor":
        return {
            "conversation_id": "doctor",
            "hook_event_name": "beforeShellExecution",
            "command": command,
            "cwd": cwd,
        }
    return {
        "session_id": "doctor",
        "transcript_path": "",
        "cwd": cwd,
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_use_id": "toolu_doctor",
        "tool_input": {"command": command, "description": "rtk-policy doctor"},
    }


def installed_commands(spec: Target) -> list[str]:
    """The commands of our handlers in `spec.path` (raises `SettingsError` for a broken file)."""
    return our_commands(read_json(spec.path).data, spec)


def describe(command: str) -> str:
    """What kind of hook `command` is (either form `init` writes, old installs included)."""
    form = command_form(command)
    if form == THIN_CLIENT:
        return "the thin client of the resident engine"
    if form == IN_PROCESS:
        return "in-process; running init again switches it to the faster thin client"
    return "a custom command"


def check_output(stdout: str) -> str:
    """ "" when `stdout` is a valid hook answer (nothing, or one JSON object line), else the problem."""
    text = stdout.strip()
    if not text:
        return ""
    if "\n" in text:
        return "more than one line on stdout"
    try:
        return "" if isinstance(json.loads(text), dict) else "stdout is JSON but not an object"
    except ValueError:
        return f"stdout is not JSON: {text[:80]!r}"


def run_command(command: str, agent: str, cwd: str) -> str:
    """Run an installed hook command on a sample payload; "" when it answered correctly."""
    payload = json.dumps(sample_payload(agent, cwd))
    try:
        done = subprocess.run(
            command, shell=True, input=payload, capture_output=True, text=True, timeout=30, cwd=cwd
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"could not run: {error}"
    if done.returncode != 0:
        first = (done.stderr.strip().splitlines() or [""])[0]
        return f"exit {done.returncode}: {first}"
    return check_output(done.stdout)


def round_trip(cwd: str) -> str:
    """Answer a sample Claude payload in-process; "" when the answer is valid and no error occurred."""
    from rtk_policy.hook.service import HookOptions, answer_stream

    out, err = io.StringIO(), io.StringIO()
    payload = io.StringIO(json.dumps(sample_payload("claude", cwd)))
    answer_stream(HookOptions(agent="claude"), payload, out, err)
    problem = check_output(out.getvalue())
    if not problem and "error" in err.getvalue():
        problem = err.getvalue().strip().splitlines()[0]
    return problem


def rewrite_notes(cwd: str) -> list[str]:
    """What rewriting does here: RTK's presence and version, and the `rewrite*` settings."""
    from rtk_policy.config.load import load_config
    from rtk_policy.engine.rtk_probe import rtk_status

    try:
        config = load_config(cwd=cwd)
    except Exception as error:  # noqa: BLE001 - reported by the policy check below
        return [f"rewrites: the config does not load ({error})"]
    if config.rewrite == "never":
        return ['rewrites are off (rewrite = "never"): decisions only, commands run as typed']
    status = rtk_status()
    if status.usable:
        notes = [
            f"RTK found: {status.why}; read-only and allowed commands are rewritten to `rtk …`"
            " (fewer tokens of output)"
        ]
    elif config.rewrite == "always":
        notes = [f'rewrite = "always" but {status.why}: rewritten commands will fail to run']
    else:
        notes = [
            f"RTK not usable ({status.why}): commands are not rewritten, decisions are unchanged."
            " RTK is optional; install it to save tokens (see the README: Rewriting needs RTK)"
        ]
    if config.rewrite_unapproved:
        notes.append(
            "rewrite_unapproved = true: commands no rule approved are rewritten too; a deny rule"
            " given on Claude Code's command line may be bypassed"
        )
    return notes


def run(args: Any, stdin: IO[str], stdout: IO[str], stderr: IO[str]) -> int:
    """Run every check and print one line per finding."""
    cwd = os.getcwd()
    problems = 0

    def report(ok: bool, text: str, fix: str = "") -> None:
        nonlocal problems
        problems += not ok
        stdout.write(
            ("ok      " if ok else "PROBLEM ")
            + text
            + (f"\n        fix: {fix}" if fix and not ok else "")
            + "\n"
        )

    found_any = False
    for agent in AGENTS:
        for global_ in (True, False):
            spec = target(agent, global_, cwd)
            try:
                commands = installed_commands(spec)
            except SettingsError as error:
                report(False, str(error), f"repair {spec.path} (it must be a JSON object)")
                continue
            for command in commands:
                found_any = True
                report(True, f"{agent} hook installed in {spec.path} ({describe(command)})")
                problem = run_command(command, agent, cwd)
                report(
                    not problem,
                    f"hook command runs: {command}" + (f" ({problem})" if problem else ""),
                    f"reinstall with `rtk-policy init --agent {agent}{' --global' if global_ else ''}`",
                )
    report(
        found_any, "an rtk-policy hook is installed", "run `rtk-policy init --global` (Claude Code)"
    )
    try:
        from rtk_policy.engine.pipeline import load_engine

        load_engine(cwd=cwd)
        report(True, "policies load and compile")
    except Exception as error:  # noqa: BLE001 - any load failure is a finding
        report(False, f"policies do not load: {error}", "run `rtk-policy check` to see every error")
    for note in rewrite_notes(cwd):
        stdout.write(f"note    {note}\n")
    problem = round_trip(cwd)
    report(
        not problem,
        "a sample payload round-trips" + (f" ({problem})" if problem else ""),
        "see the message above; the hook falls back to its fail mode meanwhile",
    )
    return 1 if problems else 0
