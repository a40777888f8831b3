"""`rtk-policy test [PATHS]`: run the policy test files (`*_test.yaml`) and every rule's inline
examples.

PATHS are files or folders: a folder contributes its policy files (`*.yaml`, `*.yml`) and its test
files (`*_test.yaml`); with no policy file among PATHS the policies come from the search path. Tests
run with the default config (plus each case's own `config:`), so a user's config.toml never changes
their result. Exit 1 on any failure or error.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from rtk_policy.engine.pipeline import Engine

_SUFFIXES = (".yaml", ".yml")


def run(
    *,
    paths: Sequence[str] = (),
    format: str = "text",
    coverage: bool = False,
    backend: str | None = None,
    stdin: IO[str] | None = None,
    stdout: IO[str],
    stderr: IO[str],
) -> int:
    """Entry point of `rtk-policy test`: the report in `format` ("text", "json", "junit"), with
    the rules' `coverage` when asked."""
    from rtk_policy.policytest import report
    from rtk_policy.policytest.files import TestFileError, load_test_file
    from rtk_policy.policytest.run import coverage as rule_coverage
    from rtk_policy.policytest.run import error_result, example_results, run_test_files

    try:
        policy_files, test_paths = collect(list(paths))
    except FileNotFoundError as error:
        stderr.write(f"rtk-policy: {error}\n")
        return 1
    engine = _load(policy_files, backend, stderr)
    if engine is None:
        return 1
    test_files, results = [], []
    for path in test_paths:
        try:
            test_files.append(load_test_file(path))
        except TestFileError as error:
            results.append(error_result(error.location, error.message))
    results.extend(run_test_files(engine, test_files))
    results.extend(example_results(engine))
    cover = rule_coverage(engine, results) if coverage else None
    if format == "json":
        stdout.write(report.render_json(results, cover))
    elif format == "junit":
        stdout.write(report.render_junit(results))
        if cover is not None:
            stderr.write("\n".join(report.coverage_lines(cover)) + "\n")
    else:
        stdout.write(report.render_text(results, cover, len(test_paths)))
    return 1 if any(r.status in ("fail", "error") for r in results) else 0


def collect(paths: list[str] | None, cwd: str | None = None) -> tuple[list[str], list[str]]:
    """The policy files and test files that PATHS name (policies default to the search path)."""
    policy_files: list[str] = []
    test_files: list[str] = []
    for path in paths or _search_path(cwd):
        _classify(Path(path), policy_files, test_files, explicit=bool(paths))
    if paths and not policy_files:
        for path in _search_path(cwd):
            _classify(Path(path), policy_files, [], explicit=False)
    return policy_files, test_files


def _search_path(cwd: str | None) -> list[str]:
    from rtk_policy.policy import policy_search_path

    return [str(p) for p in policy_search_path(cwd=cwd)]


def _classify(path: Path, policy_files: list[str], test_files: list[str], explicit: bool) -> None:
    from rtk_policy.policytest.files import is_test_file

    if path.is_dir():
        members = sorted(p for p in path.iterdir() if p.suffix in _SUFFIXES and p.is_file())
    elif path.is_file():
        members = [path]
    elif explicit:
        raise FileNotFoundError(f"{path}: no such file or folder")
    else:
        return
    for member in members:
        (test_files if is_test_file(member) else policy_files).append(str(member))


def _load(policy_files: list[str], backend: str | None, stderr: IO[str]) -> Engine | None:
    """The engine for `policy_files` with the default config, or None after reporting the error."""
    from rtk_policy.config.load import Config
    from rtk_policy.engine.pipeline import Engine, load_engine
    from rtk_policy.policy import PolicyLoadError

    try:
        engine = load_engine(policy_files or None, backend, use_cache=False, strict=True)
    except PolicyLoadError as error:
        stderr.write(error.render() + "\n")
        return None
    except Exception as error:  # noqa: BLE001 - any load failure is reported, not raised
        stderr.write(f"rtk-policy: cannot load policies: {error}\n")
        return None
    # no time budget: a test gives the same answer on any machine load (engine/budget.py)
    return Engine(policies=engine.policies, config=Config(), budget_s=None)

