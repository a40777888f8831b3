"""`rtk-policy doctor`: is the hook installed, can its command run (interpreter, hook file and
package there, a guard, a timeout, trusted by Codex), does it answer, do the policies compile, does
a sample payload round-trip? Prints one line per finding and what to fix; exit 1 on a problem."""

from __future__ import annotations

import io
import json
import os
from typing import IO, Any

from rtk_policy.agents import AGENTS
from rtk_policy.agents.samples import sample_payload
from rtk_policy.settings.health import Finding, check_output, handler_findings
from rtk_policy.settings.install import our_handlers
from rtk_policy.settings.jsonfile import SettingsError, read_json
from rtk_policy.settings.targets import target, with_file_tools


def installed_findings(cwd: str) -> list[Finding]:
    """The findings about every hook entry of ours, user-wide and for the project in `cwd`."""
    found: list[Finding] = []
    any_installed = False
    for agent in AGENTS:
        for global_ in (True, False):
            spec = target(agent, global_, cwd)
            try:
                data = read_json(spec.path).data
            except SettingsError as error:
                found.append(Finding(False, str(error), f"repair {spec.path} (a JSON object)"))
                continue
            again = f"rtk-policy init --agent {agent}{' --global' if global_ else ''}"
            fix = f"run `{again}` again"
            handlers = our_handlers(data, spec)
            for handler in handlers:
                any_installed = True
                found += handler_findings(agent, spec, data, handler, cwd, fix)
            for files in with_file_tools(spec)[1:] if handlers else ():
                found.append(Finding(
                    bool(our_handlers(data, files)),
                    f"{agent}'s file-writing tools ({files.matcher}) are hooked in {spec.path}",
                    f"run `{again}` again (it adds the entry; writes to the guard's files through"
                    " these tools are not seen until then)",
                ))  # fmt: skip
    fix = "run `rtk-policy init --global` (Claude Code; --agent NAME for the others)"
    found.append(Finding(any_installed, "an rtk-policy hook is installed", fix))
    return found


def round_trip(cwd: str) -> str:
    """Answer a sample Claude payload in-process; "" when the answer is valid and error-free."""
    from rtk_policy.hook.service import HookOptions, answer_stream

    out, err = io.StringIO(), io.StringIO()
    payload = io.StringIO(json.dumps(sample_payload("claude", "git status", cwd)))
    answer_stream(HookOptions(agent="claude"), payload, out, err)
    problem = check_output(out.getvalue())
    if not problem and "error" in err.getvalue():
        problem = err.getvalue().strip().splitlines()[0]
    return problem


def engine_findings(cwd: str) -> list[Finding]:
    """Whether this install's policies load and a sample payload round-trips."""
    try:
        from rtk_policy.engine.pipeline import load_engine

        engine = load_engine(cwd=cwd, strict=True)
        loaded = Finding(True, "policies load and compile")
        # told, not a failure: a layer that only tightens meanwhile
        notes = [Finding(True, f"note: {notice}") for notice in engine.notices]
    except Exception as error:  # noqa: BLE001 - any load failure is a finding
        loaded = Finding(False, f"policies do not load: {error}", "run `rtk-policy check`")
        notes = []
    problem = round_trip(cwd)
    trip = Finding(
        not problem,
        "a sample payload round-trips" + (f" ({problem})" if problem else ""),
        "see the message above; the hook falls back to its fail mode meanwhile",
    )
    return [loaded, *notes, trip]


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
            f"RTK found: {status.why}; commands are rewritten to `rtk …` (fewer tokens of"
            " output; for Claude Code only those your rules or its read-only set allow)"
        ]
    elif config.rewrite == "always":
        notes = [f'rewrite = "always" but {status.why}: rewritten commands will fail to run']
    else:
        notes = [
            f"RTK not usable ({status.why}): commands are not rewritten, decisions are unchanged."
            " RTK is optional; install it to save tokens (see the README's first section)"
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
    findings = installed_findings(cwd) + engine_findings(cwd)
    findings += [Finding(True, f"note: {note}") for note in rewrite_notes(cwd)]
    for finding in findings:
        stdout.write(("ok      " if finding.ok else "PROBLEM ") + finding.text + "\n")
        if finding.fix and not finding.ok:
            stdout.write(f"        fix: {finding.fix}\n")
    return 0 if all(finding.ok for finding in findings) else 1
