"""The deny re-check of a rewrite, and when it is skipped (`engine/recheck.py`): the proof's claim
about the shell stage checked on every input we have, its rule condition checked as an attacker
(deny rules that can see `rtk` must still deny), and what a guard form reads (`guards/reads.py`)."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest
from policy_helpers import write

from rtk_policy.engine import recheck
from rtk_policy.engine.pipeline import load_engine
from rtk_policy.engine.rewrite import replacements, splice
from rtk_policy.policy.guards.ir import guard_ir
from rtk_policy.policy.guards.reads import form_reads
from rtk_policy.shell import parse
from rtk_policy.util import record

ROOT = Path(__file__).resolve().parent.parent
POLICIES = ROOT / "policies"
_SPEC = importlib.util.spec_from_file_location("decision_dump", ROOT / "tools" / "decision_dump.py")
dump = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(dump)
sys.path.insert(0, str(ROOT / "benchmarks"))
from unique_commands import unique_commands  # noqa: E402

_COMMAND_FIELDS = (
    "parse_error", "has_substitution", "has_heredoc", "has_here_string", "has_file_redirect",
    "unattestable", "multiline", "rewrite_refused", "error",
)  # fmt: skip
_DENY = """name: {id}
kind: permission
rules:
  - id: {id}
    decision: deny
    {programs}
    match: '{match}'
    message: '"{id}"'
"""


@pytest.fixture(scope="module")
def engine():
    """The shipped packs, without the wall-clock decision budget: these tests compare decision
    paths (a traced evaluation is slower, and on a loaded machine it ran past 0.75 s and asked
    where the fast path denied); the budget has its own tests."""
    engine = load_engine(policy_paths=[str(POLICIES)])
    engine.budget_s = None
    return engine


def _context(engine, **fields):
    """The engine's context for Claude Code with `fields` (config fields too) set."""
    return record.evolve(engine.context(agent="claude"), **fields)


def _deny_engine(tmp_path, match: str, programs: str = "programs: [git]"):
    """The rewrite pack and one deny rule."""
    text = _DENY.format(id="deny-it", programs=programs, match=match)
    deny = write(tmp_path, "deny.yaml", text)
    return load_engine(policy_paths=[str(POLICIES / "rtk-rewrite.yaml"), deny])


def _inputs() -> list[str]:
    """The decision dump's inputs (corpus, test strings, RTK's cases), each also in the variant
    that keeps it rewritable (`( x ) ; x`), and 3,000 generated commands. (The whole dump, its 12
    variants of each input and 50,000 generated commands: no difference either, 2026-12-01.)"""
    base = dump.base_inputs(str(ROOT))
    texts = base + ["( " + text + " ) ; " + text for text in base]
    return texts + unique_commands(3000, seed=7)


def _differences(original, rewritten) -> set[str]:
    """The fields in which two parses differ: `command.F` and the segment fields by name."""
    found = {f"command.{name}" for name in _COMMAND_FIELDS
             if getattr(original, name) != getattr(rewritten, name)}  # fmt: skip
    if original.text != rewritten.text:
        found.add("command.text")
    if len(original.segments) != len(rewritten.segments):
        return found | {"command.segments (count)"}
    for old, new in zip(original.segments, rewritten.segments, strict=True):
        found |= {name for name in type(old).__slots__ if getattr(old, name) != getattr(new, name)}
    return found


def _enforced_denies(evaluation) -> list[str]:
    return [hit.rule.id for result in evaluation.results for hit in result.permission_hits
            if hit.rule.decision == "deny" and hit.rule.mode == "enforce"]  # fmt: skip


