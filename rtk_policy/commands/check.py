"""`rtk-policy check [PATHS] [--json]`: load, type-check and compile policies, then run their
examples."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import IO, Any

_BACKENDS = {"both": ("cel-expr", "cel-python")}


def run(
    *,
    paths: Sequence[str] = (),
    backend: str | None = None,
    config: str | None = None,
    as_json: bool = False,
    stdin: IO[str] | None = None,
    stdout: IO[str],
    stderr: IO[str],
) -> int:
    """Entry point of `rtk-policy check` (`backend` "both": each in turn; the results `as_json`
    when asked); exit 1 when a policy has a problem or an example fails."""
    results = [
        check_once(list(paths) or None, name, config, stderr)
        for name in _BACKENDS.get(backend or "", (backend,))
    ]
    ok = all(result["ok"] for result in results)
    if as_json:
        stdout.write(json.dumps({"ok": ok, "backends": results}, indent=2) + "\n")
    else:
        for result in results:
            if "rules" in result:
                stdout.write(summary_line(result))
    return 0 if ok else 1


def summary_line(result: dict[str, Any]) -> str:
    """The one line `check` prints for one backend's result."""
    examples = result["examples"]
    return (
        f"{result['files']} policy file(s), {result['rules']} rule(s) compiled on "
        f"{result['backend']}; examples: {examples['passed']} passed, {examples['failed']} "
        f"failed, {examples['errors']} errors\n"
    )


def check_once(
    paths: list[str] | None, backend: str | None, config: str | None, stderr: IO[str]
) -> dict[str, Any]:
    """Check the policies on one backend; print problems and failed examples on `stderr`; the
    result as plain data (`ok`, and `problems`, or the counts of files, rules and examples)."""
    from rtk_policy.engine.pipeline import load_engine
    from rtk_policy.policy import PolicyLoadError
    from rtk_policy.policytest.examples import run_examples, summarize

    try:
        # compiled afresh (never read from the cache); the search path's set is stored there, so
        # the hook's first call after a check reads it instead of compiling (issue 17)
        engine = load_engine(paths, backend, config, use_cache=False, store=not paths, strict=True)
    except PolicyLoadError as error:
        stderr.write(error.render() + "\n")
        stderr.write(f"{len(error.problems)} problem(s) found\n")
        problems = [problem.render() for problem in error.problems]
        return {"ok": False, "backend": backend, "problems": problems}
    except Exception as error:  # noqa: BLE001 - any load failure is a failed check
        stderr.write(f"rtk-policy: {error}\n")
        return {"ok": False, "backend": backend, "problems": [str(error)]}
    engine.budget_s = None  # an example answers the same on any machine load (engine/budget.py)
    results = run_examples(engine)
    failures = []
    for result in results:
        if result.status != "pass":
            failure = (f"{result.location}: example of {result.rule.id} {result.status}: "
                       f"{result.example.command!r}: {result.detail}")  # fmt: skip
            stderr.write(failure + "\n")
            failures.append(failure)
    passed, failed, errored = summarize(results)
    policies = engine.policies
    return {
        "ok": failed == 0 and errored == 0,
        "backend": policies.backend,
        "files": len(policies.files),
        "rules": len(policies.rules),
        "examples": {"passed": passed, "failed": failed, "errors": errored},
        "failures": failures,
    }
