"""Shell-stage holes found by fuzzing and corpus review: trailing redirects after && || |, reserved
words before compound commands, redirects on compound commands, limits, valid bash read as errors,
parser crashes."""

from __future__ import annotations

import subprocess
import sys

import pytest

from rtk_policy.shell import parse


def _seg(text: str, program: str):
    """The one segment of `text` whose program is `program`."""
    found = [s for s in parse(text).segments if s.program == program]
    assert len(found) == 1, [(s.program, s.text) for s in parse(text).segments]
    return found[0]


@pytest.mark.parametrize(
    "text, program, target, suffix",
    [
        ("ls && echo x > /dev/sda", "echo", "/dev/sda", " > /dev/sda"),
        ("true || cat image > /dev/sdb", "cat", "/dev/sdb", " > /dev/sdb"),
        ("ls | cat > /dev/sda", "cat", "/dev/sda", " > /dev/sda"),
        ("git status && echo {} > ~/.claude/settings.json", "echo", "~/.claude/settings.json",
         " > ~/.claude/settings.json"),
        ("a | b && c >> f", "c", "f", " >> f"),
        ("grep -q x .gitignore || echo .env >> .gitignore", "echo", ".gitignore", " >> .gitignore"),
        ("if ! command -v jq >/dev/null; then :; fi", "command", "/dev/null", " >/dev/null"),
    ],
)  # fmt: skip
def test_trailing_redirect_after_an_operator_is_the_last_commands(text, program, target, suffix):
    """A redirect after the last command of a list or pipeline is that command's."""
    seg = _seg(text, program)
    assert [r.target for r in seg.redirects] == [target]
    assert seg.suffix == suffix
    assert seg.text.endswith(suffix)
    assert parse(text).text[seg.start : seg.end] == seg.text
    others = [s for s in parse(text).segments if s is not seg and s.program != program]
    assert all(not s.redirects for s in others)


def test_two_trailing_redirects_after_an_operator():
    """Both redirects, in order, and the suffix covers them."""
    seg = _seg("a && b 2>x > f", "b")
    assert [(r.fd, r.target) for r in seg.redirects] == [(2, "x"), (-1, "f")]
    assert seg.suffix == " 2>x > f"


@pytest.mark.parametrize(
    "text, programs, op, target",
    [
        ("while read l; do echo $l; done < .env", ["read", "echo"], "<", ".env"),
        ("{ echo a; echo b; } > /dev/sda", ["echo", "echo"], ">", "/dev/sda"),
        ("ls && (echo x) > /dev/sda", ["echo"], ">", "/dev/sda"),
        ("for f in *; do cat $f; done >> all.txt", ["cat"], ">>", "all.txt"),
        (
            "if true; then bash -c 'echo hi'; fi > /dev/sda",
            ["true", "bash", "echo"],
            ">",
            "/dev/sda",
        ),
    ],
)
def test_a_redirect_on_a_compound_counts_for_each_of_its_segments(text, programs, op, target):
    """Documented choice: a compound's redirect is on every segment inside it."""
    cl = parse(text)
    assert cl.has_file_redirect
    inside = [s for s in cl.segments if s.program in programs]
    copies = [s for s in inside if s.copy_of >= 0]  # `cat *` for `cat $f`
    assert [s.program for s in inside if s not in copies] == programs
    for s in inside:
        assert (op, target) in [(r.op, r.target) for r in s.redirects]
        assert not s.suffix.strip()  # the redirect lies outside the segment's text
    outside = [s for s in cl.segments if s.program not in programs]
    assert all(not s.redirects for s in outside)


@pytest.mark.parametrize(
    "text, negated",
    [
        ("! if true; then rm -rf /; fi", True),
        ("! while false; do rm -rf /; done", True),
        ("x; ! for i in a; do rm -rf /; done", True),
        ("time (rm -rf /)", False),
        ("time { rm -rf /; }", False),
        ("time (rm -rf / &)", False),
        ("time -p while true; do rm -rf /; done", False),
        ("time -- if true; then rm -rf /; fi", False),
        ("time ! { rm -rf /; }", False),
    ],
)
def test_reserved_words_before_a_compound_keep_its_commands(text, negated):
    """`!` and `time` before a compound command: the commands inside are segments."""
    cl = parse(text)
    assert not cl.parse_error
    rm = _seg(text, "rm")
    assert rm.argv == ("rm", "-rf", "/")
    assert rm.wrappers == ()
    if negated:
        assert rm.negated
    assert all(
        s.program not in ("time", "if", "then", "while", "do", "for", "{", "(rm")
        for s in cl.segments
    )
    assert all(cl.text[s.start : s.end] == s.text for s in cl.segments if s.start >= 0)


