"""Config files parsed once (`config/parsed.py`): the same config from the cache, no `tomllib` on
the second cold load, and an entry that lies is used only where a user's own file could say it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from rtk_policy.config import parsed, paths
from rtk_policy.config.load import load_config

USER_TOML = b'exclude_commands = ["curl"]\nfail_mode = "closed"\n[audit]\nenabled = false\n'


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A cache folder of this test's own (entries are forged in it)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "rtk-policy"


def _user_config(data: bytes) -> None:
    folder = paths.user_config_dir()
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.toml"), "wb") as handle:
        handle.write(data)


def _forge(data: bytes, keys: object) -> None:
    path = parsed.entry_path(data)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        json.dump({"format": parsed.FORMAT, "keys": keys}, handle)


def test_the_cached_keys_give_the_same_config(cache, tmp_path):
    _user_config(USER_TOML)
    first = load_config(cwd=str(tmp_path))
    assert os.path.exists(parsed.entry_path(USER_TOML))
    second = load_config(cwd=str(tmp_path))
    assert second == first
    assert first.exclude_commands == ("curl",) and first.fail_mode == "closed"


def test_a_second_cold_load_does_not_import_tomllib(cache, tmp_path):
    _user_config(USER_TOML)
    code = (
        "import sys\nfrom rtk_policy.config.load import load_config\n"
        "config = load_config(cwd=sys.argv[1])\n"
        "print('tomllib' in sys.modules, config.exclude_commands)"
    )
    runs = [
        subprocess.run([sys.executable, "-c", code, str(tmp_path)], env=dict(os.environ),
                       capture_output=True, text=True, check=True).stdout.split(maxsplit=1)
        for _ in range(2)
    ]  # fmt: skip
    assert runs == [["True", "('curl',)\n"], ["False", "('curl',)\n"]]


def test_an_edited_file_is_parsed_again(cache, tmp_path):
    _user_config(USER_TOML)
    load_config(cwd=str(tmp_path))
    _user_config(USER_TOML.replace(b'"curl"', b'"wget"'))
    assert load_config(cwd=str(tmp_path)).exclude_commands == ("wget",)


@pytest.mark.parametrize(
    "entry",
    [
        {"format": parsed.FORMAT, "keys": {"fail_mode": "whatever"}},  # fails the checks
        {"format": parsed.FORMAT, "keys": {"no_such_key": 1}},
        {"format": parsed.FORMAT, "keys": {"audit": ["not", "a", "table"]}},
        {"format": parsed.FORMAT, "keys": ["not", "a", "table"]},
        {"format": 999, "keys": {"fail_mode": "open"}},
        "not an object",
    ],
)
def test_an_entry_that_does_not_check_is_parsed_again(cache, tmp_path, entry):
    _user_config(USER_TOML)
    path = parsed.entry_path(USER_TOML)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(entry, handle)
    config = load_config(cwd=str(tmp_path))
    assert config.fail_mode == "closed" and config.exclude_commands == ("curl",)
    assert not config.problems


def test_a_damaged_entry_is_parsed_again(cache, tmp_path):
    _user_config(USER_TOML)
    path = parsed.entry_path(USER_TOML)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(b'{"format": 1, "keys": {"fail_mo')
    assert load_config(cwd=str(tmp_path)).fail_mode == "closed"


def test_a_forged_entry_never_changes_the_managed_config(cache, tmp_path, monkeypatch):
    managed = tmp_path / "managed"
    managed.mkdir()
    data = b'fail_mode = "deny"\nlocked_rules = ["claude-deny"]\n'
    (managed / "config.toml").write_bytes(data)
    monkeypatch.setattr(paths, "MANAGED_DIR", str(managed))
    monkeypatch.setattr(paths, "MANAGED_OWNER_UID", os.getuid())
    _forge(data, {"fail_mode": "open"})  # what an agent writing the cache would want
    config = load_config(cwd=str(tmp_path))
    assert config.fail_mode == "deny" and config.locked_rules == ("claude-deny",)


def test_a_forged_entry_of_the_users_file_is_what_editing_it_could_say(cache, tmp_path):
    # the stance of `parsed.py` (and of the compiled cache): the cache folder is as writable as the
    # user's config folder, so an entry may say what the file itself could; guard-self asks for both
    _user_config(USER_TOML)
    _forge(USER_TOML, {"exclude_commands": ["wget"]})
    assert load_config(cwd=str(tmp_path)).exclude_commands == ("wget",)


def test_a_toml_date_is_parsed_every_time_and_never_kept(cache, tmp_path):
    parsed.remember(b"x", {"when": __import__("datetime").date(2026, 12, 1)})
    assert not os.path.exists(parsed.entry_path(b"x"))


def test_old_entries_are_removed_beyond_keep(cache):
    for number in range(parsed.KEEP + 5):
        parsed.remember(b"n = %d" % number, {"n": number})
    names = [n for n in os.listdir(cache) if n.startswith("config-")]
    assert len(names) == parsed.KEEP
    assert parsed.remembered(b"n = %d" % (parsed.KEEP + 4)) == {"n": parsed.KEEP + 4}
