"""No slow first call (issue 17): `init` and `check` compile the policies ahead, and processes that
find the compiled set missing compile it once between them (one holds the lock, the others read
what it stored); a process never waits for ever for another's compile."""

from __future__ import annotations

import fcntl
import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from rtk_policy.policy import cache, load_policy_set, policy_search_path
from rtk_policy.policy import compiler as compiler_module

PACKS = str(Path(__file__).resolve().parents[1] / "policies")

#: one process: load the packs (waiting up to 60 s for a compile in progress), then say whether
#: it compiled them itself and what it decides for `rm -rf /`
_LOAD = """
import json, sys
from rtk_policy.policy import cache
cache.COMPILE_WAIT = 60.0
sys.stdin.read()  # wait for the start signal, so the processes race
from rtk_policy.engine.pipeline import load_engine
engine = load_engine([sys.argv[1]])
verdict = engine.decide("rm -rf /", engine.context()).verdict
print(json.dumps(["rtk_policy.policy.compiler" in sys.modules, verdict]))
"""


def _sets(folder: Path) -> list[Path]:
    return sorted((folder / "rtk-policy").glob("policies-*.cache"))


def test_parallel_processes_compile_the_set_once(tmp_path):
    """Four hooks started together on a cold cache: exactly one compiles, all deny `rm -rf /`."""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    processes = [
        subprocess.Popen([sys.executable, "-c", _LOAD, PACKS], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, env=env)  # fmt: skip
        for _ in range(4)
    ]
    for process in processes:
        process.stdin.close()  # type: ignore[union-attr]
    answers = []
    for process in processes:
        answers.append(json.loads(process.stdout.read()))  # type: ignore[union-attr]
        assert process.wait(timeout=300) == 0
    assert [verdict for _, verdict in answers] == ["deny"] * 4
    assert sum(compiled for compiled, _ in answers) == 1
    assert len(_sets(tmp_path)) == 1


def test_a_process_waits_for_a_compile_only_so_long(tmp_path, monkeypatch):
    """Another process holds the compile lock and never finishes: after `COMPILE_WAIT` this one
    compiles for itself (and stores the set), rather than leaving the call undecided."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "first"))
    load_policy_set([PACKS])
    key = _sets(tmp_path / "first")[0].name[len("policies-") : -len(".cache")]
    folder = tmp_path / "second" / "rtk-policy"
    folder.mkdir(parents=True)
    holder = os.open(folder / f".lock-{key}", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(holder, fcntl.LOCK_EX)  # a hung compiler
    try:
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "second"))
        monkeypatch.setattr(cache, "COMPILE_WAIT", 0.3)
        started = time.monotonic()
        policies = load_policy_set([PACKS])
        waited = time.monotonic() - started
    finally:
        os.close(holder)
    assert waited >= 0.3
    assert "rm-recursive-root" in {rule.id for rule in policies.rules}
    assert _sets(tmp_path / "second")


def test_a_process_that_waited_reads_what_the_other_stored(tmp_path, monkeypatch):
    """The lock is released once the other process stored the set: the waiter reads it, it does
    not compile again."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    load_policy_set([PACKS])
    (stored,) = _sets(tmp_path)
    key = stored.name[len("policies-") : -len(".cache")]
    kept = stored.read_bytes()
    stored.unlink()
    holder = os.open(stored.parent / f".lock-{key}", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(holder, fcntl.LOCK_EX)
    pid = os.fork()
    if pid == 0:  # the other process: stores the set a moment later, then lets go of the lock
        time.sleep(0.3)
        stored.write_bytes(kept)
        os._exit(0)
    os.close(holder)  # the child holds the lock now (its copy of the descriptor)
    monkeypatch.setattr(compiler_module, "compile_files",
                        lambda *a: pytest.fail("compiled while another process did"))  # fmt: skip
    try:
        policies = load_policy_set([PACKS])
    finally:
        os.waitpid(pid, 0)
    assert "rm-recursive-root" in {rule.id for rule in policies.rules}


def _no_compile(monkeypatch):
    monkeypatch.setattr(compiler_module, "compile_files",
                        lambda *a: pytest.fail("the hook's set was not compiled ahead"))  # fmt: skip


def test_init_compiles_the_hooks_policies_ahead(tmp_path, monkeypatch):
    from rtk_policy.commands import init

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    out, err = io.StringIO(), io.StringIO()
    args = SimpleNamespace(agent="claude", global_=True, serve=False, in_process=True)
    assert init.run(args, None, out, err) == 0, err.getvalue()
    assert "Policies compiled for the hook:" in out.getvalue()
    assert len(_sets(tmp_path / "cache")) == 1
    _no_compile(monkeypatch)
    assert load_policy_set(policy_search_path(str(tmp_path))).rules


def test_check_stores_the_search_paths_set_but_not_other_paths(tmp_path, monkeypatch):
    from rtk_policy.commands import check

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    out, err = io.StringIO(), io.StringIO()
    args = SimpleNamespace(paths=[PACKS], backend=None, config=None)
    assert check.run(args, None, out, err) == 0, err.getvalue()
    assert _sets(tmp_path / "cache") == []  # explicit paths: checked, not stored
    args = SimpleNamespace(paths=[], backend=None, config=None)
    assert check.run(args, None, out, err) == 0, err.getvalue()
    assert len(_sets(tmp_path / "cache")) == 1
    _no_compile(monkeypatch)
    assert load_policy_set(policy_search_path(str(tmp_path))).rules
