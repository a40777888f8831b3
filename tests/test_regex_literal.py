"""regex_literal.required_literal: text every match of a pattern contains (the guards' pre-test).

The safety property: whenever RE2 finds a match in a text, the required literal is in that text.
Checked on the shipped packs' patterns against the golden corpus, and on generated patterns and
texts; a wrong literal would make a rule (a deny too) silently not match.
"""

from __future__ import annotations

import os

import pytest
import re2
from hypothesis import given, settings
from hypothesis import strategies as st

from rtk_policy.engine.pipeline import load_engine
from rtk_policy.policy import regex
from rtk_policy.policy.guards.guard import guard_patterns
from rtk_policy.policy.guards.regex_literal import required_literal, required_literals

CORPUS = os.path.join(os.path.dirname(__file__), "corpus", "commands.txt")


@pytest.mark.parametrize(
    ("pattern", "literal"),
    [
        (r"^(?:python[0-9.]*[ \t\n]+-m[ \t\n]+)?pytest(?:[ \t\n]|$)", "pytest"),
        ("rm -rf /", "rm -rf /"),
        (r"git\s+push", "push"),
        ("ab+cd", "cd"),
        ("a{2,3}bcd", "bcd"),
        (r"\.env\b", ".env"),
        ("[a-z]+_token", "_token"),
        ("foo(bar)?baz", "foo"),
        (r"a\tb", "a\tb"),
        ("x]y", "x]y"),
        ("a|b", ""),  # a top-level alternation
        ("(?i)foo", ""),  # flags
        (r"x\x41yz", ""),  # an escape that reads on
        (r"\101bc", ""),  # octal
        (r"\Qa.b\E", ""),
        (r"\pL+word", ""),
        ("[[:alpha:]]x", ""),
        ("a**", ""),  # RE2 refuses it
        ("(ab", ""),
        ("ab)", ""),
        ("a{1001}", ""),
        ("", ""),
    ],
)
def test_required_literal(pattern: str, literal: str) -> None:
    assert required_literal(pattern) == literal


@pytest.mark.parametrize(
    ("pattern", "literals"),
    [
        ("a|b", ("a", "b")),
        ("^(sh|bash|[.]|python[0-9.]*)$", ("sh", ".", "python")),  # `bash` holds `sh`
        ("a[.](key|p12|pfx)$|b", ("key", "p12", "pfx", "b")),  # not `a.`: a group's are longer
        ("abc[.](key|p12)$|y", ("abc.", "y")),  # a literal of `SHORT` characters stands
        ("[.](dropDatabase|drop)[(]", ("drop",)),  # one alternative: the same
        ("[.](a|c)", (".",)),  # a group's no longer than the literal: the literal
        ("[.]env|[.]envrc|x[.]env", (".env",)),  # a literal holding another is left out
        (r"((^|[/@=:])[.]ssh(/|$)|(^|[/@=:])[.]aws/(credentials|config))", (".ssh", ".aws/")),
        ("(?:git|yadm) push", (" push",)),  # the single literal comes first
        ("x[.]y", ("x.y",)),
        (r"a\|b", ("a|b",)),  # an escaped bar
        ("[|]|x", ("|", "x")),
        ("(a)|(b)c", ("a", "c")),  # an alternative whose literal sits in a mandatory group
        ("a|", ()),  # an empty alternative matches anywhere
        ("(?i)a|b", ()),  # flags
        ("a|(?i)b", ()),
        ("(?:x|y)+", ()),
        ("(a|b", ()),
        ("[^]]|a", ()),
        ("[-]|a", ()),
        # a mandatory (neither optional nor repeated) top-level group's literals
        (r"^(?:(?:npx|pnpm)[ ]+)?(?:biome|eslint|lint)(?:[ ]|$)", ("biome", "lint")),
        ("(?:ab|cd)?(?:ef|gh)", ("ef", "gh")),
        ("(?:a|b)[0-9](?:xyz|uvw)", ("xyz", "uvw")),  # the group whose shortest literal is longest
        ("(?:a|)(?:b|)", ()),  # an empty alternative: no literal
        ("(?:ab|cd)*(?:ef|gh)?", ()),  # repeated or optional groups only
        ("(?i)x(?:ab|cd)", ()),  # flags
        ("(?:ab|(?i:cd))", ()),
    ],
)
def test_required_literals(pattern: str, literals: tuple[str, ...]) -> None:
    """One of the literals is in every match: one per alternative of an alternation."""
    assert required_literals(pattern) == literals


def _corpus_texts() -> list[str]:
    with open(CORPUS, encoding="utf-8") as handle:
        lines = [line.rstrip("\n") for line in handle if line.strip() and not line.startswith("#")]
    words = {word for line in lines for word in line.split()}
    return lines + sorted(words)


def test_the_packs_patterns_never_match_without_their_literal() -> None:
    """Every literal pattern of the shipped packs, on every corpus command and word."""
    policies = load_engine(use_cache=False).policies
    patterns = set()
    for rule in policies.compiled_rules:
        patterns |= guard_patterns((rule.guard, rule.output))
    assert len(patterns) > 100
    texts = _corpus_texts()
    checked = 0
    sets = 0
    for pattern in sorted(patterns):
        literals = required_literals(pattern)
        if not literals:
            continue
        sets += len(literals) > 1
        compiled = re2.compile(pattern)
        for text in texts + [*literals, *("x" + literal + "y" for literal in literals)]:
            if compiled.search(text) is not None:
                assert any(literal in text for literal in literals), (pattern, text)
                checked += 1
    assert checked > 100 and sets >= 2  # the property was exercised, not vacuous


