"""Aliases an input defines itself (`shell/aliases.py`): a later command that starts with one runs
as the alias's text (bash with `expand_aliases` on, checked in bash 5.2 with echo in rm's place),
so a deny of what it makes is never lost; quoting the name, `unalias`, or no use leaves it alone."""

from __future__ import annotations

import pytest

from rtk_policy.config.load import Config
from rtk_policy.engine.pipeline import Engine
from rtk_policy.policy import load_policy_set
from rtk_policy.policy.load import packs_dir


@pytest.fixture(scope="module")
def engine() -> Engine:
    """The shipped packs, audit off."""
    return Engine(load_policy_set([str(packs_dir())]), Config(audit_enabled=False))


def _verdict(engine: Engine, text: str) -> str:
    return engine.decide(text, engine.context()).verdict


@pytest.mark.parametrize(
    "text",
    [
        "shopt -s expand_aliases\nalias r=rm\nr -rf /",
        "alias r=rm\nr -rf /",
        "alias del='rm -rf'\ndel /",
        "alias d='cd /; rm -rf *'\nd",
        "alias r=rm; r -rf /",  # same line: bash would not expand it; judged as if, in doubt
        "alias x=y y=rm\nx -rf /",
        "alias r=rm\nsudo true; r -rf /",
    ],
)
def test_a_command_an_alias_makes_is_judged(engine, text):
    assert _verdict(engine, text) == "deny"


@pytest.mark.parametrize(
    "text",
    [
        "alias r=rm\nunalias r\nr -rf /",  # removed again: `r` is a program of its own
        "alias r=rm\n'r' -rf /",  # a quoted name is never an alias
        "alias ll='ls -la'\nll",
        "alias ls='ls --color'\nls",  # an alias of its own name is expanded once
        "alias r=rm",
    ],
)
def test_no_alias_use_or_a_safe_one_is_not_denied(engine, text):
    assert _verdict(engine, text) != "deny"


def test_a_command_starting_with_an_alias_is_not_rewritten(engine):
    decision = engine.decide("alias ls='ls --color'\nls", engine.context())
    assert decision.rewritten is None, decision
    assert engine.decide("ls", engine.context()).rewritten == "rtk ls"  # without the alias it is