def test_an_rtk_insertion_changes_only_the_varying_facts_and_a_skipped_recheck_finds_no_deny(
    engine,
):
    """The proof's claim about the shell stage, on every input: where every replacement is its
    segment with `rtk ` inserted (`_only_rtk_inserted`), the rewrite's parse differs from the
    command's only in `VARYING`. And wherever the re-check is skipped, running it finds no deny,
    and the decision is the one explain (which always re-checks) gives."""
    allowed = set(recheck.VARYING_FIELDS) | {"command.text"}
    contexts = [
        engine.context(agent="claude", claude_allow=("git *",), claude_ask=("git push:*",)),
        _context(engine, transparent_prefixes=("direnv exec .", "noglob")),
    ]
    inserted = skipped = 0
    for text in _inputs():
        for context in contexts:
            outcome = engine.evaluate(text, context)
            line = outcome.command_line
            changed = replacements(line, outcome.evaluation) if outcome.decision.rewrite else None
            rewrite = splice(line, changed) if changed is not None else None
            if rewrite is None or rewrite == text:
                continue
            if recheck._only_rtk_inserted(line, changed, rewrite, context):
                inserted += 1
                rewritten = parse(rewrite, context.transparent_prefixes)
                assert _differences(line, rewritten) <= allowed, (text, rewrite)
            if not recheck.recheck_needed(
                line, outcome.evaluation, changed, rewrite, context, engine.policies
            ):
                skipped += 1
                rewritten = parse(rewrite, context.transparent_prefixes)
                again = engine.policies.evaluate(rewritten, context, deny_only=True)
                assert not _enforced_denies(again) or _enforced_denies(outcome.evaluation), text
                if skipped % 16 == 0:  # explain runs every rule through CEL: a sample
                    traced = engine.evaluate(text, context, trace=True).decision
                    assert traced == outcome.decision, text
    assert inserted > 5_000 and skipped > 5_000, (inserted, skipped)


@pytest.mark.parametrize(
    "match",
    [
        '"rtk" in segment.wrappers',
        'segment.prefix.startsWith("rtk")',
        'segment.match_text.startsWith("rtk ")',
        'segment.text.startsWith("rtk ")',
        '!segment.rewritable && segment.rewrite_refusal == "wrapper operand is rtk"',
        'command.text.startsWith("rtk ")',
        'command.segments.exists(s, s.prefix == "rtk ")',
        'command.segments[0].wrappers.exists(w, w == "rtk")',
        "segment.end > size(segment.command)",
        'tool.kind == "shell" && segment.subcommand == "status"',
    ],
)
def test_a_deny_rule_that_can_see_the_rtk_still_denies_the_rewrite(tmp_path, match):
    """The attacker's rules: a deny that only the rewritten command meets is found, because a
    rule reading a varying fact keeps the re-check."""
    engine = _deny_engine(tmp_path, match)
    command = "timeout 5 git status" if "rewritable" in match else "git status"
    decision = engine.decide(command, engine.context(agent="claude"))
    assert (decision.verdict, decision.rewrite) == ("deny", command.replace("git", "rtk git"))
    assert decision.reasons == ("deny-it",)


def test_a_rule_blind_to_rtk_lets_the_recheck_be_skipped(tmp_path):
    """The same rule on a fact `rtk ` does not change: the re-check is skipped (and would find
    nothing), the rewrite stands."""
    engine = _deny_engine(tmp_path, 'segment.args.exists(a, a == "--force")')
    context = engine.context(agent="claude")
    outcome = engine.evaluate("git status", context)
    line, evaluation = outcome.command_line, outcome.evaluation
    changed = replacements(line, evaluation)
    assert not recheck.recheck_needed(
        line, evaluation, changed, "rtk git status", context, engine.policies
    )
    assert outcome.decision.rewritten == "rtk git status"
    assert engine.decide("git push --force", context).verdict == "deny"


def test_a_claude_deny_rule_on_rtk_denies_the_rewrite(engine):
    """`claude-deny` reads the match text, which the rewrite changes: with a deny pattern the
    re-check runs (and finds `Bash(rtk:*)`); with none the rule cannot match and is left out."""
    denying = engine.context(agent="claude", claude_deny=("rtk:*",))
    decision = engine.decide("git status", denying)
    assert decision.verdict == "deny" and "Bash(rtk:*)" in decision.reasons[0]
    # without a deny pattern: Claude Code's read-only set allows it (claude-read-only)
    assert engine.decide("git status", engine.context(agent="claude")).verdict == "allow"
    blind = engine.policies.deny_blind_to
    assert blind(recheck.VARYING, "git", engine.context(agent="claude"))
    assert not blind(recheck.VARYING, "git", denying)
    assert blind(frozenset({"segment.wrappers"}), "git", denying)  # it reads the match text only


def test_a_disabled_rule_is_left_out_of_what_the_deny_rules_read(engine):
    """`disabled_rules` switch a rule off: what it reads no longer counts."""
    denying = engine.context(agent="claude", claude_deny=("rtk:*",))
    off = _context(engine, claude_deny=("rtk:*",), disabled_rules=("claude-deny",))
    assert not engine.policies.deny_blind_to(recheck.VARYING, "git", denying)
    assert engine.policies.deny_blind_to(recheck.VARYING, "git", off)


