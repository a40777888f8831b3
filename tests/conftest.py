"""Shared test setup: every test runs with its own state and config folders, so nothing reads or writes
the developer's real audit log, config or Claude Code settings. The compiled-policy cache is shared by the
whole session (it is keyed by content, so sharing it is safe and keeps the suite fast).

In-process decisions run without the wall-clock budget (`engine/budget.py`): a test judges what
the policies say, not how loaded the machine is (under load a first decision can pass 0.75 s and
ask). A module that tests the budget, or needs it to bound its time, is marked `budget`.

RTK is installed for every test: a stub `rtk` (it prints its version, `FAKE_RTK_VERSION`) comes first
on PATH, as a user who installed RTK has it, so `rewrite = "auto"` rewrites. A test about RTK being
absent removes it from PATH itself."""

from __future__ import annotations

import os

import pytest
from writer_fixtures import nobody_writer, same_user_writer  # noqa: F401 - shared fixtures


@pytest.fixture(scope="session")
def _session_cache(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("cache"))


FAKE_RTK_VERSION = "rtk 0.40.0"


@pytest.fixture(scope="session")
def fake_rtk_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A folder holding a stub `rtk` executable that prints `FAKE_RTK_VERSION` and its arguments."""
    folder = tmp_path_factory.mktemp("rtk-bin")
    stub = folder / "rtk"
    stub.write_text(f'#!/bin/sh\nif [ "$1" = --version ]; then echo "{FAKE_RTK_VERSION}"; '
                    'else echo "rtk $*"; fi\n', encoding="utf-8")
    stub.chmod(0o755)
    return str(folder)


@pytest.fixture(autouse=True)
def _no_time_budget(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """No deadline for in-process decisions, unless the test is marked `budget`."""
    if request.node.get_closest_marker("budget") is None:
        from rtk_policy.engine import pipeline

        monkeypatch.setattr(pipeline, "deadline", lambda budget_s: None)


@pytest.fixture(autouse=True)
def _isolated_environment(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path_factory: pytest.TempPathFactory,
    _session_cache: str,
    fake_rtk_dir: str,
) -> None:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("XDG_STATE_HOME", str(home / "state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / "claude"))
    monkeypatch.setenv("XDG_CACHE_HOME", _session_cache)
    monkeypatch.delenv("RTK_REWRITE_HOST", raising=False)
    monkeypatch.delenv("RTK_POLICY_BACKEND", raising=False)
    monkeypatch.setenv("PATH", fake_rtk_dir + os.pathsep + os.environ.get("PATH", ""))
    monkeypatch.delenv("RTK_POLICY_FAIL", raising=False)
    # the managed layer is a fixed system folder: in-process tests never read the machine's own
    from rtk_policy.config import paths

    monkeypatch.setattr(paths, "MANAGED_DIR", str(home / "no-managed-layer"))
    # the audit log an earlier test's config placed (under /tmp) is no guarded state of this one
    guarded = __import__("sys").modules.get("rtk_policy.policy.guarded")
    if guarded is not None:
        guarded.remember_configured()


SNAPSHOTS = __import__("pathlib").Path(__file__).resolve().parents[1] / "snapshots"


@pytest.fixture(scope="module")
def engine():
    """The shipped packs (`packs_dir()`, wherever the install lives), audit off: once a module.
    A module that needs another engine defines its own `engine` fixture."""
    from rtk_policy.config.load import Config
    from rtk_policy.engine.pipeline import Engine
    from rtk_policy.policy import load_policy_set
    from rtk_policy.policy.load import packs_dir

    return Engine(load_policy_set([packs_dir()]), Config(audit_enabled=False))


@pytest.fixture
def repo_snapshot(snapshot, request: pytest.FixtureRequest):
    """A syrupy JSON snapshot stored in the repository's `snapshots/<test module>/` folder."""
    from syrupy.extensions.json import JSONSnapshotExtension

    folder = str(SNAPSHOTS / request.module.__name__.rpartition(".")[2])

    class RepoSnapshot(JSONSnapshotExtension):
        @classmethod
        def dirname(cls, *, test_location: object) -> str:
            return folder

    return snapshot.use_extension(RepoSnapshot)


def private_folders(tmp_path) -> dict[str, str]:
    """Fresh HOME, XDG config/state and runtime folders under `tmp_path`, as environment values."""
    folders = {}
    for name, sub in (
        ("HOME", "home"),
        ("XDG_CONFIG_HOME", "config"),
        ("XDG_STATE_HOME", "state"),
        ("XDG_RUNTIME_DIR", "run"),
    ):
        (tmp_path / sub).mkdir()
        folders[name] = str(tmp_path / sub)
    return folders


def install_in_tmp() -> bool:
    """Whether this rtk-policy runs from under /tmp (a virtualenv made with `mktemp -d`, as CI's
    interpreter matrix makes them): its install is the guard's own state then, so guard-self
    rightly asks before `rm -rf /tmp/*`, which would delete it."""
    return any(place.startswith("/tmp/") for place in _install_places())


def _install_places() -> tuple[str, ...]:
    """Where this rtk-policy's interpreter prefix and package live (real paths)."""
    import sys

    import rtk_policy

    return tuple(os.path.realpath(p) for p in (sys.prefix, os.path.dirname(rtk_policy.__file__)))


def install_in_mktemp_folder() -> bool:
    """Whether this rtk-policy runs from a folder a bare `mktemp -d` could have made
    (/tmp/tmp.XXXXXXXXXX): the guard cannot tell a new `$(mktemp -d)` folder from it then."""
    import re

    return any(re.match(r"/tmp/tmp\.[^/]+(/|$)", place) for place in _install_places())


def guard_names_in_tmp() -> list[str]:
    """The entries of /tmp and of its folders that `/tmp/*` and `/tmp/*/*` match now (no hidden
    ones: `*` skips them) named like the first part of a place the guard keeps anywhere
    (`guarded.ANYWHERE`: `rtk-policy/config.toml`, `rtk_policy/packs`, ...): another process's
    runtime folder (`$XDG_RUNTIME_DIR/rtk-policy` with that variable under /tmp) or a clone of this
    repository there is one. `rm -rf /tmp/*` rightly asks while one is there."""
    import glob

    from rtk_policy.policy.guarded import ANYWHERE

    firsts = {entry.path.split("/")[0] for entry in ANYWHERE}
    reached = glob.glob("/tmp/*") + glob.glob("/tmp/*/*")
    return sorted(path for path in reached if os.path.basename(path) in firsts)


def whole_tmp_verdicts(globbed: bool = True) -> set[str]:
    """What deleting all of /tmp may get now when nothing of the guard's is in /tmp but (maybe)
    the install (`install_in_tmp`: always an ask) or what `guard_names_in_tmp` finds, which /tmp
    is shared with: a glob of its entries (`rm -rf /tmp/*` reaches into them) asks when such an
    entry is among the first `paths.GLOB_LIMIT` matches, so either answer is right then (the
    hermetic `test_a_temp_folder_holds_what_its_entries_hold` pins the rule itself)."""
    if install_in_tmp():
        return {"ask"}
    return {"ask", "none"} if globbed and guard_names_in_tmp() else {"none"}


#: what deleting a bare `mktemp` folder gets: asked while the install is such a folder itself
MKTEMP_VERDICT = "ask" if install_in_mktemp_folder() else "none"
#: a `mktemp` without a template: its folder is some new /tmp/tmp.*, like such an install
BARE_MKTEMP = __import__("re").compile(r"mktemp( -d)?[)`]")
