"""Loading the engine from the layers (`config/layers.py`), with their direction and their failures.

What a layer that is not trusted (a project the user has not trusted, or trusted before its files
changed) holds is loaded, but only what tightens takes effect: its config is ignored (every key
loosens something), its enforce-mode `allow` rules and all its rewrite rules are suppressed; its
deny and ask rules, and rules in warn or audit mode, apply. Rules of the managed layer marked
`locked` (and the ids in the managed config's `locked_rules`) cannot be disabled by any config.
Each of these is told to the user as a notice (the answer's warnings, a `systemMessage` for Claude
Code).

A file that does not load, in any layer, is left out alone: the rest applies, and every answer is at
least ask, its reason naming the file and the error (`with_layer_state`).
"""

from __future__ import annotations

from rtk_policy.config.layers import CHANGED, MANAGED, UNSAFE, UNTRUSTED, Layer
from rtk_policy.util import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rtk_policy.config.load import Config
    from rtk_policy.decision import Decision
    from rtk_policy.engine.pipeline import Engine

#: load problems named in full in a reason; more are counted
SHOWN_PROBLEMS = 3


def load_layered(
    policy_paths: list[str] | None,
    backend: str | None,
    config_path: str | None,
    cwd: str | None,
    use_cache: bool,
    strict: bool,
    system: bool = False,
    system_root: str = "/",
    store: bool | None = None,
) -> Engine:
    """The engine of the layers for `cwd` (policies: `policy_paths` instead, when given; config:
    `config_path` instead of the user's and the projects', when given). `strict`: any file that
    does not load raises instead. `system`: the managed layer under `system_root` alone, through
    the system cache (`config/managed.py`). `store`: whether a set compiled is stored in the
    cache (default: `use_cache`)."""
    from rtk_policy.config.layers import find_layers
    from rtk_policy.config.load import ConfigError, load_config
    from rtk_policy.engine.pipeline import Engine
    from rtk_policy.policy.errors import PolicyLoadError
    from rtk_policy.policy.load import load_policy_set, read_sources, shipped_pack_files

    cache_folder = None
    if system:
        from rtk_policy.config.managed import system_layer

        layers = system_layers(system_root)
        cache_folder = system_layer(system_root)[2]
        use_cache = use_cache and cache_folder is not None
        store = (use_cache if store is None else store) and cache_folder is not None
    else:
        layers = find_layers(cwd)
    config = load_config(config_path=config_path, layers=layers)
    problems = [problem for layer in layers for problem in layer.problems] + list(config.problems)
    if strict and problems:
        raise ConfigError("\n".join(problems))
    chosen = backend or config.backend or None
    policy_layers = () if policy_paths else layers  # the layers whose policy files are loaded
    if policy_paths:  # named by the caller: trusted as named
        policies = load_policy_set(policy_paths, chosen, use_cache, store=store,
                                   partial=not strict, cache_folder=cache_folder)  # fmt: skip
    else:
        files, missing = shipped_pack_files()
        sources, unread = read_sources(files)
        if strict and (missing or unread):
            raise PolicyLoadError([*missing, *unread])
        problems += [problem.render() for problem in (*missing, *unread)]
        sources += [source for layer in layers for source in layer.policies]
        policies = load_policy_set([], chosen, use_cache, store=store, sources=sources,
                                   partial=not strict, cache_folder=cache_folder)  # fmt: skip
    problems += [_first_line(problem.render()) for problem in policies.problems]
    rules = policies.rules
    locked = locked_rules(policy_layers, rules, config)
    suppressed = suppressed_rules(policy_layers, rules)
    disabled = tuple(rule_id for rule_id in config.disabled_rules if rule_id not in locked)
    notices = [*config.notices, *layer_notices(layers, config, suppressed, rules)]
    kept = sorted(set(config.disabled_rules) & locked)
    if kept:
        notices.append(f"locked by the managed policy, not disabled: {', '.join(kept)}")
    config = record.evolve(config, disabled_rules=disabled)
    return Engine(policies, config, tuple(problems), tuple(notices), tuple(suppressed))


def system_layers(root: str = "/") -> tuple[Layer, ...]:
    """The layers of a machine-wide install's hook: the managed folder under `root` alone (when it
    exists), trusted as `init --system` set it up (`config/managed.py`)."""
    import os

    from rtk_policy.config.layers import read_layer
    from rtk_policy.config.managed import managed_folder

    folder = managed_folder(root)
    return (read_layer(MANAGED, folder),) if os.path.isdir(folder) else ()


