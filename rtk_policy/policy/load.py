"""Finding policy files and loading a `PolicySet`, through the compiled cache when it verifies."""

from __future__ import annotations

import os

from rtk_policy.policy.backends.select import get_backend
from rtk_policy.policy.cache import cache_key, policy_digest, read_cache, write_cache
from rtk_policy.policy.compiled import COMPILED_FORMAT
from rtk_policy.policy.errors import PolicyLoadError, Problem
from rtk_policy.policy.facts import schema_signature
from rtk_policy.policy.functions import functions_signature
from rtk_policy.policy.guards.guard import guard_patterns
from rtk_policy.policy.guards.plan_store import PLANS_FORMAT, PlanTables
from rtk_policy.policy.policyset import PolicySet
from rtk_policy.policy.regex import pattern_literals, remember_valid, valid_patterns

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~4 ms on a cold hook)
if TYPE_CHECKING:
    from typing import Any

_SUFFIXES = (".yaml", ".yml")


def _packs_dir() -> str | None:
    """The folder of the shipped packs (the package `rtk_policy.packs`, the repository's policies/)."""
    try:
        import rtk_policy.packs as packs

        return str(next(iter(packs.__path__)))
    except (ImportError, StopIteration):
        # run from a source checkout (its root on sys.path, as in the tests): policies/ beside the package
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
        checkout = os.path.join(root, "policies")
        return checkout if os.path.isdir(checkout) else None


def policy_search_path(cwd: str | None = None) -> list[str]:
    """The shipped packs, then the user's and the project's policy folders, each only if it exists.

    Paths are joined as strings (`os.path`): `pathlib` costs a cold hook ~3.5 ms of imports."""
    from rtk_policy.config.load import project_dir, user_config_dir

    candidates = [_packs_dir(), os.path.join(user_config_dir(), "policies")]
    project = project_dir(cwd)
    if project is not None:
        candidates.append(os.path.join(project, ".rtk-policy", "policies"))
    return [path for path in candidates if path is not None and os.path.isdir(path)]


def with_shipped(paths: list[str], shipped: bool = True) -> list[str]:
    """`paths` after the shipped packs (unless `shipped` is False): what a team's CI pins is "the
    shipped packs plus ours", so a snapshot never pins `rm -rf /` as no opinion by leaving them out."""
    packs = _packs_dir() if shipped else None
    if packs is None:
        return list(paths)
    real = os.path.realpath(packs)
    return [packs] + [path for path in paths if os.path.realpath(path) != real]


def expand_paths(paths: list[str]) -> list[str]:
    """Files as given; a folder becomes its *.yaml/*.yml files by name, without *_test.yaml test files."""
    found: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            names = sorted(
                n
                for n in os.listdir(path)
                if n.endswith(_SUFFIXES) and not n.rsplit(".", 1)[0].endswith("_test")
            )
            found.extend(os.path.join(path, n) for n in names)
        else:
            found.append(path)
    return found


def _read_sources(files: list[str]) -> list[tuple[str, bytes]]:
    sources, problems = [], []
    for path in files:
        try:
            with open(path, "rb") as handle:
                sources.append((path, handle.read()))
        except OSError as error:
            problems.append(
                Problem(path, 0, 0, f"cannot read policy file: {error.strerror or error}")
            )
    if problems:
        raise PolicyLoadError(problems)
    return sources


def load_policy_set(
    paths: list[str], backend: str | None = None, use_cache: bool = True
) -> PolicySet:
    """Load, validate and compile the policy files (folders expanded); raise `PolicyLoadError`."""
    chosen = get_backend(backend or os.environ.get("RTK_POLICY_BACKEND") or None)
    sources = _read_sources(expand_paths(paths))
    digest = policy_digest(sources)
    extra = functions_signature() + schema_signature() + COMPILED_FORMAT + "." + PLANS_FORMAT
    key = cache_key(digest, chosen.name, chosen.version, extra)
    if use_cache:
        payload = read_cache(key)
        if payload is not None:
            try:
                plans = PlanTables(*payload["plans"])
                programs = list(payload["programs"])
                remember_valid(payload["patterns"])
                return PolicySet(payload["files"], payload["rules"], programs, payload["expected"],
                                 chosen, digest, payload["uses"], plans)  # fmt: skip
            except (KeyError, TypeError, ValueError, AttributeError):
                pass  # a payload of the wrong shape is rebuilt
    from rtk_policy.policy.compiler import compile_files

    texts = []
    problems: list[Problem] = []
    for path, data in sources:
        try:
            texts.append((path, data.decode("utf-8")))
        except UnicodeDecodeError as error:
            problems.append(Problem(path, 0, 0, f"policy file is not UTF-8: {error.reason}"))
    state = compile_files(texts, chosen)
    problems.extend(state.problems)
    if problems:
        raise PolicyLoadError(problems)
    files, rules, expected = tuple(state.files), tuple(state.rules), tuple(state.expected)
    uses = frozenset(state.uses)
    policies = PolicySet(files, rules, state.programs, expected, chosen, digest, uses)
    patterns = pattern_literals(valid_patterns(_literal_patterns(files, rules)))
    remember_valid(patterns)
    if use_cache:
        blobs = [chosen.dump(p) for p in state.programs]
        plans = tuple(policies.plan_tables())  # a plain tuple: unpickled without this module
        payload = {"files": files, "rules": rules, "programs": blobs, "expected": expected}
        write_cache(key, {**payload, "uses": uses, "plans": plans, "patterns": patterns})
    return policies


def _literal_patterns(files: tuple[Any, ...], rules: tuple[Any, ...]) -> set[str]:
    """The literal `matches` patterns of every guard form: checked once here, so that a guard may
    pre-test them by their required literal without compiling them
    (`guard_values.literal_search`). A plan's residual forms are these forms specialised: their
    patterns are among these."""
    forms = [form for f in files for form in (f.when_guard, f.consumer_guard)]
    forms += [form for r in rules for form in (r.guard, r.output)]
    return guard_patterns(forms)
