"""First-word tests (`guards/first_word.py`): `rtk_norm(segment.command).matches(R)` is false for a
program that cannot begin a text R matches, so the rule is left out of that program's plan; the
plan holds for the segments whose normal form begins with their program
(`functions_rtk.rtk_norm_begins_with`), the others are planned without the fold."""

from __future__ import annotations

import itertools
import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rtk_policy.engine.pipeline import load_engine
from rtk_policy.policy import load_policy_set, policyset
from rtk_policy.policy.functions_rtk import rtk_norm, rtk_norm_begins_with
from rtk_policy.policy.guards.first_word import cannot_begin
from rtk_policy.policy.guards.specialize import first_word_pattern
from rtk_policy.policy.load import packs_dir
from rtk_policy.policy.regex import searcher
from rtk_policy.shell import parse

BLANKS = (" ", "\t", "\n")
#: what may follow the word and its blank in the texts tried by brute force
TAILS = (
    "", "x", "-m pytest", "run", "exec vitest", "vitest", "pytest", "build", "dlx prisma",
    "x y", "\n", "$", " ", "-", "--version", "jest run", "tsc -p .", "status", "git", "a\nb",
)  # fmt: skip
#: the runner prefix of the shipped JavaScript rules
RUNNER = (
    r"^(?:(?:p?np(?:m|x)|p?npm[ \t\n]+(?:exec|run|run-script)|npm[ \t\n]+(?:rum|urn|x)"
    r"|pnpm[ \t\n]+dlx)[ \t\n]+)?"
)
PYTEST = r"^(?:python[0-9.]*[ \t\n]+-m[ \t\n]+)?pytest(?:[ \t\n]|$)"
NINE = {"pytest", "prisma", "playwright", "vitest", "jest", "next", "prettier", "lint", "tsc"}


def _texts(word: str) -> list[str]:
    """Texts that begin with `word` followed by a blank or the end."""
    return [word] + [word + blank + tail for blank in BLANKS for tail in TAILS]


def _may_match(pattern: str, word: str) -> bool:
    """Brute force: one of `_texts(word)` is matched by the engine that runs `matches`."""
    search = searcher(pattern)
    return any(search(text) for text in _texts(word))


@pytest.mark.parametrize(
    ("pattern", "word", "cannot"),
    [
        (PYTEST, "git", True),
        (PYTEST, "pytest", False),
        (PYTEST, "python3.11", False),
        (PYTEST, "python", False),
        (PYTEST, "pythonx", True),  # `python[0-9.]*` takes no letter
        (PYTEST, "pytestx", True),  # the word must end where the pattern wants a blank
        (RUNNER + "vitest(?:[ \t\n]|$)", "npx", False),
        (RUNNER + "vitest(?:[ \t\n]|$)", "pnpm", False),
        (RUNNER + "vitest(?:[ \t\n]|$)", "pnpx", False),
        (RUNNER + "vitest(?:[ \t\n]|$)", "np", True),
        (RUNNER + "vitest(?:[ \t\n]|$)", "bun", True),
        (RUNNER + "vitest(?:[ \t\n]|$)", "vitest", False),
        (r"^py", "pytest", False),  # a match ends inside the word: a naive word test is wrong
        (r"^py", "git", True),
        (r"^", "git", False),
        (r"^(?:)", "git", False),
        (r"^.*", "git", False),
        (r"^git.", "git", False),  # `.` takes the blank
        (r"^.{3}x", "git", True),  # the fourth character is a blank
        (r"^.{3}x", "gitx", False),
        (r"^g*it", "git", False),
        (r"^g+x", "git", True),
        (r"^(?:g|gi|git)(?:[ \t\n]|$)", "git", False),
        (r"^(?:gi)?t", "git", False),
        (r"^(?:git){2,}", "git", True),
        (r"^git{2}", "git", True),
        (r"^git{2}", "gitt", False),
        (r"^gitx?$", "git", False),
        (r"^git$", "git", False),
        (r"^git$", "gitx", True),
        (r"^$", "git", True),
        (r"^(git|hg)[ \t\n]", "hg", False),
        (r"^(git|hg)[ \t\n]", "svn", True),
        (r"^[^g]", "git", True),
        (r"^[^x]", "git", False),
        (r"^[a-f]it", "git", True),
        (r"^\w+", "git", False),
        (r"^\S+x", "git", True),
        (r"^[^\s]+\s", "git", False),
        (r"^\d", "git", True),
        (r"^\D", "git", False),
        (r"^git\b", "git", False),
        (r"^git\b", "svn", True),
        (r"^\bgit", "svn", True),
        (r"^gi\b", "git", False),  # `\b` is loosened: kept, never wrongly dropped
        (r"^g.*?x", "git", False),  # lazy: still may match
        (r"\Agit", "svn", True),
        (r"^git(?:[ \t\n]|$|[;|&()<>])", "git", False),
        # case-insensitive: the other case of a letter matches
        (r"(?i)^GIT", "git", False),
        (r"^(?i:GIT)", "git", False),
        (r"(?i)^PYTEST", "git", True),
        (r"(?i)^[A-H]IT", "git", False),
        (r"(?i)^[^G]", "git", True),
        (r"(?i)^\u212a", "k", False),  # KELVIN SIGN folds to k
        (r"(?i)^[\u0100-\u2200]", "k", False),
        (r"^(?i:G)it", "gIT", True),  # the flag ends with its group
        (r"^(?i:G)it", "git", False),
        # what the simulation does not model is kept
        (r"git", "svn", False),  # unanchored
        (r"^x|y", "svn", False),  # an alternative without ^
        (r"(?m)^git", "svn", False),  # ^ after any newline
        (r"^(a)\1", "git", False),
        (r"^(?=x)", "git", False),
        (r"^(?!g)", "git", False),
        (r"^[[:alpha:]]", "svn", False),  # RE2 reads a POSIX class, Python a set
        (r"^a{,2}", "svn", False),  # RE2 reads `{,2}` as text
        (r"^(", "svn", False),  # does not compile: its error must stay
        (r"^((((a{20}){20}){20}){20})", "svn", False),  # too large to unroll: kept
        # words the runtime check cannot vouch for
        (PYTEST, "", False),
        (PYTEST, "a b", False),
        (PYTEST, "a/git", False),
        (PYTEST, 'gi"t', False),
    ],
)
def test_the_analysis(pattern: str, word: str, cannot: bool) -> None:
    """Each answer as expected; a drop is confirmed by brute force."""
    assert cannot_begin(pattern, word) is cannot
    if cannot:
        assert not _may_match(pattern, word)


