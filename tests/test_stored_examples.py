"""The examples of a policy set read from the compiled cache are decoded when first used
(`stored.StoredExamples`): a hook deciding commands never builds them, yet every reader sees what a
fresh compile gives, and a forgery of their shape cannot reach a decision."""

from __future__ import annotations

import json
import pickle
from hashlib import blake2b

import pytest

from rtk_policy.policy.load import load_policy_set, packs_dir
from rtk_policy.policy.model import Context
from rtk_policy.policy.stored import StoredExamples
from rtk_policy.shell import parse
from rtk_policy.util import record

MAGIC = b"rtk-policy-cache 3\n"


@pytest.fixture(scope="module")
def sets(tmp_path_factory):
    """(a fresh compile of the shipped packs, the same set read back from a cache folder, the
    folder)."""
    folder = str(tmp_path_factory.mktemp("examples-cache"))
    fresh = load_policy_set([packs_dir()], cache_folder=folder)
    return fresh, _reloaded(folder), folder


def _reloaded(folder: str):
    """The packs' set read from `folder`, not the copy this process keeps decoded."""
    from rtk_policy.policy import load

    load._DECODED.clear()
    cached = load_policy_set([packs_dir()], cache_folder=folder, store=False)
    assert all(isinstance(rule.examples, StoredExamples) for rule in cached.rules)
    return cached


def test_cached_rules_equal_the_compiled_ones(sets):
    """Rules read back equal (and hash as) the compiled ones, examples compared every way."""
    fresh, cached, _ = sets
    assert sum(len(rule.examples) for rule in fresh.rules) > 500
    assert cached.rules == fresh.rules
    assert [_hash(rule) for rule in cached.rules] == [_hash(rule) for rule in fresh.rules]
    assert sum(1 for rule in fresh.rules if _hash(rule) is not None) > 100
    for old, new in zip(fresh.rules, cached.rules, strict=True):
        assert tuple(new.examples) == old.examples
        assert list(new.examples) == list(old.examples)
        assert new.examples == old.examples and old.examples == new.examples
        if old.examples:
            assert new.examples[-1] == old.examples[-1]
            assert new.examples[:1] == old.examples[:1]


def _hash(rule: object) -> int | None:
    """The rule's hash; None for one whose examples hold a mapping (as a compiled rule's do)."""
    try:
        return hash(rule)
    except TypeError:
        return None


def test_plain_data_and_pickles_are_those_of_the_compiled_rules(sets):
    """`record.asdict` (explain's JSON) and pickles see the examples as the compiled rules'."""
    fresh, cached, _ = sets
    assert record.asdict(cached.rules[0]) == record.asdict(fresh.rules[0])
    assert isinstance(record.asdict(cached.rules[0])["examples"], list)
    json.dumps(record.asdict(cached.rules[0]))  # what `explain --json` writes
    restored = pickle.loads(pickle.dumps(cached.rules))
    assert restored == fresh.rules
    assert type(restored[0].examples) is tuple


def test_deciding_commands_never_decodes_an_example(sets):
    """Decisions (and counting examples) leave every rule's examples undecoded."""
    _, _, folder = sets
    cached = _reloaded(folder)
    for command in ("git status", "rm -rf /", "sudo rm -rf / --no-preserve-root", "ls | grep x"):
        assert not cached.evaluate(parse(command), Context(agent="claude")).errors
    assert not any(rule.examples._examples for rule in cached.rules)
    assert any(rule.examples for rule in cached.rules)  # len() does not decode either
    assert not any(rule.examples._examples for rule in cached.rules)


def _hits(evaluation) -> list[tuple[str, str]]:
    """(rule id, decision) of every permission rule that matched, segment by segment."""
    return [(hit.rule.id, hit.rule.decision)
            for result in evaluation.results for hit in result.permission_hits]  # fmt: skip


def _forge_first_example(folder: str, example: object) -> None:
    """Replace the first stored example of the cache file in `folder`, digest recomputed."""
    import glob

    (path,) = glob.glob(f"{folder}/policies-*.cache")
    data = open(path, "rb").read()
    header, _, rest = data[len(MAGIC) :].partition(b"\n")
    length = int(header.split(b" ")[1])
    wrapper, blobs = json.loads(rest[:length]), rest[length:]
    rule = next(rule for rule in wrapper["data"]["rules"] if rule[0][10])
    rule[0][10][0] = example
    text = json.dumps(wrapper, separators=(",", ":")).encode()
    key = path.rsplit("policies-", 1)[1][: -len(".cache")]
    digest = blake2b(text + blobs, digest_size=32, key=key.encode()[:64]).hexdigest().encode()
    with open(path, "wb") as handle:
        handle.write(MAGIC + digest + b" %d\n" % len(text) + text + blobs)


@pytest.mark.parametrize("example", [["rm -rf /", 5, 0, 1, [], "", ""], "text", [[1, 2]]])
def test_a_forged_example_cannot_change_a_decision_and_fails_where_read(sets, tmp_path, example):
    """A forgery with a recomputed digest whose example is not one the loader makes: the set
    still loads (examples are not read to decide), decides as the fresh compile does, and reading
    that rule's examples raises instead of handing a runner something the loader never makes."""
    import shutil

    fresh, _, folder = sets
    forged = str(tmp_path / "cache")
    shutil.copytree(folder, forged)
    _forge_first_example(forged, example)
    cached = _reloaded(forged)
    context = Context(agent="claude")
    for command in ("rm -rf /", "git push --force origin main", "git status"):
        hits = _hits(cached.evaluate(parse(command), context))
        assert hits == _hits(fresh.evaluate(parse(command), context))
        assert hits or command == "git status"
    rule = next(rule for rule in cached.rules if rule.examples)
    with pytest.raises(ValueError, match="Example"):
        list(rule.examples)
