"""Finding policy files and loading a `PolicySet`, through the compiled cache when it verifies."""

from __future__ import annotations

import gc
import os

from rtk_policy.policy.backends.select import get_backend
from rtk_policy.policy.cache import (
    cache_key,
    compile_lock,
    policy_digest,
    read_cache,
    stored_version,
    write_cache,
)
from rtk_policy.policy.compiled import COMPILED_FORMAT
from rtk_policy.policy.errors import PolicyLoadError, Problem
from rtk_policy.policy.facts import schema_signature
from rtk_policy.policy.functions import functions_signature
from rtk_policy.policy.guards.guard import guard_patterns
from rtk_policy.policy.guards.plan_store import PLANS_FORMAT
from rtk_policy.policy.policyset import PolicySet
from rtk_policy.policy.regex import pattern_literals, remember_valid, valid_patterns
from rtk_policy.util import environ

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def packs_dir() -> str | None:
    """The folder of the shipped packs (the package `rtk_policy.packs`, or the checkout's
    policies/)."""
    try:
        # a package only in an install (pyproject's package-dir): mypy finds it or not, by where
        import rtk_policy.packs as packs  # type: ignore[import-not-found, unused-ignore]

        return str(next(iter(packs.__path__)))
    except (ImportError, StopIteration):
        # a source checkout (its root on sys.path, as in the tests): policies/ beside the package
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
        checkout = os.path.join(root, "policies")
        return checkout if os.path.isdir(checkout) else None


#: every pack file the shipped packs folder (`packs_dir`) holds: one missing (a damaged or altered
#: install, or no folder at all) is a load problem, so every answer asks, never a quiet "no
#: opinion" on what it held (`shipped_pack_files`; `tests/test_shipped_packs.py` keeps this list
#: and policies/ in step)
SHIPPED_PACKS = (
    "claude-permissions.yaml", "guard-self.yaml", "rtk-rewrite.yaml", "security-baseline.yaml",
    "services.yaml",
)  # fmt: skip
#: what a missing shipped pack is said to be
MISSING_PACK = "a shipped policy pack is missing (a damaged or altered install: reinstall it)"


def shipped_pack_files() -> tuple[list[str], list[Problem]]:
    """The files of the shipped packs folder (`packs_dir`, as `expand_paths` lists them), and a
    problem for each of `SHIPPED_PACKS` not among them (every one when there is no folder)."""
    packs = packs_dir()
    files = expand_paths([packs]) if packs is not None else []
    found = {os.path.basename(path) for path in files}
    folder = packs or os.path.join(os.path.dirname(os.path.dirname(__file__)), "packs")
    missing = [name for name in SHIPPED_PACKS if name not in found]
    return files, [Problem(os.path.join(folder, name), 0, 0, MISSING_PACK) for name in missing]


def shipped_packs() -> list[str]:
    """The folder of the shipped packs, as a search path ([] when it cannot be found)."""
    packs = packs_dir()
    return [packs] if packs is not None else []


def policy_search_path(cwd: str | None = None) -> list[str]:
    """The policy folders of every layer, each only if it exists: the shipped packs, the managed
    layer's, the user's, then each project layer's (outermost first, `config.paths`)."""
    from rtk_policy.config import paths

    layers = [paths.managed_dir(), paths.user_config_dir(), *paths.project_layer_dirs(cwd)]
    candidates = [packs_dir(), *(paths.policies_dir(layer) for layer in layers)]
    return [path for path in candidates if path is not None and os.path.isdir(path)]


def with_shipped(paths: list[str], shipped: bool = True) -> list[str]:
    """`paths` after the shipped packs (unless `shipped` is False): what a team's CI pins is "the
    shipped packs plus ours", so a snapshot never pins `rm -rf /` as no opinion by leaving them
    out. A given file that is a byte-identical copy of a shipped pack file (a vendored copy of the
    packs, or a checkout's policies/ beside an installed wheel) is the same policy and is left
    out; one that differs stays and is judged (a clash of names is an error then). A shipped pack
    missing (`shipped_pack_files`) is named among the paths all the same: loading it fails."""
    if not shipped:
        return list(paths)
    files, missing = shipped_pack_files()
    packs = packs_dir()
    real = os.path.realpath(packs) if packs is not None else None
    shipped_bytes = {_read_bytes(path) for path in files}
    kept: list[str] = []
    for path in paths:
        if os.path.realpath(path) == real:
            continue
        if not os.path.isdir(path):
            kept.append(path)
            continue
        given = expand_paths([path])
        copies = [file for file in given if _read_bytes(file) in shipped_bytes]
        kept.extend([file for file in given if file not in copies] if copies else [path])
    shipped_folder = [packs] if packs is not None else []
    return [*shipped_folder, *(problem.file for problem in missing), *kept]