def _shipped_first_word_patterns() -> dict[str, str]:
    policies = load_policy_set([packs_dir()], use_cache=False)
    found: dict[str, str] = {}
    for compiled in policies.compiled_rules:
        stack = [compiled.guard]
        while stack:
            node = stack.pop()
            if isinstance(node, tuple):
                pattern = first_word_pattern(node)
                if pattern is not None:
                    found[pattern] = compiled.rule.id
                stack.extend(node)
    return found


SHIPPED = _shipped_first_word_patterns()
WORDS = sorted(
    {
        "git", "npx", "npm", "pnpm", "pnpx", "yarn", "bun", "bunx", "python", "python3",
        "python3.11", "pytest", "node", "deno", "uv", "cargo", "go", "make", "ls", "gradle",
        "gradlew", "mvn", "mvnw", "tsc", "eslint", "biome", "lint", "next", "jest", "vitest",
        "prisma", "playwright", "prettier", "golangci-lint", "rtk", "-", "[", "x.exe", "Git",
    }
    | {word for pattern in SHIPPED for word in re.findall(r"[a-z][a-z0-9_.-]*", pattern)}
)  # fmt: skip


def test_the_shipped_packs_hold_the_nine_first_word_rules() -> None:
    """The nine rules tried on every program, and the others of that shape, are found."""
    assert NINE <= set(SHIPPED.values())
    assert len(SHIPPED) > 40  # the rules with `programs:` test their first word too


def test_dropping_agrees_with_brute_force_on_every_shipped_pattern() -> None:
    """Whenever the analysis drops a shipped rule for a word, no text beginning with the word is
    matched; and it drops the rule for most words (it is not vacuous)."""
    dropped = 0
    for pattern, word in itertools.product(SHIPPED, WORDS):
        if cannot_begin(pattern, word):
            dropped += 1
            assert not _may_match(pattern, word), (pattern, word)
        elif word in ("git", "ls", "cargo") and SHIPPED[pattern] in NINE:
            pytest.fail(f"{SHIPPED[pattern]} is kept for {word}")
    assert dropped > len(SHIPPED) * len(WORDS) // 2


@given(
    pattern=st.text(alphabet="^$()|?*+.[]-\\abgitx \t\n{}2,:=!sdwSDWB", max_size=12),
    word=st.sampled_from(["git", "gi", "g", "it", "gitx", "x", "b", "ax", "s"]),
    tail=st.text(alphabet="agitx \t\n-", max_size=6),
)
@settings(max_examples=3000, deadline=None)
def test_generated_patterns_never_drop_a_match(pattern: str, word: str, tail: str) -> None:
    """An attacker's patterns: a dropped pattern matches no text beginning with the word."""
    if not cannot_begin(pattern, word):
        return
    search = searcher(pattern)
    for text in [word, *(word + blank + tail for blank in BLANKS)]:
        assert not search(text), (pattern, word, text)


