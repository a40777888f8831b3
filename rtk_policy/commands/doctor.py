"""`rtk-policy doctor [--fix] [--json] [--quiet]`: is the hook installed, can its command run
(interpreter, hook file and package there, a guard, a timeout, trusted by Codex), does it
answer, is it installed twice, can the resident engine start, do the policies compile, is the
compiled cache fresh, does a sample payload round-trip, does a machine-wide install's audit
writer answer (as another user, its key out of this user's reach)? One line per finding and
what to fix; exit 1 on a problem.

Doctor changes nothing: its probes run in a `settings.sandbox.Sandbox` (a private runtime
folder whose engines are stopped before it ends, a private state folder for their audit
records), the in-process round trip keeps its audit record from the log, and the policies are
loaded without writing the cache. `--fix` repairs what it can (a stale cache, an entry whose
interpreter or hook file is gone) and says what it repaired.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import IO, Any

from rtk_policy.agents import AGENTS
from rtk_policy.agents.samples import sample_payload
from rtk_policy.settings.health import Finding, check_output, handler_findings, path_findings
from rtk_policy.settings.install import command_form, our_commands, our_handlers
from rtk_policy.settings.jsonfile import SettingsError, read_json
from rtk_policy.settings.targets import Target, installed_targets, target, with_file_tools
from rtk_policy.util import record


def installed_findings(cwd: str, env: dict[str, str] | None, fix: bool = False) -> list[Finding]:
    """The findings about every hook entry of ours, user-wide and for the project in `cwd`, their
    commands run in `env` (None: not run); with `fix`, an entry whose files are gone is
    installed again."""
    found: list[Finding] = []
    any_installed = False
    for agent in AGENTS:
        places: list[tuple[Target, list[str]]] = []
        for global_ in (True, False):
            for spec in installed_targets(agent, global_, cwd):
                if not global_:  # from a sub-folder: the project's, at its root
                    spec = project_target(spec, cwd)
                commands, findings = file_findings(agent, global_, spec, cwd, env, fix)
                found += findings
                places += [(spec, commands)] if commands else []
        any_installed = any_installed or bool(places)
        found += twice_findings(agent, places)
    fix_text = "run `rtk-policy init --global` (Claude Code; --agent NAME for the others)"
    found.append(Finding(any_installed, "an rtk-policy hook is installed", fix_text))
    return found


def project_target(spec: Target, cwd: str) -> Target:
    """`spec` (a project's file in `cwd`) moved to the folder the agent reads it in: the git
    project's root, when `cwd` is a sub-folder without the agent's folder."""
    from rtk_policy.settings.project import project_folder

    relative = spec.path.relative_to(cwd)
    folder = project_folder(cwd, relative.parts[0])
    return spec if folder == cwd else record.evolve(spec, path=Path(folder) / relative)


def file_findings(
    agent: str, global_: bool, spec: Target, cwd: str, env: dict[str, str] | None, fix: bool
) -> tuple[list[str], list[Finding]]:
    """(our shell commands in `spec.path`, the findings about them and its file-tool entries)."""
    try:
        data = read_json(spec.path).data
    except SettingsError as error:
        return [], [Finding(False, str(error), f"repair {spec.path} (a JSON object)")]
    again = f"rtk-policy init --agent {agent}{' --global' if global_ else ''}"
    handlers = our_handlers(data, spec)
    older = not global_ and spec.path.name != target(agent, global_, cwd).path.name
    if older and handlers:
        committed = Finding(
            False,
            f"{agent}'s hook is in {spec.path}, the file teams commit (it holds this machine's"
            " paths)",
            f"run `rtk-policy init --agent {agent}` in {spec.path.parent.parent}: it moves the"
            " entry to the per-user settings.local.json",
        )
        return our_commands(data, spec), [committed]
    gone = [h[spec.command_key] for h in handlers if broken(h[spec.command_key])]
    if fix and gone:
        repaired = reinstall(agent, spec, gone[0])
        data, handlers = repaired[0], our_handlers(repaired[0], spec)
        found = [repaired[1]]
    else:
        found = []
    for handler in handlers:
        found += handler_findings(agent, spec, data, handler, cwd, f"run `{again}` again", env)
    for files in with_file_tools(spec)[1:] if handlers else ():
        found.append(Finding(
            bool(our_handlers(data, files)),
            f"{agent}'s file-writing tools ({files.matcher}) are hooked in {spec.path}",
            f"run `{again}` again (it adds the entry; writes to the guard's files through"
            " these tools are not seen until then)",
        ))  # fmt: skip
    return our_commands(data, spec), found


def broken(command: str) -> bool:
    """Whether `command` is an entry `init` wrote whose interpreter, script or hook file is gone
    (what `--fix` repairs by installing this install's hook in its place)."""
    return command_form(command) is not None and bool(path_findings(command))


def reinstall(agent: str, spec: Target, old: str) -> tuple[dict[str, Any], Finding]:
    """Install this install's hook for `agent` into the file of `spec` again (`init`'s own
    path), in the form and with the fail mode of the broken command `old`; the file's data
    after, and what was repaired."""
    from rtk_policy.commands.init import installed_command
    from rtk_policy.settings.hook_command import fallback_mode
    from rtk_policy.settings.install import IN_PROCESS, install

    command, mode = installed_command(agent, fallback_mode(old), command_form(old) == IN_PROCESS)
    change = install(with_file_tools(spec), command, mode)
    text = f"fixed: the hook's files were gone; {change.message}"
    return read_json(spec.path).data, Finding(True, text)


def twice_findings(agent: str, places: list[tuple[Target, list[str]]]) -> list[Finding]:
    """A problem when `agent` runs our hook from more than one settings file: it judges every
    command twice (Claude Code runs an identical command once: only different ones count)."""
    if len(places) < 2:
        return []
    files = " and ".join(str(spec.path) for spec, _ in places)
    commands = {command for _, found in places for command in found}
    if agent == "claude" and len(commands) == 1:
        return [Finding(True, f"note: the same hook is in {files}; Claude Code runs it once")]
    return [Finding(
        False,
        f"{agent} runs the rtk-policy hook from {files}: every command is judged twice",
        "keep one: `rtk-policy uninstall` (in the project) removes the project's entries,"
        " `rtk-policy uninstall --global` the user-wide one",
    )]  # fmt: skip


def round_trip(cwd: str, engine: Any = None) -> str:
    """Answer a sample Claude payload in-process through the hook's own path, with `engine`
    (default: this folder's, loaded without writing the cache) and its audit record kept from
    the log; "" when the answer is valid and error-free."""
    from rtk_policy.audit import log as audit
    from rtk_policy.engine.pipeline import load_engine
    from rtk_policy.hook.service import HookOptions, answer_stream

    if engine is None:
        try:
            engine = load_engine(cwd=cwd, store=False)
        except Exception as error:  # noqa: BLE001 - reported as the round trip's problem
            return f"the engine does not load: {error}"
    out, err = io.StringIO(), io.StringIO()
    payload = io.StringIO(json.dumps(sample_payload("claude", "git status", cwd)))
    audit.defer([])  # the record is collected in a list nobody writes out
    try:
        answer_stream(HookOptions(agent="claude"), payload, out, err, engine=engine)
    finally:
        audit.defer(None)
    problem = check_output(out.getvalue())
    if not problem and "error" in err.getvalue():
        problem = err.getvalue().strip().splitlines()[0]
    return problem


def engine_findings(cwd: str, fix: bool = False) -> list[Finding]:
    """Whether this install's policies load, the compiled cache holds them (with `fix`: compiled
    into it), and a sample payload round-trips."""
    from rtk_policy.engine.pipeline import load_engine

    engine = None
    try:
        engine = load_engine(cwd=cwd, strict=True, store=False)
        found = [Finding(True, "policies load and compile"), cache_finding(engine.policies)]
        if fix and not found[1].ok:
            engine = load_engine(cwd=cwd, strict=True)  # compiled again, into the cache
            found[1] = Finding(True, "fixed: the stale compiled cache was rebuilt")
        # told, not a failure: a layer that only tightens meanwhile
        found += [Finding(True, f"note: {notice}") for notice in engine.notices]
    except Exception as error:  # noqa: BLE001 - any load failure is a finding
        found = [Finding(False, f"policies do not load: {error}", "run `rtk-policy check`")]
    problem = round_trip(cwd, engine)
    found.append(Finding(
        not problem,
        "a sample payload round-trips" + (f" ({problem})" if problem else ""),
        "see the message above; the hook falls back to its fail mode meanwhile",
    ))  # fmt: skip
    return found


def cache_finding(policies: Any) -> Finding:
    """Whether the compiled cache holds the current policies (a hook reads them, not compiles)."""
    from rtk_policy.policy.load import is_cached

    if is_cached(policies):
        return Finding(True, "the compiled cache is fresh for the current policies")
    return Finding(
        False,
        "the compiled cache does not hold the current policies: the hook's next call compiles"
        " them (seconds)",
        "run `rtk-policy doctor --fix` (or `rtk-policy init` again)",
    )


def probe_problem(cwd: str) -> str:
    """Why the installed hook commands are not run ("" when they can be): probes would send
    audit records to a log the user configured by path, or to syslog."""
    from rtk_policy.config.load import load_config

    config = load_config(cwd=cwd)
    if not getattr(config, "audit_enabled", True):
        return ""
    if config.audit_path:
        return f"the audit log is configured at {config.audit_path}"
    if config.audit_syslog:
        return "audit records are forwarded to syslog"
    return ""


def server_finding(sandbox: Any) -> Finding:
    """Whether this install's resident engine starts and listens (in the sandbox)."""
    from rtk_policy.settings.targets import thin_client_unavailable

    if reason := thin_client_unavailable():
        return Finding(True, f"note: no resident engine here ({reason}); hooks decide in-process")
    problem = sandbox.start_server()
    if problem:
        sandbox.refuse_clients()  # the probed clients must not start one of their own
    return Finding(
        not problem,
        "the resident engine starts and listens" + (f" ({problem})" if problem else ""),
        "run `rtk-policy serve --idle 5` to see its error; the hook decides in-process meanwhile",
    )


def findings(cwd: str, fix: bool = False) -> list[Finding]:
    """Every finding: the installed entries, the resident engine, the policies and the cache,
    and a machine-wide install's audit writer; the probes run in a sandbox that is gone when
    this returns."""
    from rtk_policy.settings.sandbox import Sandbox
    from rtk_policy.settings.writer_health import writer_findings

    engine = engine_findings(cwd, fix)
    stale = any(not f.ok and f.text.startswith("the compiled cache") for f in engine)
    with Sandbox(private_cache=stale) as sandbox:
        server = server_finding(sandbox)  # first: the probed thin clients then talk to it
        why_not = probe_problem(cwd)
        installed = installed_findings(cwd, None if why_not else sandbox.env, fix)
    notes = [Finding(True, f"note: the hook commands were not run: {why_not}")] if why_not else []
    notes += [Finding(True, f"note: {note}") for note in rewrite_notes(cwd)]
    return installed + notes + [server] + engine + writer_findings()


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
    status = rtk_status(store=False)  # doctor leaves the cache as it found it
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


def run(
    *,
    fix: bool = False,
    as_json: bool = False,
    stdin: IO[str] | None = None,
    stdout: IO[str],
    stderr: IO[str],
) -> int:
    """Run every check (`fix`: and repair what can be repaired) and print one line per finding
    (`as_json`: one JSON object)."""
    found = findings(os.getcwd(), fix)
    ok = all(finding.ok for finding in found)
    if as_json:
        items = [{"ok": f.ok, "text": f.text, "fix": f.fix} for f in found]
        stdout.write(json.dumps({"ok": ok, "findings": items}, indent=2) + "\n")
        return 0 if ok else 1
    for finding in found:
        stdout.write(("ok      " if finding.ok else "PROBLEM ") + finding.text + "\n")
        if finding.fix and not finding.ok:
            stdout.write(f"        fix: {finding.fix}\n")
    return 0 if ok else 1
