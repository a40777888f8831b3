"""A deny is never lost when a word reaches a command through a variable, a function or a positional
parameter the command itself set (issue 18, class 2): hypothesis moves one word of a denied command
into an assignment, a `for` list, a function's arguments, `bash -c`'s positional parameters or a
substitution whose output is known (`$(echo WORD)`, backticks, `$(printf %s WORD)`), and the whole
must still be denied, also with a word beside it that the command leaves unknown. Unknown values
are asked about, never allowed.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rtk_policy.config.load import Config
from rtk_policy.engine.pipeline import Engine
from rtk_policy.policy import load_policy_set
from rtk_policy.shell import parse
from rtk_policy.shell.values import expand_word

PACK = Path(__file__).resolve().parents[1] / "policies" / "security-baseline.yaml"
BOUNDED = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: denied commands as words (each alone is denied by the baseline)
ATOMS = (
    ("rm", "-rf", "/"), ("rm", "-fr", "/etc"), ("rm", "-r", "--force", "/usr/"),
    ("git", "push", "--force"), ("git", "push", "origin", "+main"), ("chmod", "-R", "777", "/"),
    ("dd", "if=/dev/zero", "of=/dev/sda"), ("find", "/", "-delete"), ("mkfs.ext4", "/dev/sdb1"),
    ("sudo", "rm", "-rf", "/boot"),
)  # fmt: skip


def _carried(
    words: tuple[str, ...], k: int, carrier: str, quoted: bool, unknown: str = ""
) -> str:
    """`words` with word `k` handed over by `carrier` ("variable", "export", "local", "loop",
    "function", "function-all", "bash-c", "bash-c0", "echo", "backtick", "printf"), and the
    `unknown` word (a variable the command does not set) after them when given."""
    value = shlex.quote(words[k])

    def use(ref: str) -> str:
        ref = f'"{ref}"' if quoted else ref
        used = [ref if i == k else shlex.quote(w) for i, w in enumerate(words)]
        return " ".join(used + ([unknown] if unknown else []))

    if carrier == "echo":
        return use(f"$(echo {value})")
    if carrier == "backtick":
        return use(f"`echo {value}`")
    if carrier == "printf":
        return use(f"$(printf %s {value})")
    if carrier == "variable":
        return f"v={value}; {use('$v')}"
    if carrier == "export":
        return f"export V={value} && {use('${V}')}"
    if carrier == "local":
        return f"f() {{ local d={value}; {use('$d')}; }}; f"
    if carrier == "loop":
        return f"for d in build {value}; do {use('$d')}; done"
    if carrier == "function":
        return f"f() {{ {use('$1')}; }}; f {value}"
    if carrier == "function-all":
        inner = " ".join(shlex.quote(w) for w in words[:k])
        rest = " ".join(shlex.quote(w) for w in words[k:])
        return f'f() {{ {inner} "$@"; }}; f {rest}'
    if carrier == "bash-c":
        return f"bash -c {shlex.quote(use('$1'))} _ {value}"
    return f"sh -c {shlex.quote(use('$0'))} {value}"


CARRIERS = ("variable", "export", "local", "loop", "function", "function-all", "bash-c", "bash-c0",
            "echo", "backtick", "printf")  # fmt: skip


@pytest.fixture(scope="module")
def baseline() -> Engine:
    return Engine(policies=load_policy_set([str(PACK)]), config=Config(audit_enabled=False))


@st.composite
def carried_denials(draw: st.DrawFn) -> str:
    words = draw(st.sampled_from(ATOMS))
    k = draw(st.integers(0, len(words) - 1))
    text = _carried(words, k, draw(st.sampled_from(CARRIERS)), draw(st.booleans()))
    wrap = draw(st.sampled_from(("{}", "ls && {}", "{} ; ls", "( {} )", "true || {}")))
    return wrap.format(text)


def test_every_atom_is_denied(baseline):
    for words in ATOMS:
        text = " ".join(words)
        assert baseline.decide(text, baseline.context()).verdict == "deny", text


@BOUNDED
@given(command=carried_denials())
def test_a_deny_is_never_lost_through_a_value_the_command_sets(baseline, command):
    decision = baseline.decide(command, baseline.context())
    assert decision.verdict == "deny", (command, decision.rule_ids)


@st.composite
def carried_beside_unknown(draw: st.DrawFn) -> str:
    """A carried denial with a word after it that the command leaves unknown (`$name`, quoted or
    not, a name it never sets): that word can only add targets."""
    words = draw(st.sampled_from(ATOMS))
    k = draw(st.integers(0, len(words) - 1))
    name = draw(st.sampled_from(("zz", "target", "EXTRA", "u_1")))
    unknown = draw(st.sampled_from((f"${name}", f'"${name}"', f"${{{name}}}")))
    carrier = draw(st.sampled_from(CARRIERS))
    return _carried(words, k, carrier, draw(st.booleans()), unknown)


@BOUNDED
@given(command=carried_beside_unknown())
def test_a_deny_is_never_lost_beside_a_word_the_command_leaves_unknown(baseline, command):
    decision = baseline.decide(command, baseline.context())
    assert decision.verdict == "deny", (command, decision.rule_ids)


@BOUNDED
@given(
    words=st.sampled_from([a for a in ATOMS if a[-1] in ("/", "/etc", "/usr/", "/boot")]),
    name=st.from_regex(r"[a-z][a-z_]{0,6}", fullmatch=True).filter(
        lambda n: n not in ("v", "d", "f", "k")
    ),
)
def test_a_value_it_does_not_set_is_asked_never_allowed(baseline, words, name):
    """The path of a command denied for its path, taken from a variable set elsewhere: a guess
    ("/"), so an ask."""
    k = len(words) - 1
    text = " ".join(f'"${name}"' if i == k else shlex.quote(w) for i, w in enumerate(words))
    verdict = baseline.decide(text, baseline.context()).verdict
    assert verdict in ("ask", "deny"), text


@pytest.mark.parametrize(
    ("raw", "known", "positional", "fields"),
    [
        ("$x", {"x": ("/",)}, ("bash",), [["/"]]),
        ('"$x"/etc', {"x": ("/",)}, ("bash",), [["//etc"]]),
        ("$a", {"a": ("rm -rf /",)}, ("bash",), [["rm", "-rf", "/"]]),
        ('"$a"', {"a": ("rm -rf /",)}, ("bash",), [["rm -rf /"]]),
        ('"$@"', {}, ("f", "a b", "c"), [["a b", "c"]]),
        ("$@", {}, ("f", "a b", "c"), [["a", "b", "c"]]),
        ("${PWD:0:1}", {}, ("bash",), [["/"]]),
        ("${x:-/}", {"x": ("",)}, ("bash",), [["/"]]),
        ("${x:-/}", {"x": ("build",)}, ("bash",), [["build"]]),
        ("${x:+y}", {"x": ("1",)}, ("bash",), [["y"]]),
        ("{,/}", {}, ("bash",), [[], ["/"]]),
        ("a{b,c}d", {}, ("bash",), [["abd"], ["acd"]]),
        ("$x", {"x": ("/", "build")}, ("bash",), [["/"], ["build"]]),
    ],
)
def test_expand_word(raw, known, positional, fields):
    alts = expand_word(raw, known, positional)
    assert alts is not None and [a.fields for a in alts] == fields
    assert not any(a.guessed for a in alts)


@pytest.mark.parametrize("raw", ["$HOME", "$(pwd)", "`pwd`", "$?", "${#x}", "plain", "'{,/}'"])
def test_what_is_kept_as_typed(raw):
    assert expand_word(raw, {}, ("bash",)) is None


def test_an_unknown_variable_is_a_guess_only_where_it_can_start_a_path():
    (alt,) = expand_word("$x/etc", {}, ("bash",))
    assert (alt.fields, alt.guessed, alt.guess_leads) == (["//etc"], True, True)
    (alt,) = expand_word("build/$x", {}, ("bash",))
    assert (alt.guessed, alt.guess_leads) == (True, False)
    line = parse("rm -rf build/$x")
    assert not any(s.guessed for s in line.segments)


def test_copies_follow_their_command_and_are_never_rewritten():
    line = parse("x=/; rm -rf $x; ls")
    assert [(s.program, s.args, s.guessed) for s in line.segments] == [
        ("", (), False),
        ("rm", ("-rf", "$x"), False),
        ("rm", ("-rf", "/"), False),
        ("ls", (), False),
    ]
    copy = line.segments[2]
    assert not copy.rewritable and copy.text == "rm -rf $x" and copy.depth == 1
    assert copy.copy_of == 1 and line.segments[1].copy_of == -1


def test_a_line_continuation_inside_a_word_is_one_word():
    line = parse("r\\\nm -rf /")
    assert ("rm", ("-rf", "/")) in [(s.program, s.args) for s in line.segments]
