"""Guards specialised to a program (`policy/specialize.py`) answer as the generic guard does."""

from __future__ import annotations

from pathlib import Path

import pytest

from rtk_policy.engine.pipeline import load_engine
from rtk_policy.policy.facts import command_value, context_values, segment_value
from rtk_policy.policy.guards.guard import UNKNOWN, build_guard, guard_functions
from rtk_policy.policy.guards.ir import guard_ir
from rtk_policy.policy.guards.specialize import specialize
from rtk_policy.policytest.plugin import read_corpus
from rtk_policy.shell import parse

FUNCTIONS = guard_functions()
CORPUS = Path(__file__).resolve().parent / "corpus"
COMMANDS = [
    *read_corpus(CORPUS / "commands.txt"),
    *read_corpus(CORPUS / "multiline.jsonl"),
    *read_corpus(CORPUS / "bypass.jsonl"),
]


def _residual(source: str, program: str) -> tuple:
    return specialize(guard_ir(source), program, FUNCTIONS)


@pytest.mark.parametrize(
    ("source", "program", "expected"),
    [
        ('segment.program == "git" && segment.args.exists(a, a == "x")', "ls", ("lit", False)),
        ('segment.program == "git" || segment.program == "ls"', "ls", ("lit", True)),
        ('!(segment.program in ["rm", "mv"]) && size(segment.args) > 2', "rm", ("lit", False)),
        ('segment.program.matches("^(rm|shred)$") && true', "shred", ("lit", True)),
        ('segment.program.startsWith("py") && false', "python", ("lit", False)),
    ],
)
def test_program_tests_fold_to_constants(source: str, program: str, expected: tuple) -> None:
    assert _residual(source, program) == expected


def test_residual_keeps_what_depends_on_the_segment() -> None:
    residual = _residual('segment.program == "git" && segment.subcommand == "push"', "git")
    assert residual[0] == "rel" and residual[2] == ("dot", ("ident", "segment"), "subcommand")


def test_a_comprehension_variable_named_segment_is_not_replaced() -> None:
    source = 'command.segments.exists(segment, segment.program == "curl")'
    residual = _residual(source, "ls")
    assert residual[0] == "exists"  # the body speaks of the bound variable, not of this segment
    env = {"command": {"segments": [{"program": "curl"}]}, "segment": {"program": "ls"}}
    assert build_guard(residual, FUNCTIONS)(env) is True


def test_functions_reading_the_environment_are_not_folded() -> None:
    residual = _residual('path_under(segment.program, "~/bin")', "x")
    assert residual[0] == "call"


def test_shipped_rules_specialised_agree_with_the_generic_guard() -> None:
    """Every corpus segment × each rule tried on it: the residual gives the generic guard's answer."""
    engine = load_engine()
    policies = engine.policies
    context = engine.context(agent="claude")
    irs = [c.guard for c in policies.compiled_rules]
    generic = [build_guard(ir, FUNCTIONS) for ir in irs]
    compared = 0
    specialised: dict[tuple[int, str], object] = {}
    for text in COMMANDS:
        line = parse(text)
        maps = [segment_value(s, None) for s in line.segments]
        env = {"command": command_value(line, maps), **context_values(context)}
        for segment, segment_map in zip(line.segments, maps, strict=True):
            env["segment"] = segment_map
            for index in policies.candidates(segment.program):
                ir, guard = irs[index], generic[index]
                if guard is None:
                    continue
                key = (index, segment.program)
                if key not in specialised:
                    residual = specialize(ir, segment.program, FUNCTIONS)
                    specialised[key] = build_guard(residual, FUNCTIONS)
                special = specialised[key]
                want, got = guard(env), special(env) if special is not None else UNKNOWN
                assert want is UNKNOWN or got == want, (text, ir)
                compared += 1
    assert compared > 50_000


def test_subtrees_reading_other_variables_are_not_folded_as_program_tests() -> None:
    residual = _residual('re_find(segment.program, segment.command) == "x"', "git")
    assert residual[0] == "rel"  # segment.command is unknown until run time
    residual = _residual('segment.program in [segment.subcommand, "git"] && false || true', "ls")
    assert residual == ("lit", True)


def test_programs_with_the_same_test_values_share_a_signature() -> None:
    from rtk_policy.policy.guards.specialize import Specializer

    specializer = Specializer(FUNCTIONS)
    ir = guard_ir('segment.program in ["rm", "mv"] && segment.args.exists(a, a == "/")')
    assert specializer.signature(ir, "ls") == specializer.signature(ir, "cat") == (False,)
    assert specializer.signature(ir, "rm") == (True,)
    outside = guard_ir('segment.args.exists(a, a == segment.program)')
    assert specializer.signature(outside, "ls") == ("ls",)  # read outside a test: no sharing


def test_program_read_as_the_first_operand_of_a_call_or_list_is_folded() -> None:
    assert _residual('segment.program in ["ls", "cat"] && true', "ls") == ("lit", True)
    assert _residual('basename(segment.program) == "git" && false', "x") == ("lit", False)
    assert _residual('basename(segment.program) == "git"', "/usr/bin/git") == ("lit", True)


def test_a_rule_kept_for_one_program_is_kept_for_others_with_its_test_values(monkeypatch) -> None:
    """A rule that reads `segment.program` outside its tests (fork-bomb) has a residual of its own
    per program; once kept for one program it is kept for the next with the same test values
    without specialising again, with the rule's own guard. A dropped rule is never shared: a
    program whose tests make it `false` still drops it."""
    from rtk_policy.policy.guards import specialize as module
    from rtk_policy.policy.guards.plans import Planner

    engine = load_engine(policy_paths=[str(Path(__file__).resolve().parent.parent / "policies")])
    compiled = engine.policies.compiled_rules
    planner = Planner(compiled, FUNCTIONS)
    fork_bomb = next(i for i, c in enumerate(compiled) if c.rule.id == "fork-bomb")
    calls: list[str] = []
    real = module.Specializer.specialize

    def counting(self, ir, program):
        calls.append(program)
        return real(self, ir, program)

    monkeypatch.setattr(module.Specializer, "specialize", counting)
    first, second = planner.plan("aaprog"), planner.plan("bbprog")
    steps = {index: guard for index, guard in second}
    assert fork_bomb in dict(first) and fork_bomb in steps
    assert steps[fork_bomb] is planner._generic_guard(fork_bomb)
    assert calls.count("bbprog") < calls.count("aaprog")  # the kept rules were not redone
    rule = compiled[fork_bomb].guard
    kept = planner._kept_key(fork_bomb, rule, "bbprog")
    assert planner._residuals[kept][0] is rule  # only kept steps are shared
    assert all(step[0] != ("lit", False) for key, step in planner._residuals.items()
               if len(key) == 3 and key[1] == "kept")  # fmt: skip
