"""The compiled-policy cache: hits restore without YAML or CEL parsing; stale or corrupt files are rebuilt."""

from __future__ import annotations

from pathlib import Path

import pytest
from policy_helpers import line, seg, write

from rtk_policy.policy import available_backends, load_policy_set
from rtk_policy.policy import load as load_module
from rtk_policy.policy.cache import cache_dir
from rtk_policy.policy.model import Context

TEXT = """\
name: c
rules:
  - id: rm-any
    decision: deny
    programs: [rm]
    match: segment.args.size() > 0
"""


@pytest.fixture(autouse=True)
def cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def _files():
    return sorted(Path(cache_dir()).glob("policies-*.cache"))


def _denies(policies):
    return [
        h.rule.id
        for h in policies.evaluate(line(seg("rm x")), Context()).results[0].permission_hits
    ]


@pytest.mark.parametrize("backend", available_backends())
def test_hit_does_not_compile_again(tmp_path, monkeypatch, backend):
    path = write(tmp_path, "p.yaml", TEXT)
    first = load_policy_set([path], backend=backend)
    assert len(_files()) == 1
    import rtk_policy.policy.compiler as compiler

    monkeypatch.setattr(
        compiler, "compile_files", lambda *a: pytest.fail("compiled on a cache hit")
    )
    second = load_policy_set([path], backend=backend)
    assert second.digest == first.digest and [r.id for r in second.rules] == ["rm-any"]
    assert _denies(second) == ["rm-any"]


def test_stale_cache_is_not_used(tmp_path):
    path = write(tmp_path, "p.yaml", TEXT)
    load_policy_set([path])
    write(tmp_path, "p.yaml", TEXT.replace("rm-any", "rm-changed"))
    policies = load_policy_set([path])
    assert [r.id for r in policies.rules] == ["rm-changed"]
    assert len(_files()) == 2


@pytest.mark.parametrize("damage", [b"", b"garbage", None])
def test_corrupt_cache_is_rebuilt(tmp_path, monkeypatch, damage):
    path = write(tmp_path, "p.yaml", TEXT)
    load_policy_set([path])
    (cached,) = _files()
    data = cached.read_bytes()
    cached.write_bytes(data[:-10] + b"0123456789" if damage is None else damage)
    policies = load_policy_set([path])
    assert _denies(policies) == ["rm-any"]
    assert cached.read_bytes() != data[:-10] + b"0123456789"
    import rtk_policy.policy.compiler as compiler

    monkeypatch.setattr(
        compiler, "compile_files", lambda *a: pytest.fail("the rebuilt cache was not used")
    )
    assert _denies(load_policy_set([path])) == ["rm-any"]


def test_unwritable_cache_dir_is_fine(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    policies = load_policy_set([write(tmp_path, "p.yaml", TEXT)])
    assert _denies(policies) == ["rm-any"]


def test_no_cache_when_disabled(tmp_path):
    load_policy_set([write(tmp_path, "p.yaml", TEXT)], use_cache=False)
    assert _files() == []
    assert load_module.expand_paths([str(tmp_path)]) == [str(tmp_path / "p.yaml")]


def test_old_compiled_sets_are_pruned(tmp_path, monkeypatch):
    """Each write keeps the KEEP newest sets; the one just written and fresh temp files survive."""
    import os
    import time

    from rtk_policy.policy import cache

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(cache, "KEEP", 3)
    folder = Path(cache.cache_dir())
    folder.mkdir(parents=True)
    now = time.time()
    for age in range(6):  # six older sets, the oldest first to go
        path = folder / f"policies-old{age}.cache"
        path.write_bytes(b"x")
        os.utime(path, (now - 100 - age, now - 100 - age))
    (folder / ".tmp-stale").write_bytes(b"x")
    os.utime(folder / ".tmp-stale", (now - 7200, now - 7200))
    (folder / ".tmp-fresh").write_bytes(b"x")
    (folder / "notes.txt").write_bytes(b"not ours")
    assert cache.write_cache("new", {"a": 1}, [b"blob"])
    left = sorted(p.name for p in folder.iterdir())
    assert left == [".tmp-fresh", "notes.txt", "policies-new.cache", "policies-old0.cache",
                    "policies-old1.cache"]  # fmt: skip
    assert cache.read_cache("new") is not None


def test_a_process_decodes_an_unchanged_set_once(tmp_path, monkeypatch):
    """A second load of the same cache file (a batch, a server opening another project) shares
    what the first decoded; a file written again (a new inode) is read and checked again."""
    path = write(tmp_path, "p.yaml", TEXT)
    load_policy_set([path])  # compiles and stores
    first = load_policy_set([path])  # decodes
    reads = []
    real_read = load_module.read_cache
    monkeypatch.setattr(load_module, "read_cache",
                        lambda key, folder: reads.append(key) or real_read(key, folder))  # fmt: skip
    second = load_policy_set([path])
    assert reads == [] and _denies(second) == ["rm-any"]
    assert second.compiled_rules is first.compiled_rules and second is not first
    (cached,) = _files()
    data = cached.read_bytes()
    cached.unlink()
    cached.write_bytes(data)  # the same bytes in a new file
    assert _denies(load_policy_set([path])) == ["rm-any"] and len(reads) == 1


def test_a_partial_set_keeps_its_problems_through_the_cache(tmp_path, monkeypatch):
    """A set loaded with a broken file left out is cached with that file's problems: the load
    that reads it back says the same (and the engine still asks about every command)."""
    good = write(tmp_path, "p.yaml", TEXT)
    bad = write(tmp_path, "q.yaml", "name: q\nrules: [\n")
    first = load_policy_set([good, bad], partial=True)
    assert first.problems and all(problem.file == bad for problem in first.problems)
    import rtk_policy.policy.compiler as compiler

    monkeypatch.setattr(
        compiler, "compile_files", lambda *a: pytest.fail("compiled on a cache hit")
    )
    second = load_policy_set([good, bad], partial=True)
    assert second.problems == first.problems and _denies(second) == ["rm-any"]
    with pytest.raises(load_module.PolicyLoadError):
        load_policy_set([good, bad])  # a whole load still refuses it