def _read_bytes(path: str) -> bytes | None:
    """The bytes of the file at `path` (None when it cannot be read)."""
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


def expand_paths(paths: list[str]) -> list[str]:
    """Files as given; a folder becomes its *.yaml/*.yml files by name, without *_test.yaml
    test files."""
    from rtk_policy.config.paths import policy_files

    found: list[str] = []
    for path in paths:
        found.extend(policy_files(path) if os.path.isdir(path) else [path])
    return found


def read_sources(files: list[str]) -> tuple[list[tuple[str, bytes]], list[Problem]]:
    """The (path, bytes) of the regular files among `files`, and a problem for each other one."""
    from rtk_policy.config.layers import read_regular_file

    sources, problems = [], []
    for path in files:
        try:
            sources.append((path, read_regular_file(path)[0]))
        except OSError as error:
            message = f"cannot read policy file: {error.strerror or error}"
            problems.append(Problem(path, 0, 0, message))
    return sources, problems


def load_policy_set(
    paths: list[str],
    backend: str | None = None,
    use_cache: bool = True,
    *,
    store: bool | None = None,
    sources: list[tuple[str, bytes]] | None = None,
    partial: bool = False,
    cache_folder: str | None = None,
) -> PolicySet:
    """Load, validate and compile the policy files (folders expanded), or `sources` ((path, bytes)
    already read) instead of `paths`.

    A file with a problem fails the load (`PolicyLoadError`, every problem listed); with `partial`,
    such a file alone is left out and the set holds the rest, its `problems` saying what was left
    out and why (the engine then asks about every command, `engine/layered.py`).

    With `use_cache`, a set found in the compiled cache (`cache.py`; `cache_folder`, default the
    user's `cache.cache_dir()`) is restored instead; a set compiled is stored there when `store`
    (default: `use_cache`). A process that finds its set missing compiles it under
    `cache.compile_lock`: one that waited for another reads the set that one stored."""
    chosen = get_backend(backend or environ.get("RTK_POLICY_BACKEND") or None)
    unread: list[Problem] = []
    if sources is None:
        sources, unread = read_sources(expand_paths(paths))
    if unread and not partial:
        raise PolicyLoadError(unread)
    digest = policy_digest(sources)
    key = _set_key(digest, chosen)
    store = use_cache if store is None else store
    if use_cache:
        cached = _cached(key, chosen, digest, cache_folder)
        if cached is not None:
            return _checked(cached, unread, partial)
    if not store:
        return _checked(_compile(sources, chosen, digest, partial)[0], unread, partial)
    with compile_lock(key, cache_folder) as waited:
        cached = _cached(key, chosen, digest, cache_folder) if waited and use_cache else None
        if cached is not None:  # another process compiled it meanwhile
            return _checked(cached, unread, partial)
        policies, patterns = _compile(sources, chosen, digest, partial)
        _store(key, policies, patterns, cache_folder)
    return _checked(policies, unread, partial)


def _set_key(digest: str, chosen: Any) -> str:
    """The cache key of the policies of `digest` compiled on the backend `chosen`."""
    extra = functions_signature() + schema_signature() + COMPILED_FORMAT + "." + PLANS_FORMAT
    return cache_key(digest, chosen.name, chosen.version, extra)


def is_cached(policies: PolicySet, folder: str | None = None) -> bool:
    """Whether the compiled cache (`folder`, default the user's) holds `policies` as this version
    compiles them: what a hook loading the same files reads instead of compiling."""
    key = _set_key(policies.digest, get_backend(policies.backend))
    return stored_version(key, folder) is not None


#: the sets this process decoded from the cache: key → (the file's `stored_version`, the parts,
#: the program bytes). Their records and forms are immutable, so a process that loads the same set
#: again (a batch, a server opening another project, the tests) shares them (`KEEP_DECODED` kept)
_DECODED: dict[str, tuple[Any, dict[str, Any], list[bytes]]] = {}
KEEP_DECODED = 4


