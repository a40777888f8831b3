"""Table tests for the shell stage: segments and their fields on a hard set of bash inputs."""

from __future__ import annotations

import pytest

from rtk_policy.shell import parse


def progs(text: str, **kw: object) -> list[tuple[str, int, str]]:
    """(program, depth, origin) of every segment."""
    return [(s.program, s.depth, s.origin) for s in parse(text, **kw).segments]  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("git status && cargo build", [("git", 0, "top"), ("cargo", 0, "top")]),
        ("a || b; c & d | e |& f", [(p, 0, "top") for p in "abcdef"]),
        ("a\nb\n\nc", [("a", 0, "top"), ("b", 0, "top"), ("c", 0, "top")]),
        ('echo "a && b; c | d"', [("echo", 0, "top")]),
        ("echo 'rm -rf / ; x'", [("echo", 0, "top")]),
        ("echo a\\;rm b", [("echo", 0, "top")]),
        ("(cd x; rm -rf y)", [("cd", 1, "subshell"), ("rm", 1, "subshell")]),
        ("{ git status; rm -rf /; }", [("git", 1, "group"), ("rm", 1, "group")]),
        ("echo $(rm -rf /)", [("echo", 0, "top"), ("rm", 1, "substitution")]),
        ("echo `rm -rf /`", [("echo", 0, "top"), ("rm", 1, "substitution")]),
        ('echo "x $(rm -rf /) y"', [("echo", 0, "top"), ("rm", 1, "substitution")]),
        (
            "diff <(git log) >(rm x)",
            [
                ("diff", 0, "top"),
                ("git", 1, "process_substitution"),
                ("rm", 1, "process_substitution"),
            ],
        ),
        (
            "echo $(echo $(rm x))",
            [("echo", 0, "top"), ("echo", 1, "substitution"), ("rm", 2, "substitution")],
        ),
        ("! rm -rf /", [("rm", 0, "top")]),
        ("time rm -rf /", [("rm", 0, "top")]),
        ("coproc rm -rf /", [("rm", 0, "top")]),
        (
            "if git diff; then rm a; elif b; then c; else d; fi",
            [
                ("git", 0, "top"),
                ("rm", 0, "top"),
                ("b", 0, "top"),
                ("c", 0, "top"),
                ("d", 0, "top"),
            ],
        ),
        # each with the copy of `rm $l` whose unknown $l is guessed as "/" (`Segment.guessed`)
        ("while read l; do rm $l; done < f", [("read", 0, "top"), ("rm", 0, "top"), ("rm", 1, "top")]),
        ("until false; do git status; done", [("false", 0, "top"), ("git", 0, "top")]),
        ("for f in $(ls); do rm $f; done", [("ls", 1, "substitution"), ("rm", 0, "top"), ("rm", 1, "top")]),
        ("case $x in (a) rm a;; b|c) ls;; esac", [("rm", 0, "top"), ("ls", 0, "top")]),
        ("f() { rm -rf /; }; f", [("rm", 1, "function"), ("f", 0, "top")]),
        (
            "bash -c 'git status; rm -rf /'",
            [("bash", 0, "top"), ("git", 1, "shell_c"), ("rm", 1, "shell_c")],
        ),
        ('sh -c "rm x"', [("sh", 0, "top"), ("rm", 1, "shell_c")]),
        (
            "zsh -c 'rm x'; dash -c 'rm y'; ksh -c 'rm z'",
            [
                ("zsh", 0, "top"),
                ("rm", 1, "shell_c"),
                ("dash", 0, "top"),
                ("rm", 1, "shell_c"),
                ("ksh", 0, "top"),
                ("rm", 1, "shell_c"),
            ],
        ),
        ("bash -lc 'rm x'", [("bash", 0, "top"), ("rm", 1, "shell_c")]),
        ("bash -e -c 'rm x'", [("bash", 0, "top"), ("rm", 1, "shell_c")]),
        ("sudo bash -c 'rm x'", [("bash", 0, "top"), ("rm", 1, "shell_c")]),
        (
            "bash -c \"bash -c 'rm x'\"",
            [("bash", 0, "top"), ("bash", 1, "shell_c"), ("rm", 2, "shell_c")],
        ),
        ("bash <<< 'rm -rf /'", [("bash", 0, "top"), ("rm", 1, "shell_c")]),
        ('sh <<< "rm -rf /"', [("sh", 0, "top"), ("rm", 1, "shell_c")]),
        ("bash script.sh <<< 'rm'", [("bash", 0, "top")]),
        ("eval 'rm -rf /'", [("eval", 0, "top"), ("rm", 1, "eval")]),
        ('eval "git status && rm x"', [("eval", 0, "top"), ("git", 1, "eval"), ("rm", 1, "eval")]),
        ("find . -name '*.o' -exec rm -f {} \\;", [("find", 0, "top"), ("rm", 1, "top")]),
        (
            "find . -execdir rm {} + -ok mv {} x \\;",
            [("find", 0, "top"), ("rm", 1, "top"), ("mv", 1, "top")],
        ),
        ("ls | xargs rm -rf", [("ls", 0, "top"), ("xargs", 0, "top"), ("rm", 1, "top")]),
        (
            "ls | xargs -0 -n 1 -I{} sudo rm {}",  # and its copy with {} guessed as "/"
            [("ls", 0, "top"), ("xargs", 0, "top"), ("rm", 1, "top"), ("rm", 1, "top")],
        ),
        ("ls # ; rm -rf /", [("ls", 0, "top")]),
        ("# only a comment", []),
        ("", []),
        ("   \n\t ", []),
        ("git \\\n  status", [("git", 0, "top")]),
        ("cat <<EOF\nrm -rf /\nEOF\nls", [("cat", 0, "top"), ("ls", 0, "top")]),
        ("cat <<EOF\n$(rm -rf /)\nEOF", [("cat", 0, "top"), ("rm", 1, "substitution")]),
        ("x=$(rm -rf /)", [("", 0, "top"), ("rm", 1, "substitution")]),
        ("echo ok > $(rm x)", [("echo", 0, "top"), ("rm", 1, "substitution")]),
        ("env -S 'rm -rf /'", [("env", 0, "top"), ("rm", 1, "shell_c")]),
        ("su -c 'rm -rf /'", [("su", 0, "top"), ("rm", 1, "shell_c")]),
        ("su root --command='rm x'", [("su", 0, "top"), ("rm", 1, "shell_c")]),
        ("flock /tmp/l -c 'rm x'", [("flock", 0, "top"), ("rm", 1, "shell_c")]),
        ("watch -n 1 rm -rf /tmp/x", [("watch", 0, "top"), ("rm", 1, "shell_c")]),
        ("busybox sh -c 'rm y'", [("sh", 0, "top"), ("rm", 1, "shell_c")]),
    ],
)
def test_segments(text: str, expected: list[tuple[str, int, str]]) -> None:
    """Segments."""
    assert progs(text) == expected