# ---------------------------------------------------------------------------------------------
# the runtime side: which commands' normal form begins with the program

ROOT = Path(__file__).resolve().parent.parent
SPELLINGS = (
    "{w}", "{w} -q", "{w}\tx", "{w}\nx", "/usr/bin/{w} x", "./{w}", "a/b/{w} run",
    "$HOME/bin/{w} x",
    "'{w}' x", '"{w}" x', "\\{w} x", "{w}\\ x", "x\\\n{w}", "{w}\\\nx", "{w} \\\n x", "\\\n{w}",
    "{w}\f x", "{w}\v x", "\f{w}", "{w}.exe x", "{w}x y", "{W} x", "C:\\\\bin\\\\{w}.exe x",
    "'/x y'/{w} x", '"/x"/{w}', "a\\/{w}", "a'/'{w}", "{w}/ x", "{w}/", "{w}\\", "{w} \\",
    "$(x)/{w} y", "${{D:-/}}{w}", "a/{w}/b", "{w} -C dir status", "{w} --no-pager log",
    "{w} --config x run", "{w}\r x", "{w};x", "{w}|x", " {w}", "\t{w}", "{w}  ", "{w}'' x",
)  # fmt: skip


def _check_begins(command: str, word: str) -> None:
    if rtk_norm_begins_with(command, word) and re.fullmatch(r"[!#-&(-.0-\[\]-~]+", word):
        normal = rtk_norm(command)
        assert normal.startswith(word), (command, word, normal)
        assert normal[len(word) : len(word) + 1] in ("", " ", "\t", "\n"), (command, normal)


@pytest.mark.parametrize("word", ["git", "yadm", "golangci-lint", "pytest", "python3.11", "x", "["])
def test_rtk_norm_begins_with_the_word_whenever_the_check_says_so(word: str) -> None:
    """An attacker's spellings of the first word: the check never vouches wrongly."""
    for spelling, other in itertools.product(SPELLINGS, ("git", "pytest", "golangci-lint", "a")):
        command = spelling.format(w=word, W=word.upper())
        _check_begins(command, word)
        _check_begins(command, other)
    assert rtk_norm_begins_with(f"/usr/bin/{word} x", word)
    assert not rtk_norm_begins_with(f"'{word}' x", word)
    assert not rtk_norm_begins_with(f"{word[:1]}\\\n{word[1:]}", word)


@given(
    command=st.text(alphabet="gitpyx/ \t\n\\'\"\f\v\r.-$", max_size=16),
    word=st.sampled_from(["git", "g", "pytest", "x", "py", "-"]),
)
@settings(max_examples=4000, deadline=None)
def test_rtk_norm_begins_with_holds_on_generated_commands(command: str, word: str) -> None:
    """Generated texts of quotes, backslashes, blanks, slashes: the check never vouches wrongly."""
    _check_begins(command, word)
    _check_begins(word + command, word)


def test_the_parser_gives_segments_whose_normal_form_begins_elsewhere() -> None:
    """Why the check is made at run time: the program of a segment need not begin its normal
    form (the joined reading of a line continuation, `.exe`, case), so such segments take the
    plans that do not fold first-word tests."""
    found = {
        s.program: rtk_norm(s.command)
        for text in ("npx\\\nvitest run", "pytest.exe -q", "PYTEST -q", "a\\\t")
        for s in parse(text).segments
    }
    assert found["npxvitest"] == "npx vitest run"
    assert found["a\t"] == "a"  # an escaped tab is part of the word, not of the normal form
    assert found["pytest"] in ("pytest.exe -q", "PYTEST -q")
    for program, normal in found.items():
        assert rtk_norm_begins_with(normal, program) or not normal.startswith(program + " ")


# ---------------------------------------------------------------------------------------------
# plans and decisions


@pytest.fixture(scope="module")
def engine():
    """The shipped packs, compiled here (plans specialised at run time)."""
    engine = load_engine(policy_paths=[packs_dir()], use_cache=False)
    engine.budget_s = None
    return engine


def _rule_ids(engine, plan) -> set[str]:
    return {engine.policies.compiled_rules[index].rule.id for index, _ in plan}


