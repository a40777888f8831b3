"""`rtk-policy rewrite CMD` and `rtk-policy rewrite --batch FILE` (DESIGN §2).

Exit codes: 0 rewritten and allowed; 1 nothing to rewrite (or unattestable); 2 denied; 3 rewritten or
asked, the host must still approve.
"""

from __future__ import annotations

import json
import os
import shlex
import time
from typing import IO

from rtk_policy.decision import VERDICT_ALLOW, VERDICT_ASK, VERDICT_DENY, VERDICT_NONE, Decision

EXIT_ALLOW, EXIT_DEFER, EXIT_DENY, EXIT_ASK = 0, 1, 2, 3
_FAIL_EXIT = {"open": EXIT_DEFER, "closed": EXIT_ASK, "deny": EXIT_DENY}


def exit_code(decision: Decision, openclaw: bool = False) -> tuple[int, str]:
    """The exit code and stdout text of `rewrite` for a decision.

    `openclaw` is RTK's `RTK_REWRITE_HOST=openclaw` delegate mode: a rewrite that no rule asked for
    exits 0, because that host gates the rewritten command itself (reference §2.3).
    """
    if decision.verdict == VERDICT_DENY:
        return EXIT_DENY, ""
    if decision.gate == "unattestable":
        return EXIT_DEFER, ""
    shown = decision.rewritten
    if shown is None and decision.gate == "identity":
        shown = decision.rewrite
    if shown is not None:
        if decision.verdict == VERDICT_ALLOW or (openclaw and decision.verdict == VERDICT_NONE):
            return EXIT_ALLOW, shown
        return EXIT_ASK, shown
    if decision.verdict == VERDICT_ASK:
        return EXIT_ASK, decision.command
    return EXIT_DEFER, ""


def join_words(words: list[str]) -> str:
    """One command from the CLI words: a single word as typed, several joined with shell quoting."""
    if len(words) == 1:
        return words[0]
    return " ".join(shlex.quote(word) for word in words)


def request_context(engine: object, cwd: str, agent: str = "", **fields: object) -> object:
    """The engine context for a request made from `cwd`, with the user's Claude Code rules."""
    from rtk_policy.settings.claude_rules import load_claude_rules

    deny, ask, allow = load_claude_rules(cwd)
    return engine.context(  # type: ignore[attr-defined]
        agent=agent, cwd=cwd, claude_deny=deny, claude_ask=ask, claude_allow=allow, **fields
    )


def run(args: object, stdin: IO[str], stdout: IO[str], stderr: IO[str]) -> int:
    """Entry point of `rtk-policy rewrite`."""
    from rtk_policy.engine import load_engine

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
            return EXIT_DEFER
        if jobs != 1:
            from rtk_policy.commands.batch import LoadSpec, run_parallel_batch

            spec = LoadSpec(args.policies, args.backend, args.config, args.agent, os.getcwd())  # type: ignore[attr-defined]
            return run_parallel_batch(spec, jobs, args.batch, stdin, stdout, stderr)  # type: ignore[attr-defined]
        return run_batch(engine, args.batch, args.agent, stdin, stdout, stderr)  # type: ignore[attr-defined]
    words = list(args.cmd)  # type: ignore[attr-defined]
    if words[:1] == ["--"]:  # `rewrite -- CMD`: the end of rewrite's own options
        words = words[1:]
    if not words:
        stderr.write("rtk-policy rewrite: give a command or --batch FILE\n")
        return EXIT_DEFER
    return _rewrite_one(engine, join_words(words), args.agent, stdout, stderr, started)  # type: ignore[attr-defined]


def _rewrite_one(
    engine: object, command: str, agent: str, stdout: IO[str], stderr: IO[str], started: int
) -> int:
    cwd = os.getcwd()
    try:
        context = request_context(engine, cwd, agent=agent)
        outcome = engine.evaluate(command, context)  # type: ignore[attr-defined]
    except Exception as error:  # noqa: BLE001 - internal error: the fail mode decides
        stderr.write(f"rtk-policy: internal error: {_first_line(error)}\n")
        return _FAIL_EXIT.get(engine.config.fail_mode, EXIT_DEFER)  # type: ignore[attr-defined]
    decision = outcome.decision
    code, text = exit_code(decision, os.environ.get("RTK_REWRITE_HOST") == "openclaw")
    if code == EXIT_DENY and decision.reasons:
        stderr.write(f"rtk-policy: denied: {decision.reasons[0]}\n")
    for warning in decision.warnings:
        stderr.write(f"rtk-policy: warning: {warning}\n")
    stdout.write(text)
    _audit(engine, outcome, command, cwd, agent or "cli", started)
    return code


def _audit(engine: object, outcome: object, command: str, cwd: str, agent: str, started: int) -> None:
    from rtk_policy import audit

    total_us = (time.perf_counter_ns() - started) // 1000
    request = {"command": command, "cwd": cwd, "session_id": "", "tool_use_id": ""}
    audit.record(engine.config, agent=agent, request=request, outcome=outcome, total_us=total_us)  # type: ignore[attr-defined]


def _first_line(error: Exception) -> str:
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0]


def batch_answer(decision: Decision) -> dict[str, object]:
    """The JSON object `--batch` prints for one decided line."""
    code, text = exit_code(decision)
    return {
        "exit": code,
        "stdout": text,
        "verdict": decision.verdict,
        "rewrite": decision.rewrite,
        "rules": list(decision.rule_ids),
    }


def dumps(obj: object) -> str:
    """Compact JSON for one output line."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
