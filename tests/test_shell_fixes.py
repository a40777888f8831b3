"""Shell-stage fixes: a redirect on a middle pipeline stage (tree-sitter reads `a | b 2>&1 | c` as
`(a | b) 2>&1 | c`) keeps one pipeline; an assignment after `uv run` refuses that layer; valid bash
that tree-sitter-bash reports as a syntax error (`cat > f <<< x`, `x=1 >f`, `cmd 3<> rw`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from rtk_policy.policy import load_policy_set
from rtk_policy.policy.model import Context
from rtk_policy.engine.rewrite import assemble_rewrite
from rtk_policy.shell import parse

POLICIES = Path(__file__).resolve().parent.parent / "policies"


def _pipeline(text: str, programs: list[str]):
    """The segments of `text` whose programs are `programs`, in order (they must all exist)."""
    segs = [s for s in parse(text).segments if s.program in programs]
    assert [s.program for s in segs] == programs, [(s.program, s.text) for s in segs]
    return segs


@pytest.mark.parametrize(
    "text, programs, redirected",
    [
        ("cat f | grep x 2>&1 | head", ["cat", "grep", "head"], {"grep": " 2>&1"}),
        ("git log | grep x 2>/dev/null | wc -l", ["git", "grep", "wc"], {"grep": " 2>/dev/null"}),
        ("git diff | head 2>&1 | tail -3", ["git", "head", "tail"], {"head": " 2>&1"}),
        ("a | b 2>x | c 2>y | d", ["a", "b", "c", "d"], {"b": " 2>x", "c": " 2>y"}),
        ("a 2>w | b 2>x | c 2>y | d 2>z | e", ["a", "b", "c", "d", "e"],
         {"a": " 2>w", "b": " 2>x", "c": " 2>y", "d": " 2>z"}),
        ("a | b 2>x 3>y | c > f", ["a", "b", "c"], {"b": " 2>x 3>y", "c": " > f"}),
        ("a | b 2>x > f | c", ["a", "b", "c"], {"b": " 2>x > f"}),
        ("a |& b 2>&1 |& c", ["a", "b", "c"], {"b": " 2>&1"}),
        ("ls && git diff | head 2>&1 | tail -3", ["git", "head", "tail"], {"head": " 2>&1"}),
        ("git diff | head 2>&1 | tail -3 && ls", ["git", "head", "tail"], {"head": " 2>&1"}),
        ("(git diff | head 2>&1 | tail -3)", ["git", "head", "tail"], {"head": " 2>&1"}),
        ("echo $(git diff | head 2>&1 | tail -3)", ["git", "head", "tail"], {"head": " 2>&1"}),
        ("{ a | b 2>x | c; }", ["a", "b", "c"], {"b": " 2>x"}),
        ("! a | b 2>x | c", ["a", "b", "c"], {"b": " 2>x"}),
        ("a | b 2>x | c &", ["a", "b", "c"], {"b": " 2>x"}),
    ],
)  # fmt: skip
def test_a_redirect_on_a_middle_stage_keeps_one_pipeline(text, programs, redirected):
    """Index 0..n-1, size n, neighbours' programs, the redirect on the stage it was typed on."""
    segs = _pipeline(text, programs)
    n = len(programs)
    stderr = set()
    for k, seg in enumerate(segs):
        assert (seg.pipeline_index, seg.pipeline_size) == (k, n), seg.text
        assert seg.pipeline_before == tuple(programs[:k])
        assert seg.pipeline_after == tuple(programs[k + 1 :])
        assert seg.suffix == redirected.get(seg.program, "")
        assert bool(seg.redirects) == (seg.program in redirected)
        assert seg.operator_after in (("|", "|&") if k < n - 1 else ("", "&&", "&", ";"))
        if seg.start >= 0:
            assert parse(text).text[seg.start : seg.end] == seg.text
        stderr.add(seg.pipe_stderr)
    assert stderr == {"|&" in text}


@pytest.mark.parametrize(
    "text, groups",
    [
        ("a && b 2>x | c", [["a"], ["b", "c"]]),
        ("a | b && c 2>x | d", [["a", "b"], ["c", "d"]]),
        ("a | b 2>x | c && d | e 2>y | f", [["a", "b", "c"], ["d", "e", "f"]]),
        ("a | b | c && d", [["a", "b", "c"], ["d"]]),
        ("a | b 2>x | c || d 2>y | e", [["a", "b", "c"], ["d", "e"]]),
    ],
)  # fmt: skip
def test_pipes_bind_tighter_than_and_or_with_middle_redirects(text, groups):
    """Each `&&` / `||` clause is its own pipeline, whatever tree-sitter nested."""
    segs = parse(text).segments
    got, cur = [], []
    for s in segs:
        if s.pipeline_index == 0 and cur:
            got.append(cur)
            cur = []
        cur.append(s.program)
        assert s.pipeline_size == len(next(g for g in groups if s.program in g))
    got.append(cur)
    assert got == groups
    ops = [s.operator_after for s in segs if s.pipeline_index == s.pipeline_size - 1]
    assert ops[:-1] == [o for o in text.split() if o in ("&&", "||")]