@pytest.mark.parametrize(
    ("text", "program", "argv", "wrappers", "env"),
    [
        ("sudo rm -rf /", "rm", ("rm", "-rf", "/"), ("sudo",), ()),
        ("sudo -u root -E rm x", "rm", ("rm", "x"), ("sudo",), ()),
        ("/usr/bin/sudo -n rm x", "rm", ("rm", "x"), ("sudo",), ()),
        ("doas -u root rm x", "rm", ("rm", "x"), ("doas",), ()),
        ("env -i -u HOME - A=1 B=2 rm x", "rm", ("rm", "x"), ("env",), (("A", "1"), ("B", "2"))),
        ("/usr/bin/env rm x", "rm", ("rm", "x"), ("env",), ()),
        (
            "FOO=1 BAR='a b' git status",
            "git",
            ("git", "status"),
            (),
            (("FOO", "1"), ("BAR", "a b")),
        ),
        ("timeout -s KILL 5 rm x", "rm", ("rm", "x"), ("timeout",), ()),
        ("timeout --kill-after=1 5s rm x", "rm", ("rm", "x"), ("timeout",), ()),
        ("nice -n 5 rm x", "rm", ("rm", "x"), ("nice",), ()),
        ("nice -5 rm x", "rm", ("rm", "x"), ("nice",), ()),
        ("nice --adjustment=3 rm x", "rm", ("rm", "x"), ("nice",), ()),
        ("nohup rm x", "rm", ("rm", "x"), ("nohup",), ()),
        ("command -p rm x", "rm", ("rm", "x"), ("command",), ()),
        ("command -v rm", "command", ("command", "-v", "rm"), (), ()),
        ("builtin cd x", "cd", ("cd", "x"), ("builtin",), ()),
        ("exec -a name -cl rm x", "rm", ("rm", "x"), ("exec",), ()),
        ("time -p rm x", "rm", ("rm", "x"), ("time",), ()),
        ("/usr/bin/time -v -o out -f %e rm x", "rm", ("rm", "x"), ("time",), ()),
        ("stdbuf -o0 -eL -i 0 rm x", "rm", ("rm", "x"), ("stdbuf",), ()),
        ("noglob nocorrect rm x", "rm", ("rm", "x"), ("noglob", "nocorrect"), ()),
        (
            "ionice -c2 -n 7 chrt -b 0 taskset -c 1 rm x",
            "rm",
            ("rm", "x"),
            ("ionice", "chrt", "taskset"),
            (),
        ),
        (
            "setsid -f unbuffer caffeinate -i rm x",
            "rm",
            ("rm", "x"),
            ("setsid", "unbuffer", "caffeinate"),
            (),
        ),
        ("rtk git status", "git", ("git", "status"), ("rtk",), ()),
        ("rtk read f", "read", ("read", "f"), ("rtk",), ()),
        ("uv run pytest -x", "pytest", ("pytest", "-x"), ("uv run",), ()),
        ("uv run --with x -- pytest", "pytest", ("pytest",), ("uv run",), ()),
        (
            "sudo env A=1 timeout 5 nice rm x",
            "rm",
            ("rm", "x"),
            ("sudo", "env", "timeout", "nice"),
            (("A", "1"),),
        ),
        ('"rm" -rf /', "rm", ("rm", "-rf", "/"), (), ()),
        ("'rm' -rf /", "rm", ("rm", "-rf", "/"), (), ()),
        ("r\\m -rf /", "rm", ("rm", "-rf", "/"), (), ()),
        ("\\rm -rf /", "rm", ("rm", "-rf", "/"), (), ()),
        ("/bin/rm -rf /", "rm", ("/bin/rm", "-rf", "/"), (), ()),
        ("$'rm' -rf /", "rm", ("rm", "-rf", "/"), (), ()),
        ("busybox rm -rf /", "rm", ("rm", "-rf", "/"), ("busybox",), ()),
        ("chroot /mnt fakeroot rm x", "rm", ("rm", "x"), ("chroot", "fakeroot"), ()),
        ("env", "env", ("env",), (), ()),
        ("sudo -i", "sudo", ("sudo", "-i"), (), ()),
    ],
)
def test_wrappers(
    text: str, program: str, argv: tuple[str, ...], wrappers: tuple[str, ...], env: tuple
) -> None:
    """Wrappers."""
    seg = parse(text).segments[0]
    assert (seg.program, seg.argv, seg.wrappers, seg.env) == (program, argv, wrappers, env)
    assert seg.args == argv[1:]


