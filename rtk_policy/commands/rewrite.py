"""`rtk-policy rewrite CMD` and `rtk-policy rewrite --batch FILE` (DESIGN §2).

Exit codes: 0 rewritten and allowed; 1 nothing to rewrite (or unattestable); 2 denied; 3 rewritten or
asked, the host must still approve.
"""

from __future__ import annotations

import os
import time
from typing import IO

from rtk_policy.commands import EX_USAGE
from rtk_policy.engine.answers import (
    EXIT_DEFER,
    EXIT_DENY,
    FAIL_EXIT,
    batch_answer,
    dumps,
    exit_code,
    command_words,
    join_words,
    request_context,
)


def run(args: object, stdin: IO[str], stdout: IO[str], stderr: IO[str]) -> int:
    """Entry point of `rtk-policy rewrite`."""
    from rtk_policy.engine.pipeline import load_engine

    started = time.perf_counter_ns()
    try:
        engine = load_engine(args.policies, args.backend, args.config)  # type: ignore[attr-defined]
    except Exception as error:  # noqa: BLE001 - reported, then the fail mode applies
        stderr.write(f"rtk-policy: cannot load policies: {_first_line(error)}\n")
        return EXIT_DEFER
    if args.batch:  # type: ignore[attr-defined]
        from rtk_policy.commands.batch import run_batch

        jobs = getattr(args, "jobs", 1)
        if jobs < 0:
            stderr.write("rtk-policy rewrite: --jobs must be 0 (every core) or more\n")
            return EX_USAGE
        if jobs != 1:
            from rtk_policy.commands.batch import LoadSpec, run_parallel_batch

            spec = LoadSpec(args.policies, args.backend, args.config, args.agent, os.getcwd())  # type: ignore[attr-defined]
            return run_parallel_batch(spec, jobs, args.batch, stdin, stdout, stderr)  # type: ignore[attr-defined]
        return run_batch(engine, args.batch, args.agent, stdin, stdout, stderr)  # type: ignore[attr-defined]
    words = command_words(args.cmd)  # type: ignore[attr-defined]
    if not words:
        stderr.write("rtk-policy rewrite: give a command or --batch FILE\n")
        return EX_USAGE
    as_json = getattr(args, "json", False)
    return _rewrite_one(engine, join_words(words), args.agent, stdout, stderr, started, as_json)  # type: ignore[attr-defined]


def _rewrite_one(
    engine: object,
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
        outcome = engine.evaluate(command, context)  # type: ignore[attr-defined]
    except Exception as error:  # noqa: BLE001 - internal error: the fail mode decides
        from rtk_policy.config.load import effective_fail_mode

        stderr.write(f"rtk-policy: internal error: {_first_line(error)}\n")
        return FAIL_EXIT.get(effective_fail_mode(engine.config), EXIT_DEFER)  # type: ignore[attr-defined]
    decision = outcome.decision
    code, text = exit_code(decision, os.environ.get("RTK_REWRITE_HOST") == "openclaw")
    if code == EXIT_DENY and decision.reasons:
        stderr.write(f"rtk-policy: denied: {decision.reasons[0]}\n")
    for warning in decision.warnings:
        stderr.write(f"rtk-policy: warning: {warning}\n")
    stdout.write(dumps(batch_answer(decision)) + "\n" if as_json else text)
    _audit(engine, outcome, command, cwd, agent or "cli", started)
    return code


def _audit(engine: object, outcome: object, command: str, cwd: str, agent: str, started: int) -> None:
    from rtk_policy.audit import log as audit

    total_us = (time.perf_counter_ns() - started) // 1000
    request = {"command": command, "cwd": cwd, "session_id": "", "tool_use_id": ""}
    audit.record(engine.config, agent=agent, request=request, outcome=outcome, total_us=total_us)  # type: ignore[attr-defined]


def _first_line(error: Exception) -> str:
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0]
