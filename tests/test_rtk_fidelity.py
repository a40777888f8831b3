"""Fidelity to RTK's rewrite on the kinds of input issue 17 names: blanks kept byte for byte, the
grammar RTK rewrites inside (`[[ ]]`, `(( ))`, `time`), wrapper operands and the registry's pnpm
options. Registry layer (no permission gating), as tests/test_rtk_parity.py; every expected value
is written from shared/reference/rtk-behaviour.md (section in the comment), never from our output.
"""

from __future__ import annotations

import pytest

from rtk_policy.engine.rewrite import assemble_rewrite
from rtk_policy.policy import load_policy_set
from rtk_policy.policy.functions_rtk import trim_ifs
from rtk_policy.policy.model import Context
from rtk_policy.shell import parse
from rtk_policy.shell.expressions import expression_spans


@pytest.fixture(scope="module")
def policies():
    return load_policy_set(["policies"])


def rewrite(policies, command: str) -> str | None:
    line = parse(command, ())
    return assemble_rewrite(line, policies.evaluate(line, Context()))


CASES = [
    # §3.1 step 4 / §3.3: a command ends where its last word does; an escaped blank is in the word
    ("cat f\\ ", "rtk read f\\ "),
    ("cat f\\  ", "rtk read f\\ "),
    ("git status\\ ", "rtk git status\\ "),
    ("FOO=1 cat f\\ ", "FOO=1 rtk read f\\ "),
    ("git log | grep x\\ ", "git log | rtk grep x\\ "),
    ("git status && cat f\\ ", "rtk git status && rtk read f\\ "),
    ("git log | head\\ ", None),  # the program is `head␠`: no safe consumer
    # §3.10: cat's arguments follow `rtk read` as typed, tabs included
    ("cat -n\tf", "rtk read -n\tf"),
    ("cat\t-n f", "rtk read -n f"),
    # §3.5 step 5: pnpm's workspace options after one space, then any blanks
    ("pnpm  -r  install", "rtk pnpm -r  install"),
    ("pnpm\t-r install", None),
    # §3.3: inside [[ … ]] and (( … )) nothing is a command, after `time` too
    ("time [[ -f a || ls ]] && ls", "time [[ -f a || ls ]] && rtk ls"),
    ("time -p [[ -f a || ls ]] && ls", "time -p [[ -f a || ls ]] && rtk ls"),
    ("time -p -- [[ -f a || ls ]] && ls", "time -p -- [[ -f a || ls ]] && rtk ls"),
    ("time -- [[ -f a || ls ]]", None),
    ("time -- -p [[ -f a || ls ]]", "time -- -p [[ -f a || rtk ls ]]"),  # -p is the program
    ("[[ $x == *]] || ls ]] && ls", "[[ $x == *]] || ls ]] && rtk ls"),
    ("echo [[ -f a || ls ]]", "echo [[ -f a || rtk ls ]]"),  # not in command position
    ("((ls||x)) && ls", "((ls||x)) && rtk ls"),
    ("((ls) )", "((rtk ls) )"),  # two subshells
    # §3.3: with no closer on the line, the rest of the line is the expression
    ("[[ -f a && ls; git status", None),
    ("(( ls || x; git status", None),
    # §3.5 step 4: timeout's operand is a duration; `rtk` there is no duration
    ("timeout rtk cargo test", None),
    ("timeout 1.5m cargo test", "timeout 1.5m rtk cargo test"),
    # §3.3 coproc: the body is left as written, the commands after it are not
    ("coproc ( git log ); git status", "coproc ( git log ); rtk git status"),
    ("coproc NAME ( git log ) && git status", "coproc NAME ( git log ) && rtk git status"),
    (
        "coproc while true; do git log; done; git status",
        "coproc while true; do git log; done; rtk git status",
    ),
    ("coproc git status", None),
    ("coproc ( git status", None),
    ("coproc NAME [[ -f a || ls ]]", None),
    ("git status | head; coproc while true; do git log; done",
     "rtk git status | head; coproc while true; do git log; done"),  # fmt: skip
    # §3.5 step 5: a form feed is a word byte: `install\f` is no `install`
    ("bun install\f", None),
    ("timeout 5$UNIT git status", "timeout 5$UNIT rtk git status"),
]


@pytest.mark.parametrize(("command", "expected"), CASES)
def test_rewrite_as_rtk(policies, command: str, expected: str | None) -> None:
    assert rewrite(policies, command) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [("a\\ ", "a\\ "), ("a\\  ", "a\\ "), ("a\\\\ ", "a\\\\"), ("  a\\\t", "a\\\t"), (" a ", "a")],
)
def test_trim_ifs_keeps_an_escaped_blank(text: str, expected: str) -> None:
    assert trim_ifs(text) == expected


def test_expression_spans() -> None:
    text = "time [[ -f a || ls ]] && (( x || y )) ; ((ls) )"
    spans, open_ended = expression_spans(text)
    assert [text[s:e] for s, e in spans] == [" -f a || ls ", " x || y "]
    assert open_ended == []
    assert expression_spans("ls; [[ -f a || ls")[1] == [4]
    assert expression_spans("'[[' x || ls ]]") == ([], [])


@pytest.mark.parametrize("command", [
    ("for x in git status", None),
    ("for x in a b; do git status; done", "for x in a b; do rtk git status; done"),
])  # fmt: skip
def test_a_for_word_list_is_word_text(policies, command) -> None:
    """§3.3: `for … in` word lists are word text, also where tree-sitter finds no `do`."""
    text, expected = command
    assert rewrite(policies, text) == expected


def test_expression_spans_ends_on_any_text() -> None:
    """The scan always moves on: every operator and redirection byte, in every position."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    alphabet = st.sampled_from(list("[]()<>|&;{}'\"\\$ \t\nafor in select time -p x"))

    @settings(max_examples=400, deadline=None)
    @given(st.lists(alphabet, max_size=40).map("".join))
    def ends(text: str) -> None:
        spans, open_ended = expression_spans(text)
        assert all(0 <= s <= e <= len(text) for s, e in spans)
        assert all(0 <= o < len(text) for o in open_ended)

    ends()


@pytest.mark.parametrize(
    ("command", "excluded", "prefixes", "expected"),
    [
        # §3.5 step 4: under exclusions, options after `uv run` hide the command from the check
        ("uv run --with x pytest", ("git",), (), None),
        ("uv run --frozen ruff check", ("git",), (), None),
        ("uv run -- cargo test", ("pytest",), (), "rtk uv run -- cargo test"),
        ("uv run -- pytest", ("pytest",), (), None),
        ("uv run --with x pytest", (), (), "rtk uv run --with x pytest"),
        # §3.5 step 4: a user prefix may not start with a reserved word
        ("time -v git status", (), ("time -v",), None),
        ("then x git status", (), ("then x",), None),
        ("direnv exec . git status", (), ("direnv exec .",), "direnv exec . rtk git status"),
    ],
)
def test_exclusions_and_prefixes(policies, command, excluded, prefixes, expected) -> None:
    line = parse(command, prefixes)
    context = Context(exclude_commands=excluded, transparent_prefixes=prefixes)
    assert assemble_rewrite(line, policies.evaluate(line, context)) == expected