def _rewrite(text: str) -> tuple[str, int]:
    """`rtk-policy rewrite TEXT` with the default pack: (stdout, exit code)."""
    proc = subprocess.run(
        [sys.executable, "-m", "rtk_policy", "rewrite", text], capture_output=True, text=True
    )
    return proc.stdout.strip(), proc.returncode


@pytest.mark.parametrize(
    "text, expected, code",
    [
        ("git diff | head 2>&1 | tail -3", "rtk git diff | head 2>&1 | tail -3", 3),
        ("git log | head 2>/dev/null | tail -3 && git status",
         "rtk git log | head 2>/dev/null | tail -3 && rtk git status", 3),
        ("git log | grep x 2>/dev/null | wc -l", "", 1),
        ("git diff | head > f | tail -3", "", 1),
    ],
)  # fmt: skip
def test_rewrite_with_a_redirect_on_a_middle_consumer(text, expected, code):
    """Reference §3.4: fd duplications on consumers are fine, a file redirect or `wc` is not."""
    assert _rewrite(text) == (expected, code)


@pytest.fixture(scope="module")
def policies():
    """The shipped policy packs."""
    return load_policy_set([str(POLICIES)])


def _rewrite_with(policies, text: str, exclude: list[str]) -> str:
    """The rewrite of `text` with `exclude_commands` (no permission gating), "" when none."""
    line = parse(text)
    context = Context(exclude_commands=tuple(exclude))
    return assemble_rewrite(line, policies.evaluate(line, context)) or ""


@pytest.mark.parametrize(
    "text, exclude, expected",
    [
        ("uv run uv run FOO=1 make", ["^[^a-z]"], "rtk uv run uv run FOO=1 make"),
        ("uv run uv run FOO=1 make", [], "rtk uv run uv run FOO=1 make"),
        ("uv run uv run FOO=1 make", ["^uv run FOO"], ""),
        ("uv run FOO=1 make", [], ""),
        ("uv run FOO=1 git status", [], ""),
        ("uv run FOO=1 uv run git status", [], ""),
        ("uv run --with x FOO=1 make", [], "rtk uv run --with x FOO=1 make"),
        ("uv run FOO=1 git status && git log", [], "uv run FOO=1 git status && rtk git log"),
        ("uv run uv run FOO=1 make 2>&1", [], "rtk uv run uv run FOO=1 make 2>&1"),
    ],
)  # fmt: skip
def test_an_assignment_after_uv_run_refuses_that_layer(policies, text, exclude, expected):
    """§3.5 step 4: the inner command's rule never applies; an outer `uv run` goes whole."""
    assert _rewrite_with(policies, text, exclude) == expected


@pytest.mark.parametrize(
    "text, redirects, here_string",
    [
        ('cat > .env <<< "KEY=value"', [(">", -1, ".env", True), ("<<<", -1, "KEY=value", False)],
         True),
        ("cat 2>&1 <<< x", [(">&", 2, "&1", False), ("<<<", -1, "x", False)], True),
        ("cat <<< x > f", [("<<<", -1, "x", False), (">", -1, "f", True)], True),
        ("x=1 >f", [(">", -1, "f", True)], False),
        (">f x=1", [(">", -1, "f", True)], False),
        ("cmd 3<> rw", [("<>", 3, "rw", True)], False),
        ("cmd <> rw", [("<>", -1, "rw", True)], False),
        ("cmd 3<>rw", [("<>", 3, "rw", True)], False),
    ],
)  # fmt: skip
def test_valid_bash_tree_sitter_misreads_is_no_parse_error(text, redirects, here_string):
    """No parse error, one segment spanning the input, the redirects read right."""
    cl = parse(text)
    assert not cl.parse_error and cl.error == ""
    (seg,) = cl.segments
    assert seg.text == text
    assert [(r.op, r.fd, r.target, r.is_file) for r in seg.redirects] == redirects
    assert cl.has_here_string == here_string
    assert cl.has_file_redirect == any(r[3] for r in redirects)


@pytest.mark.parametrize(
    "text, programs",
    [
        ('cat > f <<< "$(rm -rf /)"', ["cat", "rm"]),
        ("git diff | cat >f <<< x | head", ["git", "cat", "head"]),
        ("cmd 3<> $(rm x)", ["cmd", "rm"]),
        ("echo $(x=1 >f)", ["echo", ""]),
        ("cmd 3<>rw && git status", ["cmd", "git"]),
    ],
)  # fmt: skip
def test_the_recognised_forms_keep_every_command(text, programs):
    """Nested and following commands are still walked, with no parse error."""
    cl = parse(text)
    assert not cl.parse_error
    assert [s.program for s in cl.segments] == programs