def _cached(key: str, chosen: Any, digest: str, folder: str | None) -> PolicySet | None:
    """The policy set stored under `key` in the cache `folder`, or None (missing, or not what
    `stored.py` writes)."""
    version = stored_version(key, folder)
    if version is None:
        return None
    known = _DECODED.get(key)
    if known is not None and known[0] == version:
        parts, programs = known[1], known[2]
    else:
        decoded = _decode(key, folder)
        if decoded is None:
            return None
        parts, programs = decoded
        if len(_DECODED) >= KEEP_DECODED:
            _DECODED.clear()
        _DECODED[key] = (version, parts, programs)
    remember_valid(parts["patterns"])
    return PolicySet(parts["files"], parts["rules"], list(programs), parts["expected"], chosen,
                     digest, parts["uses"], parts["plans"], parts["problems"])  # fmt: skip


def _decode(key: str, folder: str | None) -> tuple[dict[str, Any], list[bytes]] | None:
    """The checked parts (`stored.policy_from_data`) and program bytes of the file under `key`
    in the cache `folder`.

    The cyclic collector is paused meanwhile: decoding makes ~100,000 objects and no cycle, and
    its passes over them would double the time (the hook runs without it anyway)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        found = read_cache(key, folder)
        if found is None:
            return None
        from rtk_policy.policy.stored import policy_from_data

        document, programs = found
        try:
            return policy_from_data(document, len(programs)), programs
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
            return None  # a document of the wrong shape: compiled again
    finally:
        if collecting:
            gc.enable()


def _checked(policies: PolicySet, unread: list[Problem], partial: bool) -> PolicySet:
    """`policies` with the unreadable files' problems added; raise when a load must be whole."""
    problems = [*unread, *policies.problems]
    if problems and not partial:
        raise PolicyLoadError(problems)
    if unread:
        policies.problems = tuple(problems)
    return policies


def _compile(
    sources: list[tuple[str, bytes]], chosen: Any, digest: str, partial: bool
) -> tuple[PolicySet, dict[str, tuple[str, ...]]]:
    """The policy set of `sources`, with the valid literal patterns of its guard forms and their
    pre-test literals (`regex.pattern_literals`). With `partial`, each file with a problem is left
    out and the rest compiled again, until what is left compiles cleanly."""
    from rtk_policy.policy.compiler import compile_files

    texts = []
    problems: list[Problem] = []
    for path, data in sources:
        try:
            texts.append((path, data.decode("utf-8")))
        except UnicodeDecodeError as error:
            problems.append(Problem(path, 0, 0, f"policy file is not UTF-8: {error.reason}"))
    state = compile_files(texts, chosen)
    while state.problems and partial:
        problems.extend(state.problems)
        bad = {problem.file for problem in state.problems}
        left = [(path, text) for path, text in texts if path not in bad]
        if len(left) == len(texts):  # a problem of no file: nothing to leave out
            break
        texts = left
        state = compile_files(texts, chosen)
    problems.extend(state.problems)
    if problems and not partial:
        raise PolicyLoadError(problems)
    files, rules, expected = tuple(state.files), tuple(state.rules), tuple(state.expected)
    uses = frozenset(state.uses)
    policies = PolicySet(files, rules, state.programs, expected, chosen, digest, uses,
                         problems=tuple(problems))  # fmt: skip
    patterns = pattern_literals(valid_patterns(_literal_patterns(files, rules)))
    remember_valid(patterns)
    return policies, patterns


def _store(
    key: str, policies: PolicySet, patterns: dict[str, tuple[str, ...]], folder: str | None
) -> bool:
    """Write the compiled set to the cache `folder` under `key`; False when it could not be
    stored."""
    from rtk_policy.policy.stored import policy_data

    try:
        document = policy_data(policies.compiled_files, policies.compiled_rules,
                               policies.expected, policies.uses, policies.plan_tables(),
                               patterns, policies.problems)  # fmt: skip
    except ValueError:  # an example holding a value JSON would change: not cached
        return False
    return write_cache(key, document, policies.program_blobs(), folder)


def _literal_patterns(files: tuple[Any, ...], rules: tuple[Any, ...]) -> set[str]:
    """The literal `matches` patterns of every guard form: checked once here, so that a guard may
    pre-test them by their required literal without compiling them
    (`guard_values.literal_search`). A plan's residual forms are these forms specialised: their
    patterns are among these."""
    forms = [form for f in files for form in (f.when_guard, f.consumer_guard)]
    forms += [form for r in rules for form in (r.guard, r.output)]
    return guard_patterns(forms)
