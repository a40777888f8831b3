"""`rtk-policy rewrite CMD` and `rtk-policy rewrite --batch FILE` (DESIGN §2).

Exit codes: 0 rewritten and allowed; 1 nothing to rewrite (or unattestable); 2 denied; 3 rewritten
or asked, the host must still approve.
"""

from __future__ import annotations

import os
import time
from typing import IO, TYPE_CHECKING

from rtk_policy.commands import EX_USAGE
from rtk_policy.engine.answers import (
    EXIT_DEFER,
    EXIT_DENY,
    FAIL_EXIT,
    batch_line,
    command_words,
    exit_code,
    join_words,
    request_context,
)

if TYPE_CHECKING:
    from rtk_policy.engine.pipeline import Engine, Outcome


def run(
    *,
    cmd: list[str],
    batch: str | None = None,
    as_json: bool = False,
    jobs: int = 1,
    agent: str = "",
    policies: list[str] | None = None,
    backend: str | None = None,
    config: str | None = None,
    stdin: IO[str],
    stdout: IO[str],
    stderr: IO[str],
) -> int:
    """Entry point of `rtk-policy rewrite CMD` (the answer `as_json` too) and of `rewrite --batch
    FILE` (JSON lines, '-' for stdin; `jobs` processes, 0 for every core)."""
    from rtk_policy.engine.pipeline import load_engine

    started = time.perf_counter_ns()
    try:
        engine = load_engine(policies, backend, config)
    except Exception as error:  # noqa: BLE001 - reported, then the fail mode applies
        stderr.write(f"rtk-policy: cannot load policies: {_first_line(error)}\n")
        return EXIT_DEFER
    if batch:
        from rtk_policy.commands.batch import run_batch

        if jobs < 0:
            stderr.write("rtk-policy rewrite: --jobs must be 0 (every core) or more\n")
            return EX_USAGE
        if jobs != 1:
            from rtk_policy.commands.batch import LoadSpec, run_parallel_batch

            spec = LoadSpec(policies, backend, config, agent, os.getcwd())
            return run_parallel_batch(spec, jobs, batch, stdin, stdout, stderr)
        return run_batch(engine, batch, agent, stdin, stdout, stderr)
    words = command_words(cmd)
    if not words:
        stderr.write("rtk-policy rewrite: give a command or --batch FILE\n")
        return EX_USAGE
    return _rewrite_one(engine, join_words(words), agent, stdout, stderr, started, as_json)


def _rewrite_one(
    engine: Engine,
    command: str,
    agent: str,
    stdout: IO[str],
    stderr: IO[str],
    started: int,
    as_json: bool = False,
) -> int:
    """Decide one command; stdout is the rewritten text (`as_json`: the `--batch` answer object,
    which names the verdict: exit 1 is both "allowed, not rewritten" and "no opinion")."""
    cwd = os.getcwd()
    try:
        context = request_context(engine, cwd, agent=agent)
        outcome = engine.evaluate(command, context)
    except Exception as error:  # noqa: BLE001 - internal error: the fail mode decides
        from rtk_policy.config.load import effective_fail_mode

        stderr.write(f"rtk-policy: internal error: {_first_line(error)}\n")
        return FAIL_EXIT.get(effective_fail_mode(engine.config), EXIT_DEFER)
    decision = outcome.decision
    code, text = exit_code(decision, os.environ.get("RTK_REWRITE_HOST") == "openclaw")
    if code == EXIT_DENY and decision.reasons:
        stderr.write(f"rtk-policy: denied: {decision.reasons[0]}\n")
    for warning in decision.warnings:
        stderr.write(f"rtk-policy: warning: {warning}\n")
    stdout.write(batch_line(decision) + "\n" if as_json else text)
    _audit(engine, outcome, command, cwd, agent or "cli", started)
    return code


def _audit(
    engine: Engine, outcome: Outcome, command: str, cwd: str, agent: str, started: int
) -> None:
    from rtk_policy.audit import log as audit

    total_us = (time.perf_counter_ns() - started) // 1000
    request = {"command": command, "cwd": cwd, "session_id": "", "tool_use_id": ""}
    audit.record(engine.config, agent=agent, request=request, outcome=outcome, total_us=total_us)


def _first_line(error: Exception) -> str:
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0]