@pytest.mark.parametrize(
    "text",
    ["cmd <>", "cat >f <<", "x=1 >f )", "cmd 3<> rw )", "cat > f <<< x )"],
)
def test_real_syntax_errors_near_the_recognised_forms_stay_errors(text):
    """Only the exact shapes are forgiven."""
    assert parse(text).parse_error


def test_an_oversized_input_is_analysed_up_to_the_limit_and_never_attested():
    from rtk_policy.shell import parse
    from rtk_policy.shell.assemble import MAX_ANALYSED

    text = "rm -rf / ; " + "echo x; " * (MAX_ANALYSED // 8)
    line = parse(text)
    assert line.text == text and line.parse_error and line.unattestable and line.rewrite_refused
    assert line.segments[0].program == "rm" and line.segments[0].args == ("-rf", "/")
    assert all(s.end <= MAX_ANALYSED for s in line.segments if s.end >= 0)
    assert "too large" in line.error


def test_a_long_broken_pipeline_is_cut_before_the_parser_blows_up():
    from rtk_policy.shell import parse
    from rtk_policy.shell.assemble import MAX_PIPES

    text = "rm -rf / | " + "a | " * 65536  # tree-sitter alone needs > 24 GB for this
    line = parse(text)
    assert line.parse_error and line.unattestable and "too large" in line.error
    assert line.segments[0].program == "rm"
    assert len(line.segments) <= MAX_PIPES + 1


@pytest.mark.parametrize(
    ("text", "bodies"),
    [
        ("echo $(a) `b` <(c) >(d)", ["a", "b", "c", "d"]),
        ("echo $( x $(y) )", [" x $(y) "]),  # outermost only; the lexer looks inside again
        ("echo '$(a)' $((1+2)) \\$(b)", []),  # quoted, arithmetic, escaped: no code
        ("echo $(unclosed", ["unclosed"]),
    ],
)
def test_substitution_bodies_for_the_recovery_lexer(text, bodies):
    from rtk_policy.shell.fallback import substitution_bodies

    assert [text[lo:hi] for lo, hi in substitution_bodies(text, 0, len(text))] == bodies


def test_recovery_looks_inside_substitutions_tree_sitter_cannot_parse():
    from rtk_policy.shell import parse

    line = parse("echo $( time f() { rm -rf /; }; f )")
    assert line.parse_error
    assert ("rm", ("-rf", "/")) in [(s.program, s.args) for s in line.segments]


@pytest.mark.parametrize(
    "text",
    [
        "time { { rm -rf /; }; }",
        "! { { rm -rf /; }; }",
        "time -p { { { rm -rf /; }; }; }",
        "time time { { rm -rf /; }; }",
    ],
)
def test_nested_groups_after_a_reserved_word_are_walked(text):
    """tree-sitter-bash reads `{ {` as one word: the groups must still give the inner command."""
    line = parse(text)
    assert [s.program for s in line.segments] == ["rm"]
    assert not line.parse_error


def test_a_misread_command_is_a_syntax_error():
    """A program named with an unquoted blank or a grammar word, or a word that starts with a line
    break, cannot be what bash runs: the walk counts it as a syntax error so the recovery lexer
    looks again (quoted names and expansions are fine)."""
    from types import SimpleNamespace

    from rtk_policy.shell.reserved import misread as _misread_program
    from rtk_policy.shell.words import make_word

    def misread(*raws: str, first: int = 0) -> bool:
        text = " ".join(raws)
        src = SimpleNamespace(text=text, has_newline="\n" in text)
        words, at = [], 0
        for raw in raws:
            words.append(make_word(raw, at))
            at += len(raw) + 1
        ctx = SimpleNamespace(no_rewrite="")
        draft = SimpleNamespace(src=src, program_word=words[0], words=words, ctx=ctx)
        return _misread_program([draft], first, src)

    assert misread("{ {", "rm")
    assert misread("a\tb")
    assert misread("then", "rm", "-rf", "/")
    assert misread("ls", "\n\\dd", "x")
    assert not misread('"my prog"')
    assert not misread('"then"', "x")
    assert not misread("$(which python)")
    assert not misread("git", "commit", '"a\nb"')
    assert not misread("{ {", first=1)  # drafts before `first` are not this walk's


@pytest.mark.parametrize(
    "text",
    [
        "ls\n\\dd if=/dev/zero of=/dev/sda",
        "! # c\nif false; then :; elif true; then rm -rf /; fi | cat",
        "time FOO=1 rm -rf /",
        "time coproc { rm -rf /; }",
    ],
)
def test_misread_shapes_still_show_the_command(text):
    """Each of these once hid the command bash runs from the policies."""
    programs = [s.program for s in parse(text).segments]
    assert {"dd", "rm"} & set(programs), programs