def locked_rules(layers: tuple[Layer, ...], rules: tuple[Any, ...], config: Config) -> set[str]:
    """The ids no config may disable: `locked` rules of the trusted managed layer's files, and the
    managed config's `locked_rules`."""
    managed = {path for layer in layers if layer.kind == MANAGED and layer.trusted
               for path, _ in layer.policies}  # fmt: skip
    return {rule.id for rule in rules if rule.locked and rule.file in managed} | set(
        config.locked_rules
    )


def loosens(rule: Any) -> bool:
    """True for a rule an untrusted layer may not add: an enforced allow, or any rewrite."""
    return rule.kind == "rewrite" or (rule.decision == "allow" and rule.mode == "enforce")


def suppressed_rules(layers: tuple[Layer, ...], rules: tuple[Any, ...]) -> list[str]:
    """The ids of the loosening rules (`loosens`) of the untrusted layers' files."""
    untrusted = {path for layer in layers if not layer.trusted for path, _ in layer.policies}
    return [rule.id for rule in rules if rule.file in untrusted and loosens(rule)]


def layer_notices(
    layers: tuple[Layer, ...], config: Config, suppressed: list[str], rules: tuple[Any, ...]
) -> list[str]:
    """One notice for each untrusted layer that holds loosening (what is ignored, and how to apply
    it), and for each layer whose trust was lost (a project changed since it was trusted, a managed
    folder its user could write) even when it holds none."""
    ignored_keys = dict(config.ignored)
    ignored_rules: dict[str, list[Any]] = {}
    left_out = set(suppressed)
    for rule in rules:
        if rule.id in left_out:
            ignored_rules.setdefault(rule.file, []).append(rule)
    notes = []
    for layer in layers:
        if layer.trusted:
            continue
        parts = []
        if layer.config is not None and layer.config[0] in ignored_keys:
            parts.append(f"config.toml ({', '.join(ignored_keys[layer.config[0]])})")
        held = [rule for path, _ in layer.policies for rule in ignored_rules.get(path, ())]
        allows = [rule.id for rule in held if rule.kind != "rewrite"]
        rewrites = [rule.id for rule in held if rule.kind == "rewrite"]
        parts += [f"allow rules ({', '.join(allows)})"] if allows else []
        parts += [f"rewrite rules ({', '.join(rewrites)})"] if rewrites else []
        if parts or layer.status != UNTRUSTED:
            notes.append(_layer_notice(layer, "; ".join(parts)))
    return notes


def _layer_notice(layer: Layer, ignored: str) -> str:
    what = f" Ignored: {ignored}." if ignored else ""
    if layer.status == CHANGED:
        return (
            f"the project policies in {layer.folder} changed since you trusted them; their "
            f"loosening is ignored until you run `rtk-policy trust {layer.project}` again.{what}"
        )
    if layer.status == UNSAFE:
        return (
            f"the managed folder {layer.folder} is not owned by root or is writable by "
            f"others, so only its deny and ask rules apply.{what}"
        )
    return (
        f"{layer.folder} is not trusted, so only its deny and ask rules apply.{what} "
        f"Run `rtk-policy trust {layer.project}` to apply them."
    )


def with_layer_state(
    decision: Decision, problems: tuple[str, ...], notices: tuple[str, ...]
) -> Decision:
    """`decision` with the layers' state applied: when files did not load, a verdict below ask
    becomes ask, the problems first among the reasons (a deny stays a deny, and tells them among
    its warnings); notices are added to the warnings."""
    warnings = decision.warnings + notices
    if not problems:
        return record.evolve(decision, warnings=warnings)
    summary = load_problem_reason(problems)
    if decision.verdict == "deny":
        return record.evolve(decision, warnings=(summary, *warnings))
    reasons = decision.reasons if decision.verdict == "ask" else ()
    return record.evolve(decision, verdict="ask", reasons=(summary, *reasons), warnings=warnings)


def load_problem_reason(problems: tuple[str, ...]) -> str:
    """The reason an answer gives when policy or config files did not load."""
    shown = "; ".join(problems[:SHOWN_PROBLEMS])
    more = len(problems) - SHOWN_PROBLEMS
    if more > 0:
        shown += f" (and {more} more)"
    return (
        "rtk-policy: a policy or config file did not load, so it is left out and every command "
        f"needs your approval until it is fixed (`rtk-policy check`): {shown}"
    )


def _first_line(text: str) -> str:
    return text.split("\n", 1)[0]
