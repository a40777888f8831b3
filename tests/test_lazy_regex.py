"""Module regexes compiled on first use (`lazy_re.py`) and the regex-free path of the plain-command
splitter (`plainpath._single_command`): both must give exactly what the compiled regexes give."""

from __future__ import annotations

import random
import re

import pytest

from rtk_policy.util.lazy_re import LazyPattern, lazy
from rtk_policy.shell import plainpath

#: characters the generator draws from: the single-command alphabet and what leaves it
_ALPHABET = "gitsaxl-=._/:,+@%~ \t\t*?'\"|;&>2<$\\\n#é"


def _regex_commands(text: str, monkeypatch: pytest.MonkeyPatch) -> object:
    with monkeypatch.context() as patch:
        patch.setattr(plainpath, "_single_command", lambda text, not_single=False: None)
        return plainpath.commands(text)


def test_lazy_pattern_compiles_once_and_rebinds_the_global() -> None:
    namespace: dict[str, object] = {}
    namespace["_X"] = lazy(namespace, "_X", r"a(b+)", re.IGNORECASE)
    stand_in = namespace["_X"]
    assert isinstance(stand_in, LazyPattern)
    assert stand_in.fullmatch("ABB")[1] == "BB"  # type: ignore[attr-defined]
    assert isinstance(namespace["_X"], re.Pattern)
    assert namespace["_X"] is stand_in.compiled()  # type: ignore[attr-defined]
    assert stand_in.pattern == "a(b+)"  # a kept reference still works


@pytest.mark.parametrize(
    "text",
    ["git status", "  git\tstatus  ", "ls -la src/", "make a=b", "./x.sh --k=v,w:1 @f %p ~/d +x",
     "time ls", "-x y", "a=b ls", "ls =x", "ls", "git status;", "", "   ", "ls *", "echo 'a'",
     "for x", "if", "a+b c", "x:y z"],
)  # fmt: skip
def test_single_command_agrees_with_the_regexes(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = _regex_commands(text, monkeypatch)
    single = plainpath._single_command(text)
    if single is not None:
        assert single == expected
    assert plainpath.commands(text) == expected


def test_single_command_agrees_on_random_sources(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(7)
    taken = 0
    for _ in range(4000):
        text = "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(1, 14)))
        single = plainpath._single_command(text)
        if single is not None:
            taken += 1
            assert single == _regex_commands(text, monkeypatch), text
    assert taken > 100  # the generator reaches the regex-free path often