def test_transparent_prefixes_longest_first() -> None:
    """Transparent prefixes longest first."""
    cl = parse("direnv exec . git status", ("direnv", "direnv exec ."))
    seg = cl.segments[0]
    assert (seg.program, seg.wrappers, seg.prefix) == ("git", ("direnv exec .",), "direnv exec . ")
    assert seg.rewritable


@pytest.mark.parametrize(
    ("text", "subcommand", "flags"),
    [
        ("git -C /tmp status", "status", ("-C",)),
        ("git -c a=b --no-pager log -3", "log", ("-c", "--no-pager", "-3")),
        ("git --git-dir=x --work-tree=y diff", "diff", ("--git-dir=x", "--work-tree=y")),
        ("rm -rf -- -x y", "-x", ("-rf",)),
        ("ls", "", ()),
        ("cargo +nightly build", "+nightly", ()),
        ("cat - f", "-", ()),
    ],
)
def test_subcommand_and_flags(text: str, subcommand: str, flags: tuple[str, ...]) -> None:
    """Subcommand and flags."""
    seg = parse(text).segments[0]
    assert (seg.subcommand, seg.flags) == (subcommand, flags)


@pytest.mark.parametrize(
    ("text", "prefix", "command", "suffix"),
    [
        ("FOO=1 sudo -u root rm -rf / 2>&1 >out", "FOO=1 sudo -u root ", "rm -rf /", " 2>&1 >out"),
        ("2>&1 git push --force", "2>&1 ", "git push --force", ""),
        (">out git status", ">out ", "git status", ""),
        ("git status >f --short 2>/dev/null", "", "git status >f --short", " 2>/dev/null"),
        ("make>/dev/null", "", "make", ">/dev/null"),
        ("cargo test &>/dev/null", "", "cargo test", " &>/dev/null"),
        ("FOO=1", "FOO=1", "", ""),
        ("x=1 >f", "x=1", "", " >f"),
    ],
)
def test_prefix_command_suffix(text: str, prefix: str, command: str, suffix: str) -> None:
    """Prefix command suffix."""
    seg = parse(text).segments[0]
    assert (seg.prefix, seg.command, seg.suffix) == (prefix, command, suffix)
    assert seg.prefix + seg.command + seg.suffix == seg.text == text


