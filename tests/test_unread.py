"""A command the shell stage fails on without recovering a segment is never "no opinion": an
internal error in the walk (here forced in the walker's per-command hook, as a bug would raise it)
makes it an ask that says why, a deny under `fail_mode = "deny"`, and never a rewrite. Found when a
merge left the alias reader calling a removed attribute: `alias r=rm; r -rf /` got no opinion."""

from __future__ import annotations

import pytest

from rtk_policy.config.load import Config
from rtk_policy.engine.pipeline import Engine
from rtk_policy.policy import load_policy_set
from rtk_policy.policy.load import packs_dir
from rtk_policy.shell.values_walk import ValuesMixin
from rtk_policy.util import record

COMMANDS = ["echo $(rm -rf /)", "alias r=rm; r -rf /", "cd /tmp && ls", "x=1; ls \"$x\""]


def _broken(self, *args, **kwargs):
    raise AttributeError("a bug in the walk")


@pytest.fixture
def engine(monkeypatch) -> Engine:
    """The shipped packs, with every command's walk failing."""
    packs = load_policy_set([str(packs_dir())])
    engine = Engine(policies=packs, config=Config(audit_enabled=False))
    monkeypatch.setattr(ValuesMixin, "after_emit", _broken)
    return engine


@pytest.mark.parametrize("command", COMMANDS)
def test_an_unread_command_is_asked(engine, command):
    """Asked (or denied by a rule on what was recovered), never rewritten."""
    decision = engine.decide(command, engine.context(cwd="/home/dev/project"))
    if decision.verdict != "deny":  # a recovered segment may still be denied by its own rule
        assert decision.verdict == "ask", decision
    assert decision.rewritten is None


@pytest.mark.parametrize("command", COMMANDS)
def test_the_deny_fail_mode_denies_it(engine, command):
    """Under `fail_mode = "deny"` the unread command is denied."""
    strict = record.evolve(engine, config=record.evolve(engine.config, fail_mode="deny"))
    decision = strict.decide(command, strict.context(cwd="/home/dev/project"))
    assert decision.verdict == "deny", decision


def test_blank_input_stays_without_opinion(engine):
    """Nothing to read is not an error."""
    assert engine.decide("   ", engine.context()).verdict == "none"