@pytest.mark.parametrize(
    ("command", "prefixes"),
    [
        ("git status", ("rtk git",)),  # a transparent prefix that takes the inserted word
        ("cat notes.txt", ()),  # `rtk read`: another program
        ("git \\\n  status", ()),  # RTK's normalisation joins the line
    ],
)
def test_a_rewrite_that_is_not_a_plain_insertion_is_rechecked(tmp_path, command, prefixes):
    """Where the rewrite's parse may differ in other facts, the re-check runs: a deny rule on the
    program the rewrite's parse would see (`status` under the prefix `rtk git`; `read`) is found,
    and where the parse sees the same program it is not."""
    engine = _deny_engine(tmp_path, 'segment.program in ["status", "read"]', programs="")
    context = _context(engine, transparent_prefixes=prefixes)
    outcome = engine.evaluate(command, context)
    line, evaluation = outcome.command_line, outcome.evaluation
    changed = replacements(line, evaluation)
    rewrite = splice(line, changed)
    assert rewrite and rewrite != command
    assert not recheck._only_rtk_inserted(line, changed, rewrite, context)
    assert recheck.recheck_needed(line, evaluation, changed, rewrite, context, engine.policies)
    expected = "deny" if prefixes or command.startswith("cat") else "none"
    assert outcome.decision.verdict == expected


@pytest.mark.parametrize(
    ("source", "reads"),
    [
        ('segment.program == "git"', {"segment.program"}),
        ("segment.pipeline.index > 0", {"segment.pipeline.index"}),
        ('segment.args.exists(a, a.startsWith("-"))', {"segment.args"}),
        ('command.segments.exists(s, s.program == "cd" && s.index < segment.index)',
         {"segments.program", "segments.index", "segment.index"}),
        ('command.segments[segment.parent].program == "xargs"',
         {"segment.parent", "segments.program"}),
        ("size(command.segments) > 2", {"command.segments"}),
        ('command.text.contains("cd")', {"command.text"}),
        ("claude.deny.exists(p, bash_rule_matches(p, segment.match_text))",
         {"claude", "segment.match_text"}),
        ('shell_join(segment.argv) == "x"', {"segment.argv"}),
        ('segment.args.exists(segment, segment == "x")', {"segment.args"}),
        ('rtk_norm(segment.command).matches("^git")', {"segment.command"}),
        ("tool.paths_written.exists(p, p.startsWith(ctx.cwd))", {"tool", "ctx"}),
    ],
)  # fmt: skip
def test_form_reads_names_every_fact_read(source, reads):
    """The paths of the reads, through comprehensions and indexes into `command.segments`."""
    assert form_reads(guard_ir(source)) == reads


def test_form_reads_is_none_where_the_form_is_not_known():
    """A part outside the guard subset (here an arithmetic index) hides what it reads."""
    assert form_reads(guard_ir("segment.args[size(segment.args) - 1] == 'x'")) is None
    assert form_reads(("unknown",)) is None


def test_the_shipped_deny_rules_are_blind_to_rtk_for_most_programs(engine):
    """With no Claude Code deny rule, only the rules of rm (which reads `command.text`) and mv (a
    form the guards do not know) see an `rtk` insertion; git, npm, cargo … do not."""
    context = engine.context(agent="claude")
    blind = engine.policies.deny_blind_to
    for program in ("git", "npm", "cargo", "ls", "grep", "pytest", "docker", "curl"):
        assert blind(recheck.VARYING, program, context), program
    assert not blind(recheck.VARYING, "rm", context)
    assert not blind(recheck.VARYING, "mv", context)
    assert blind(frozenset({"segment.wrappers"}), "rm", context)


def test_the_engine_gives_the_same_decision_as_before_on_the_batch_corpus(engine, tmp_path):
    """End to end: `rewrite --batch` answers equal `evaluate(trace=True)`'s decisions (explain
    always re-checks) on generated commands, with and without Claude Code deny rules."""
    from rtk_policy.engine.answers import batch_answer

    for rules in ({}, {"claude_deny": ("rtk:*", "git push:*")}):
        context = engine.context(agent="claude", **rules)
        for text in unique_commands(2000, seed=11):
            fast = batch_answer(engine.decide(text, context))
            assert fast == batch_answer(engine.evaluate(text, context, trace=True).decision), text
    assert os.path.exists(POLICIES / "rtk-rewrite.yaml")