@pytest.mark.parametrize(
    ("text", "redirects"),
    [
        ("git status 2>&1", [(">&", 2, "&1", False)]),
        ("cmd >&2", [(">&", -1, "&2", False)]),
        ("cmd 2>&-", [(">&-", 2, "&-", False)]),
        ("cmd 2>/dev/null", [(">", 2, "/dev/null", False)]),
        ("cmd >> 'out file'", [(">>", -1, "out file", True)]),
        ("cmd &> log", [("&>", -1, "log", True)]),
        ("cmd >& /tmp/evil", [(">&", -1, "/tmp/evil", True)]),
        ("cmd < in 3<> rw", [("<", -1, "in", True), ("<>", 3, "rw", True)]),
        ("cmd >| f", [(">|", -1, "f", True)]),
        ("cat <<EOF\nx\nEOF", [("<<", -1, "", False)]),
        ("cat <<-'EOF'\n\tx\n\tEOF", [("<<-", -1, "", False)]),
        ("cat <<< 'hi there'", [("<<<", -1, "hi there", False)]),
    ],
)
def test_redirects(text: str, redirects: list[tuple[str, int, str, bool]]) -> None:
    """Redirects."""
    seg = parse(text).segments[0]
    assert [(r.op, r.fd, r.target, r.is_file) for r in seg.redirects] == redirects


@pytest.mark.parametrize(
    ("text", "match_texts"),
    [
        ("sudo rm -rf /", ["sudo rm -rf /"]),
        ("FOO=1 git status 2>&1", ["FOO=1 git status"]),
        ("2>&1 git push --force", ["git push --force"]),
        (">a;git push --force", ["", "git push --force"]),
        ("{ 2>&1 git push --force ; }", ["git push --force"]),
        ("git status && ! rm -rf /", ["git status", "rm -rf /"]),
        ("git  push   origin", ["git push origin"]),
    ],
)
def test_match_text(text: str, match_texts: list[str]) -> None:
    """Match text."""
    assert [s.match_text for s in parse(text).segments] == match_texts