def test_plans_leave_out_the_rules_the_program_cannot_begin(engine) -> None:
    """git & co. no longer try the nine rules; their runners and tools still do."""
    planner = engine.policies._planner
    for program in ("git", "cargo", "ls", "bun", "yarn"):
        assert not _rule_ids(engine, planner.plan(program)) & NINE, program
        assert _rule_ids(engine, planner.unfolded(program, False)) >= NINE, program
    assert "pytest" in _rule_ids(engine, planner.plan("python3.11"))
    assert "pytest" in _rule_ids(engine, planner.plan("pytest"))
    for runner in ("npx", "pnpm", "npm", "pnpx"):
        assert _rule_ids(engine, planner.plan(runner)) >= NINE - {"pytest"}, runner
    assert _rule_ids(engine, planner.plan("")) >= NINE  # not a word: nothing folded


def test_stored_plans_leave_them_out_too(tmp_path, monkeypatch) -> None:
    """The compiled cache stores the folded plans."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    load_engine(policy_paths=[packs_dir()])  # compiles and stores
    stored = load_engine(policy_paths=[packs_dir()])
    planner = stored.policies._planner
    assert planner._tables is not None
    assert not _rule_ids(stored, planner.plan("git")) & NINE
    assert "vitest" in _rule_ids(stored, planner.plan("npx"))


COMMANDS = (
    "git status", "npx vitest run", "pnpm dlx prisma generate", "python3.11 -m pytest -q",
    "pytest tests", "npm run lint", "npx\\\nvitest run", "py\\\ntest -q", "/usr/bin/git log",
    "./node_modules/.bin/vitest", "PYTEST -q", "pytest.exe -q", "'npx' vitest", "npx tsc -p .",
    "a\\\n/usr/bin/git status", "npx\v\\\nvitest", "pnpm exec next build", "yarn jest",
    "git -C x status && npx prettier --check .", "bunx eslint .", "x=1 pytest", "sudo npx jest",
)  # fmt: skip


def _outcomes(engine, texts) -> list[object]:
    context = engine.context(agent="claude")
    found = []
    for text in texts:
        outcome = engine.evaluate(text, context)
        found.append((text, outcome.decision.verdict, outcome.decision.rewritten))
        for result in outcome.evaluation.results:
            hits = tuple(hit.rule.id for hit in result.tried)
            rewrite = result.rewrite.rule.id if result.rewrite else None
            found.append((result.segment_index, hits, rewrite))
    return found


def test_the_fold_changes_no_decision(engine, monkeypatch) -> None:
    """Differential: every segment planned with the fold and every segment planned without it
    give the same decisions, rules tried and rewrites (spellings of the nine rules' programs and
    of programs they leave out)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from unique_commands import unique_commands

    texts = [
        prefix + command
        for command in COMMANDS
        for prefix in ("", "sudo ", "timeout 5 ", "env A=1 ", "bash -c ", "( ")
    ] + unique_commands(1500, seed=9)
    folded = _outcomes(engine, texts)
    unfolded = load_engine(policy_paths=[packs_dir()], use_cache=False)
    unfolded.budget_s = None
    # every segment planned unfolded
    monkeypatch.setattr(policyset, "rtk_norm_begins_with", lambda command, word: False)
    assert _outcomes(unfolded, texts) == folded


_DENY = """name: user-deny
kind: permission
rules:
  - id: no-npx-vitest
    decision: deny
    match: 'rtk_norm(segment.command).matches("^npx[ \\\\t\\\\n]+vitest")'
    message: '"no"'
"""


def test_a_user_rule_of_the_same_shape_is_folded_and_keeps_its_denies(tmp_path: Path) -> None:
    """A user's deny rule of the shape is folded too, and denies every spelling it did."""
    path = tmp_path / "user.yaml"
    path.write_text(_DENY, encoding="utf-8")
    engine = load_engine(policy_paths=[str(path)], use_cache=False)
    engine.budget_s = None
    planner = engine.policies._planner
    assert not planner.plan("git") and planner.plan("npx")
    context = engine.context(agent="claude")
    for text in ("npx vitest", "/bin/npx vitest", "npx\\\nvitest", "sudo npx  vitest run"):
        outcome = engine.evaluate(text, context)
        assert outcome.decision.verdict == "deny", text
    joined = engine.evaluate("npx\\\nvitest", context).evaluation
    segments = parse("npx\\\nvitest").segments
    by_program = {segments[r.segment_index].program: r for r in joined.results}
    # the joined reading `npxvitest` still has its normal form `npx vitest`: still denied there
    assert [hit.rule.id for hit in by_program["npxvitest"].permission_hits] == ["no-npx-vitest"]
