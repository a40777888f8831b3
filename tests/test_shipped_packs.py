"""Every shipped pack is there, or every answer asks: a damaged or altered install (a pack file
deleted, the folder gone) never turns what the missing pack held into a quiet "no opinion", in
the hook's layered load, in `check` (strict) or in a team's "shipped packs plus ours" (`with_shipped`).
The installed hook itself is driven by `test_broken_install.test_a_missing_shipped_pack_…`."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from rtk_policy.engine.pipeline import load_engine
from rtk_policy.policy import PolicyLoadError
from rtk_policy.policy import load as policy_load
from rtk_policy.policy.load import (
    MISSING_PACK,
    SHIPPED_PACKS,
    expand_paths,
    packs_dir,
    shipped_pack_files,
    with_shipped,
)

OWN = """name: team
kind: permission
rules:
  - id: team-no-curl
    description: the team asks before curl
    decision: ask
    match: segment.program == "curl"
"""


def test_the_list_names_every_pack_file_shipped() -> None:
    """`SHIPPED_PACKS` and the packs folder hold the same files: a pack added without being
    listed (or listed and not shipped) fails here, not in a user's install."""
    shipped = sorted(os.path.basename(path) for path in expand_paths([str(packs_dir())]))
    assert shipped == sorted(SHIPPED_PACKS)
    assert shipped_pack_files() == (expand_paths([str(packs_dir())]), [])


@pytest.fixture()
def damaged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The shipped packs as an install whose security baseline was deleted."""
    packs = tmp_path / "packs"
    shutil.copytree(str(packs_dir()), packs)
    (packs / "security-baseline.yaml").unlink()
    monkeypatch.setattr(policy_load, "packs_dir", lambda: str(packs))
    return packs


def test_a_missing_pack_makes_the_layered_engine_ask(damaged: Path, tmp_path: Path) -> None:
    """The hook's load: what the other packs say stands (a deny stays a deny), everything else
    asks, the missing pack named first among the reasons."""
    engine = load_engine(cwd=str(tmp_path))
    for command in ("rm -rf /", "git status", "ls"):
        decision = engine.decide(command, engine.context(cwd=str(tmp_path)))
        assert decision.verdict in ("ask", "deny"), (command, decision)
        reason = decision.reasons[0] if decision.verdict == "ask" else decision.warnings[0]
        assert f"{damaged / 'security-baseline.yaml'}: {MISSING_PACK}" in reason


def test_no_packs_folder_at_all_names_every_pack(monkeypatch: pytest.MonkeyPatch,
                                                 tmp_path: Path) -> None:  # fmt: skip
    """No folder found: each pack is missing, and the engine asks."""
    monkeypatch.setattr(policy_load, "packs_dir", lambda: None)
    files, missing = shipped_pack_files()
    assert files == [] and sorted(os.path.basename(p.file) for p in missing) == sorted(SHIPPED_PACKS)
    engine = load_engine(cwd=str(tmp_path))
    assert engine.decide("rm -rf /", engine.context(cwd=str(tmp_path))).verdict == "ask"


def test_check_fails_on_a_missing_pack(damaged: Path, tmp_path: Path) -> None:
    """The strict load (`check`, `test`, replay) raises, naming the file."""
    with pytest.raises(PolicyLoadError) as raised:
        load_engine(cwd=str(tmp_path), strict=True)
    assert [p.file for p in raised.value.problems] == [str(damaged / "security-baseline.yaml")]


def test_the_shipped_packs_plus_ours_fail_without_a_pack(damaged: Path, tmp_path: Path) -> None:
    """A team's pin (`with_shipped`: the pytest plugin, `replay --policies`) names the missing
    pack among its paths, so its strict load fails instead of pinning no opinion."""
    own = tmp_path / "team.yaml"
    own.write_text(OWN)
    paths = with_shipped([str(own)])
    assert str(damaged / "security-baseline.yaml") in paths and paths[-1] == str(own)
    with pytest.raises(PolicyLoadError, match="security-baseline.yaml"):
        load_engine(paths, strict=True)


def test_the_whole_pack_set_with_ours_still_loads(tmp_path: Path) -> None:
    """The undamaged install: the shipped files, then ours; `rm -rf /` is denied, curl asked."""
    own = tmp_path / "team.yaml"
    own.write_text(OWN)
    paths = with_shipped([str(own), str(packs_dir())])  # the packs folder given again: once
    assert paths == [packs_dir(), str(own)]
    engine = load_engine(paths, strict=True)
    context = engine.context(cwd=str(tmp_path))
    assert engine.decide("rm -rf /", context).verdict == "deny"
    assert engine.decide("curl example.com", context).verdict == "ask"