def test_operators_background_negation_pipeline() -> None:
    """Operators background negation pipeline."""
    segs = parse("a && ! b | c |& d; e &").segments
    a, b, c, d, e = segs
    assert (a.operator_before, a.operator_after) == ("", "&&")
    assert (b.operator_before, b.operator_after, b.negated) == ("&&", "|", True)
    assert (c.pipeline_index, c.pipeline_size, c.pipeline_before, c.pipeline_after) == (
        1,
        3,
        ("b",),
        ("d",),
    )
    assert c.pipe_stderr and d.operator_before == "|&" and d.operator_after == ";"
    assert e.background and not a.background and e.operator_after == "&"
    assert parse("a\nb").segments[1].operator_before == "\n"


def test_pipe_binds_tighter_than_and() -> None:
    """tree-sitter nests `b | c && d` inside the pipe; the stage must see bash's structure."""
    segs = parse("git log | head | tail && git status").segments
    got = [(s.program, s.pipeline_index, s.pipeline_size, s.operator_after) for s in segs]
    assert got == [("git", 0, 3, "|"), ("head", 1, 3, "|"), ("tail", 2, 3, "&&"), ("git", 0, 1, "")]
    assert all(s.rewritable for s in segs)


def test_newline_splits_commands_tree_sitter_glues() -> None:
    """After `|&`, tree-sitter reads `c3 \n rm -rf /` as one command; bash runs two."""
    segs = parse("c1 |& c2 | c3 \n rm -rf / && c5").segments
    got = [(s.program, s.argv, s.operator_before, s.operator_after) for s in segs]
    assert got[2:] == [
        ("c3", ("c3",), "|", "\n"),
        ("rm", ("rm", "-rf", "/"), "\n", "&&"),
        ("c5", ("c5",), "&&", ""),
    ]


def test_sudo_prefix_assignments() -> None:
    """Assignments after a transparent prefix are env, not the program."""
    seg = parse("sudo A=1 git status", ("sudo",)).segments[0]
    assert (seg.program, seg.env, seg.rewritable) == ("git", (("A", "1"),), True)
    assert parse("sudo A=1 rm x").segments[0].program == "rm"


def test_parents_and_offsets() -> None:
    """Parents and offsets."""
    text = "echo $(ls -l) && bash -c 'rm x'"
    cl = parse(text)
    echo, ls, bash, rm = cl.segments
    assert (ls.parent, rm.parent, echo.parent) == (0, 2, -1)
    assert text[ls.start : ls.end] == "ls -l" == ls.text
    assert (rm.start, rm.end, rm.text) == (-1, -1, "rm x")
    assert [s.index for s in cl.segments] == [0, 1, 2, 3]


def test_dynamic_programs() -> None:
    """Dynamic programs."""
    for text in ("$X -rf /", "${CMD} x", "$(which rm) -rf /", "sudo $X", "`which rm` x"):
        assert parse(text).segments[0].dynamic_program, text
    assert parse("eval $X").segments[0].dynamic_program
    assert parse('bash -c "$X"').segments[0].dynamic_program
    assert not parse("eval 'ls'").segments[0].dynamic_program
    assert not parse("rm $X").segments[0].dynamic_program


