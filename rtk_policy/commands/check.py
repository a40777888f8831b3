"""`rtk-policy check [PATHS]`: load, type-check and compile policies, then run their examples."""

from __future__ import annotations

from typing import IO

_BACKENDS = {"both": ("cel-expr", "cel-python")}


def run(args: object, stdin: IO[str], stdout: IO[str], stderr: IO[str]) -> int:
    """Entry point of `rtk-policy check`; exit 1 when a policy has a problem or an example fails."""
    backend = args.backend  # type: ignore[attr-defined]
    backends = _BACKENDS.get(backend or "", (backend,))
    failed = False
    for name in backends:
        failed |= not check_once(args.paths or None, name, args.config, stdout, stderr)  # type: ignore[attr-defined]
    return 1 if failed else 0


def check_once(
    paths: list[str] | None, backend: str | None, config: str | None, stdout: IO[str], stderr: IO[str]
) -> bool:
    """Check the policies on one backend; print problems and failed examples; True when all is well."""
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
        return False
    except Exception as error:  # noqa: BLE001 - any load failure is a failed check
        stderr.write(f"rtk-policy: {error}\n")
        return False
    results = run_examples(engine)
    for result in results:
        if result.status != "pass":
            stderr.write(f"{result.location}: example of {result.rule.id} {result.status}: "
                         f"{result.example.command!r}: {result.detail}\n")
    passed, failed, errored = summarize(results)
    policies = engine.policies
    stdout.write(
        f"{len(policies.files)} policy file(s), {len(policies.rules)} rule(s) compiled on "
        f"{policies.backend}; examples: {passed} passed, {failed} failed, {errored} errors\n"
    )
    return failed == 0 and errored == 0
