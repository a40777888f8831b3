"""A quote left open at the end (`engine/unclosed.py`): bash runs nothing from the line where it
opened, so the command is judged with the quote closed; a deny of the text as typed stands, and
no deny of the lines before it is ever lost (hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rtk_policy.config.load import Config
from rtk_policy.engine.pipeline import Engine
from rtk_policy.policy import load_policy_set
from rtk_policy.policy.load import packs_dir

DENIED = ["rm -rf /", "sudo /bin/rm -rf ~", "git push --force origin main", "x=/; rm -rf $x",
          "bash -c 'rm -rf /'", "r\\\nm -rf /", "mkfs.ext4 /dev/sda1"]  # fmt: skip
QUIET = ["echo ok", "git status", "ls -la src", "grep -rn TODO src", "git restore --help"]


@pytest.fixture(scope="module")
def engine() -> Engine:
    """The shipped packs, audit off, without the wall-clock decision budget: these tests check
    verdicts, and on a loaded machine (CI's Python 3.13 run) a first decision ran past 0.75 s and
    asked where the text is denied; the budget has its own tests."""
    engine = Engine(load_policy_set([str(packs_dir())]), Config(audit_enabled=False))
    engine.budget_s = None
    return engine


def verdict(engine: Engine, command: str) -> str:
    """The verdict of `command` in a project folder."""
    context = engine.context(
        agent="claude", cwd="/home/dev/project", project_dir="/home/dev/project"
    )
    return engine.decide(command, context).verdict


@pytest.mark.parametrize("command", DENIED)
def test_every_denied_command_is_denied_as_written(engine, command):
    assert verdict(engine, command) == "deny"


@pytest.mark.parametrize("quiet", QUIET)
@pytest.mark.parametrize("tail", ["'unterminated", '"find . -delete', "'it''s", '"a\nb'])
def test_an_open_quote_after_a_quiet_command_asks_nothing(engine, quiet, tail):
    assert verdict(engine, f"{quiet} {tail}") == "none"


def test_other_parse_errors_are_still_asked(engine):
    for broken in ["echo )", "if; then", "echo $((", "a=(", "echo `date"]:
        assert verdict(engine, broken) == "ask", broken


def test_a_closed_quote_is_never_rewritten(engine):
    context = engine.context(agent="claude", cwd="/home/dev/project")
    decision = engine.decide("git status 'x", context)
    assert decision.verdict == "none" and decision.rewrite is None


#: what may follow the open quote (no backtick: `` is a substitution of its own, judged elsewhere)
_TEXT = st.text(alphabet=st.sampled_from(list("ab /;&|$()-'\"\\\n")), max_size=24)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    denied=st.sampled_from(DENIED),
    before=st.sampled_from(["", "echo ok; ", "cd src && ", "echo ok\n"]),
    joiner=st.sampled_from([" ", "; ", "\n", " && ", " | "]),
    quote=st.sampled_from(["'", '"', "`"]),
    rest=_TEXT,
)
def test_a_deny_is_never_lost_behind_an_open_quote(engine, denied, before, joiner, quote, rest):
    """Whatever follows a denied command after an open quote, the whole is denied."""
    rest = rest.replace(quote, "")  # the quote stays open to the end
    command = f"{before}{denied}{joiner}{quote}{rest}"
    assert verdict(engine, command) == "deny", command


def test_a_command_inside_the_open_quote_is_one_word(engine):
    """What follows an open quote is never run by bash; judged closed it is an argument, but a
    substitution inside an open double quote is still read."""
    assert verdict(engine, "echo 'x\nrm -rf build") == "none"
    assert verdict(engine, 'echo "x\n$(rm -rf /)') == "deny"
    assert verdict(engine, 'echo "$(git reset --hard)') == "ask"


def test_bounded_on_a_large_input(engine):
    import time

    command = "echo ok; " * 2000 + "echo 'open"
    started = time.perf_counter()
    verdict(engine, command)
    assert time.perf_counter() - started < 5  # the engine's own budget applies to each parse


def test_no_allow_rule_speaks_for_an_open_quote(engine):
    """Claude Code's read-only set and the user's own allow rules are for commands bash runs: a
    command bash rejects for its open quote gets no allow (the agent, seeing the quote, decides)."""
    from rtk_policy.util import record

    context = engine.context(agent="claude", cwd="/home/dev/project")
    assert engine.decide("git status", context).verdict == "allow"  # the read-only set
    assert engine.decide("git status 'x", context).verdict == "none"
    allowed = record.evolve(context, claude_allow=("git:*",))
    assert engine.decide("git push 'x", allowed).verdict == "none"
    assert engine.decide("git push x", allowed).verdict == "allow"


def test_an_input_without_a_quote_is_not_parsed_again(monkeypatch):
    """Closing a quote cannot help a command that holds none (a long list of deletions past the
    segment limit): it is not parsed twice more; a trailing backslash still is (`\\` then `'` is
    an escaped quote)."""
    from rtk_policy.engine import unclosed
    from rtk_policy.shell import parse

    parsed: list[str] = []

    def counted(text: str):
        parsed.append(text)
        return parse(text)

    long = parse("cd /tmp; " + "; ".join(f"rm -rf x{i}" for i in range(2100)))
    assert long.parse_error
    assert unclosed.closed_text(long, counted) is None and parsed == []
    backslash = parse("sudo \\")
    assert unclosed.closed_text(backslash, counted) is not None and parsed == ["sudo \\'"]
