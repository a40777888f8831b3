"""Property tests: the shell stage never raises and its segments are internally consistent."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from rtk_policy.shell import parse
from rtk_policy.shell.model import ORIGINS, CommandLine

TOKENS = [
    "git",
    "status",
    "rm",
    "-rf",
    "/",
    "sudo",
    "env",
    "A=1",
    "timeout",
    "5",
    "bash",
    "-c",
    "eval",
    "xargs",
    "find",
    "-exec",
    "{}",
    "\\;",
    "&&",
    "||",
    ";",
    "&",
    "|",
    "|&",
    "!",
    "(",
    ")",
    "{",
    "}",
    "$(",
    "`",
    "<(",
    ">(",
    "'",
    '"',
    "$'",
    "\\",
    "\n",
    "\r",
    "\r\n",
    "\\\n",
    "#",
    " ",
    "\t",
    ">",
    ">>",
    "2>&1",
    "<",
    "<<",
    "<<<",
    "EOF",
    "$X",
    "${X:-a b}",
    "$((",
    "))",
    "if",
    "then",
    "fi",
    "for",
    "in",
    "do",
    "done",
    "case",
    "esac",
    ";;",
    "coproc",
    "time",
    "-p",
    "é",
    "日本",
    "😀",
    "\x00",
    "\udc80",
    "*",
    "@(",
    "rtk",
    "uv",
    "run",
    "--",
]

token_text = st.lists(st.sampled_from(TOKENS), max_size=40).map(
    lambda ts: "".join(t if t in (" ", "\t") else t + " " * (len(t) % 2) for t in ts)
)
any_text = st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=200)


def check(text: str) -> CommandLine:
    """Parse and check every invariant the model promises."""
    cl = parse(text)
    assert cl.text == text
    assert bool(cl.error) == cl.parse_error
    assert "internal error" not in cl.error
    for i, s in enumerate(cl.segments):
        assert s.index == i
        assert -1 <= s.parent < i
        assert s.depth >= 0 and s.origin in ORIGINS
        assert 0 <= s.pipeline_index < s.pipeline_size
        assert s.args == s.argv[1:] and len(s.raw_words) == len(s.argv)
        assert s.prefix + s.command + s.suffix == s.text
        if s.start >= 0:
            assert text[s.start : s.end] == s.text
        if s.rewritable:
            assert s.start >= 0 and s.depth == 0 or s.origin in ("subshell", "group")
    return cl


@settings(max_examples=300, deadline=None)
@given(token_text)
def test_token_soup_never_raises(text: str) -> None:
    """Token soup never raises."""
    check(text)


@settings(max_examples=200, deadline=None)
@given(any_text)
def test_arbitrary_text_never_raises(text: str) -> None:
    """Arbitrary text never raises."""
    check(text)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.sampled_from(["git status", "rm -rf /", "ls -l"]), min_size=1, max_size=6),
    st.sampled_from([" && ", "; ", " | ", "\n", " || "]),
)
def test_joined_commands_are_all_seen(commands: list[str], sep: str) -> None:
    """Joined commands are all seen."""
    text = sep.join(commands)
    cl = check(text)
    assert [s.text for s in cl.segments] == commands
    assert not cl.parse_error