@pytest.mark.parametrize(
    ("text", "flags"),
    [
        ("echo $(ls)", {"has_substitution", "unattestable"}),
        ("echo '$(ls)'", set()),
        ("diff <(a) <(b)", {"has_substitution", "unattestable"}),
        ("git log > /tmp/x", {"has_file_redirect", "unattestable"}),
        ("git status 2>&1", set()),
        ("cat <<EOF\nx\nEOF", {"has_heredoc", "unattestable", "rewrite_refused", "multiline"}),
        ("cat <<< x", {"has_here_string", "unattestable", "rewrite_refused"}),
        ("a\nb", {"multiline"}),
        ("a\n# comment\n", set()),
        ("echo $((1+2))", {"unattestable", "rewrite_refused"}),
        ("echo 'unbalanced", {"parse_error", "rewrite_refused"}),
        ("if then fi fi", {"parse_error"}),
    ],
)
def test_command_line_flags(text: str, flags: set[str]) -> None:
    """Command line flags."""
    cl = parse(text)
    names = (
        "has_substitution",
        "has_heredoc",
        "has_here_string",
        "has_file_redirect",
        "unattestable",
        "multiline",
        "rewrite_refused",
        "parse_error",
    )
    assert {n for n in names if getattr(cl, n)} == flags
    assert bool(cl.error) == cl.parse_error


@pytest.mark.parametrize(
    "text",
    [
        "echo 'a; rm -rf /",
        'echo "a; rm -rf /',
        "a && && rm -rf /",
        ")) rm -rf /",
        "! >out;rm -rf /",
        "ls && } 2>&1 rm -rf /",
        "0<&1<&0 rm -rf /",
        "! 2>&1&rm -rf /",
        "git status\rrm -rf /",
        "if ; then rm -rf / ; fi",
    ],
)
def test_commands_after_garbage_are_seen(text: str) -> None:
    """Commands after garbage are seen."""
    assert any(s.argv[:2] == ("rm", "-rf") for s in parse(text).segments)


def test_crlf_keeps_cr_in_last_word() -> None:
    """Crlf keeps cr in last word."""
    cl = parse("git status\r\ngit log -3")
    first, second = cl.segments
    assert first.argv == ("git", "status\r") and first.text == "git status\r"
    assert second.argv == ("git", "log", "-3")


def test_non_ascii_offsets() -> None:
    """Non ascii offsets."""
    text = "echo 日本語 é && rm -rf /tmp/ü 😀"
    cl = parse(text)
    for s in cl.segments:
        assert text[s.start : s.end] == s.text
    assert cl.segments[1].argv == ("rm", "-rf", "/tmp/ü", "😀")


@pytest.mark.parametrize(
    "text",
    [
        "x" * (1 << 20),
        "git status && " * 80_000,
        "a;" * 10_000,
        "$(" * 5000 + "rm" + ")" * 5000,
        "(" * 5000 + "rm" + ")" * 5000,
        "if a; then " * 3000 + "rm" + "; fi" * 3000,
        "{ " * 3000 + "rm;" + " }" * 3000,
        '"' * 100_001,
        "'" * 100_001,
        "echo \x00 a; rm -rf /\x00",
        "echo \udc80\udcff \ud800; rm -rf /",
        "`" * 10_001,
        "a|" * 20_000 + "b",
        "cat <<EOF\n" * 5000,
        "bash -c '" + "bash -c \\'" * 60 + "rm",
        "eval " * 5000 + "rm",
        "\\" * 1001,
    ],
)
def test_nothing_raises(text: str) -> None:
    """Nothing raises."""
    cl = parse(text)
    assert cl.text == text
    for s in cl.segments:
        if s.start >= 0:
            assert text[s.start : s.end] == s.text


def test_deep_nesting_is_a_parse_error() -> None:
    """Deep nesting is a parse error."""
    cl = parse("echo " + "$(" * 200 + "rm" + ")" * 200)
    assert cl.parse_error and "deep" in cl.error
    assert max(s.depth for s in cl.segments) <= 51


def test_too_many_commands_is_a_parse_error() -> None:
    """Too many commands is a parse error."""
    cl = parse("a;" * 5_000)
    assert cl.parse_error and "too many" in cl.error
