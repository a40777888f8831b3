"""Plans stored in the compiled cache (`plan_store.py`) give exactly what plans specialised at run
time give: the same rules per program, the same guard answers and the same evaluations."""

from __future__ import annotations

from pathlib import Path

import pytest

from rtk_policy.engine.pipeline import Engine, load_engine
from rtk_policy.policy import load_policy_set, policy_search_path
from rtk_policy.policy.facts import command_value, context_values, segment_value
from rtk_policy.policy.functions_rtk import rtk_norm_begins_with
from rtk_policy.policy.guards.guard import UNKNOWN
from rtk_policy.policy.guards.plan_store import GENERIC
from rtk_policy.policytest.plugin import read_corpus
from rtk_policy.shell import parse

CORPUS = Path(__file__).parent / "corpus" / "commands.txt"


@pytest.fixture(scope="module")
def engines() -> tuple[Engine, Engine]:
    """An engine whose policies come from the cache (stored plans) and one compiled without it."""
    load_engine()  # may compile and write the cache
    stored = load_engine()  # reads it
    plain = load_policy_set(policy_search_path(), use_cache=False)
    return stored, Engine(policies=plain, config=stored.config)


def test_the_cache_holds_the_plans_of_every_indexed_program(engines) -> None:
    stored, plain = engines
    tables = stored.policies._planner._tables
    assert tables is not None and plain.policies._planner._tables is None
    indexed = {p for c in stored.policies.compiled_rules for p in c.index}
    assert set(tables.steps) == indexed
    rules = len(stored.policies.rules)
    codes = [code for program in tables.steps for code in tables.pairs(program, rules)[1::2]]
    assert GENERIC in codes and max(codes) == len(tables.residuals) - 1


def test_stored_plans_try_the_same_rules(engines) -> None:
    stored, plain = engines
    for program in stored.policies._planner._tables.steps:
        mine = [index for index, _ in stored.policies._planner.plan(program)]
        theirs = [index for index, _ in plain.policies._planner.plan(program)]
        assert mine == theirs, program


def test_stored_guards_give_the_specialised_answers_on_the_corpus(engines) -> None:
    stored, plain = engines
    context = stored.context(agent="claude")
    compared = 0
    for text in read_corpus(CORPUS):
        line = parse(text)
        maps = [segment_value(s, None) for s in line.segments]
        env = {"command": command_value(line, maps), **context_values(context)}
        for segment, segment_map in zip(line.segments, maps, strict=True):
            env["segment"] = segment_map
            mine = _plan(stored, segment)
            theirs = dict(_plan(plain, segment))
            for index, guard in mine:
                got = guard(env) if guard is not None else UNKNOWN
                if index not in theirs:  # left out by a first-word fold: false for the segment
                    assert got is False, (text, index)  # (the stored engine folds later)
                    continue
                other = theirs[index]
                want = other(env) if other is not None else UNKNOWN
                assert got is want or got == want, (text, index)
                compared += 1
    assert compared > 20_000


def _plan(engine: Engine, segment) -> tuple:
    """The plan the engine tries on `segment` (`PolicySet._segment`)."""
    planner = engine.policies._planner
    if rtk_norm_begins_with(segment.command, segment.program):
        return planner.plan(segment.program)
    return planner.unfolded(segment.program, False)


def test_stored_plans_evaluate_the_corpus_alike(engines) -> None:
    stored, plain = engines
    context = stored.context(agent="claude")
    for text in read_corpus(CORPUS):
        mine = stored.evaluate(text, context)
        theirs = plain.evaluate(text, context)
        assert mine.decision == theirs.decision, text
        assert mine.evaluation.results == theirs.evaluation.results, text
        assert mine.evaluation.errors == theirs.evaluation.errors