_PIECES = st.sampled_from(
    [
        "a",
        "b",
        "ab",
        "git",
        " ",
        "-",
        "/",
        ".",
        r"\.",
        r"\s",
        r"\d",
        r"\w",
        r"\b",
        "[a-c]",
        "[^a]",
        "(?:a|b)",
        "(a)",
        "(?:ab)?",
        "x",
        "^",
        "$",
        "|",
        r"\-",
        r"\t",
        "[ \t]",
    ]  # fmt: skip
)
_QUANT = st.sampled_from(["", "", "", "?", "*", "+", "{1,2}", "*?", "+?"])


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.tuples(_PIECES, _QUANT), min_size=1, max_size=8),
    st.lists(
        st.sampled_from(["a", "b", "git", " ", "-", "/", ".", "x", "ab", "1", "\t"]), max_size=12
    ),
)
def test_generated_patterns_never_match_without_their_literal(parts, text_parts) -> None:
    pattern = "".join(piece + quant for piece, quant in parts)
    try:
        compiled = re2.compile(pattern)
    except Exception:  # noqa: BLE001 - invalid for RE2: no pre-test is used then (known_valid)
        return
    literal = required_literal(pattern)
    for text in ("".join(text_parts), literal, "".join(text_parts) + literal):
        if literal and compiled.search(text) is not None:
            assert literal in text, (pattern, text)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.lists(st.tuples(_PIECES, _QUANT), min_size=1, max_size=4), min_size=2, max_size=4),
    st.sampled_from(
        ["{}", "^({})$", "(?:{})", "^{}", "({})x", "(?:ab)?(?:{})$", "[a-c]*({})\\d", "^(?:{})+x?"]
    ),
    st.lists(
        st.sampled_from(["a", "b", "git", " ", "-", "/", ".", "x", "ab", "1", "\t"]), max_size=12
    ),
)
def test_generated_alternations_never_match_without_one_literal(alternatives, frame, text_parts):
    """Alternations of generated pieces, framed by anchors or groups: a match holds a literal."""
    body = "|".join("".join(piece + quant for piece, quant in parts) for parts in alternatives)
    pattern = frame.format(body)
    try:
        compiled = re2.compile(pattern)
    except Exception:  # noqa: BLE001 - invalid for RE2: no pre-test is used then (known_valid)
        return
    literals = required_literals(pattern)
    text = "".join(text_parts)
    for candidate in (text, *literals, text + "".join(literals)):
        if literals and compiled.search(candidate) is not None:
            assert any(literal in candidate for literal in literals), (pattern, candidate)


def test_only_patterns_known_to_compile_are_pre_tested() -> None:
    assert regex.valid_patterns(["ab+c", "(?=x)y", "a**"]) == ("ab+c",)
    regex.remember_valid(["zz-remembered"])
    assert regex.known_valid("zz-remembered") and not regex.known_valid("(?=x)never")


def test_the_guard_pre_tests_only_valid_patterns() -> None:
    """An invalid pattern stays unknown (CEL's error) even when its literal is missing; a valid one
    without its literal in the text is false without being compiled."""
    from rtk_policy.policy.guards.values import UNKNOWN, literal_search

    text = lambda env: env["text"]  # noqa: E731
    assert required_literal("needle[z-a]") == "needle"  # RE2 refuses the range z-a
    invalid = literal_search(text, "needle[z-a]")
    assert invalid({"text": "nothing here"}) is UNKNOWN
    regex.remember_valid(["^never-compiled-needle"])
    valid = literal_search(text, "^never-compiled-needle")
    assert valid({"text": "git status"}) is False
    assert "^never-compiled-needle" not in regex._SEARCH
    assert valid({"text": "never-compiled-needle x"}) is True


def test_the_pre_test_literals_come_from_the_compiled_cache_when_it_has_them() -> None:
    """A mapping remembered from the cache gives the literals without working them out again; a
    pattern not known to compile has none, and one compiled later gets its own."""
    regex.remember_valid({"^cached-(x|y)$": ("cached-only-literal",)})
    assert regex.known_valid("^cached-(x|y)$")
    assert regex.pretest_literals("^cached-(x|y)$") == ("cached-only-literal",)  # the cache's word
    assert regex.pretest_literals("^not-(yet|known)$") == ()
    regex.searcher("^not-(yet|known)$")  # compiled in this process: known valid from now on
    assert regex.pretest_literals("^not-(yet|known)$") == ("not-",)
    table = regex.pattern_literals(["a+bcd", "^(x1|y2)$"])
    assert table == {"a+bcd": ("bcd",), "^(x1|y2)$": ("x1", "y2")}


def test_the_compiled_cache_keeps_each_valid_pattern_with_its_literals(tmp_path, monkeypatch):
    """The payload written for the shipped packs maps every valid literal pattern to
    `required_literals`, and a process that loads it pre-tests with those."""
    from rtk_policy.policy import cache, load_policy_set
    from rtk_policy.policy import load as load_module

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    written = {}
    real_write = cache.write_cache
    monkeypatch.setattr(
        load_module,
        "write_cache",
        lambda key, document, blobs, *rest: written.update(document)
        or real_write(key, document, blobs, *rest),
    )
    load_policy_set([os.path.join(os.path.dirname(__file__), "..", "policies")])
    table = written["patterns"]
    assert isinstance(table, dict) and len(table) > 100
    assert all(tuple(table[p]) == required_literals(p) for p in table)
    assert sum(bool(literals) for literals in table.values()) > 50