def test_time_before_a_simple_command_is_still_a_wrapper():
    """The reserved-word re-parse leaves `time CMD` alone."""
    seg = _seg("time -p git status", "git")
    assert seg.wrappers == ("time",)
    assert seg.prefix == "time -p "


CRASHERS = ["{\U000dfbf6", "a{\U00057cd0d", "{3\U000dd63f", "[({\U00065e75", "{1..2\U000f0000}"]


def test_high_code_points_after_a_brace_do_not_crash_the_parser():
    """tree-sitter-bash's brace-range scanner crashed at random on these (a segfault)."""
    code = (
        "import sys\nfrom rtk_policy.shell import parse\n"
        f"for t in {CRASHERS!r}:\n"
        "    for _ in range(400):\n        cl = parse(t)\n"
        "    assert cl.text == t and all(t[s.start:s.end] == s.text for s in cl.segments)\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-500:]
    assert done.stdout.strip() == "ok"


def test_a_depth_limit_that_drops_code_is_a_parse_error_and_the_lexer_looks_again():
    """100 nested groups: past the walker's limit, yet `rm` is a segment and parse_error is set."""
    cl = parse("{ " * 100 + "rm -rf /" + "; }" * 100)
    assert cl.parse_error
    assert "rm" in [s.program for s in cl.segments]


@pytest.mark.parametrize("text", ["((", "(( ", ")", ") )", "}", ";;", "((i++))", "if"])
def test_a_command_never_gives_zero_segments(text):
    """Permission rules run per segment: a best-effort one (never rewritable) for these."""
    cl = parse(text)
    assert cl.segments
    assert not any(s.rewritable for s in cl.segments)
    assert all(cl.text[s.start : s.end] == s.text for s in cl.segments)


@pytest.mark.parametrize("text", ["", "  ", "\n\n", "# only a comment", "  # c\n\n# d\n"])
def test_blank_input_gives_no_segment(text):
    """Blank lines and comments run nothing."""
    assert parse(text).segments == ()


@pytest.mark.parametrize(
    "text",
    [
        " ".join(f"w{k}" for k in range(40)),
        "A=1 B=2 make " + "  ".join(f"--opt{k}=x/y:z,1+2@h%" for k in range(40)) + " ",
        "ls && git log\t" + " ".join(f"-{k}" for k in range(40)) + " | head -5",
        "echo " + " ".join(f"a{k}" for k in range(40)) + " > out # comment",
    ],
)
def test_the_plain_word_fast_path_gives_the_tree_walks_segments(monkeypatch, text):
    """Long commands of plain words are cut by a regex: the same segments as the node walk."""
    import rtk_policy.shell.simple as simple

    fast = parse(text)
    monkeypatch.setattr(simple, "_PLAIN_MIN", 10**9)
    assert parse(text) == fast
    assert any(len(s.argv) > 30 for s in fast.segments)


@pytest.mark.parametrize(
    "text, program, argv, targets",
    [
        ("rm <<EOF -rf /\nhi\nEOF", "rm", ("rm", "-rf", "/"), ["", ]),
        ("cat <<EOF x\nhi\nEOF", "cat", ("cat", "x"), [""]),
        ("cat <<'EOF' > out\nx\nEOF", "cat", ("cat",), ["", "out"]),
        ("cat <<EOF | rm -rf /\nx\nEOF", "rm", ("rm", "-rf", "/"), []),
        ("cat <<EOF && rm -rf /\nx\nEOF", "rm", ("rm", "-rf", "/"), []),
    ],
)  # fmt: skip
def test_words_and_commands_after_a_heredoc_start_are_kept(text, program, argv, targets):
    """tree-sitter nests them in the heredoc redirect: arguments, redirects and commands alike."""
    seg = _seg(text, program)
    assert seg.argv == argv
    assert [r.target for r in seg.redirects] == targets
    assert parse(text).has_file_redirect == ("out" in targets)
