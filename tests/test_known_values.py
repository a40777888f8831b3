"""Issue 18: a deny is never lost beside what the engine cannot know.

A word whose value is unknown (a variable the command does not set) can only add words to a
command; a deny rule that matches on the words bash knows still denies. Tree-sitter's glued words
(`/ `` x` read as one word) are split as bash splits them. Each case beside its safe neighbour.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rtk_policy.config.load import Config
from rtk_policy.engine.pipeline import Engine
from rtk_policy.policy import load_policy_set
from rtk_policy.shell import parse

ROOT = Path(__file__).resolve().parents[1]
PACKS = [str(ROOT / "policies" / name) for name in ("security-baseline.yaml", "guard-self.yaml")]


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine(policies=load_policy_set(PACKS), config=Config(audit_enabled=False))


def _verdict(engine: Engine, text: str) -> str:
    return engine.decide(text, engine.context()).verdict


@pytest.mark.parametrize(
    "text",
    [
        "x=/; rm -rf $x $a",
        'x=/; rm -rf "$x" "$a"',
        "x=/; rm -rf ${x} ${a:-}",
        'x=/; f(){ rm -rf "$@"; }; f $x $a',
        "x=/etc; rm -rf $a $x",
        "x=--force; git push $x $remote",
    ],
)
def test_an_unknown_word_beside_known_ones_does_not_weaken_their_deny(engine, text):
    assert _verdict(engine, text) == "deny"


@pytest.mark.parametrize(
    "text",
    [
        "rm -rf $a",  # the unknown word is the target: asked, never denied nor allowed
        'rm -rf "$a"',
        "x=/; rm -rf $x/$a",  # the unknown part is inside the path: which folder is unknown
        "x=/; $a rm -rf $x",  # an unknown program: asked
    ],
)
def test_a_deny_that_needs_the_unknown_value_asks(engine, text):
    assert _verdict(engine, text) == "ask"


@pytest.mark.parametrize("text", ["x=build; rm -rf $x $a", "x=build; rm -rf $x"])
def test_safe_neighbours_are_not_denied(engine, text):
    assert _verdict(engine, text) != "deny"


def test_the_known_copy_keeps_the_unknown_word_as_typed():
    line = parse("x=/; rm -rf $x $a")
    copies = [(s.args, s.guessed) for s in line.segments if s.copy_of >= 0]
    assert (("-rf", "/", "$a"), False) in copies
    assert (("-rf", "/", "/"), True) in copies


@pytest.mark.parametrize("text", ["rm -rf / `` \\;", "rm -rf / `` x", "rm -rf `` /", "rm -rf / ``"])
def test_an_empty_backtick_does_not_glue_words_away_from_a_deny(engine, text):
    assert _verdict(engine, text) == "deny"


def test_glued_words_are_split_as_bash_splits_them():
    (segment,) = parse("rm -rf / `` \\;").segments
    assert segment.args == ("-rf", "/", ";")  # an empty substitution alone is no word
    (segment,) = parse("echo `` hi").segments  # glued into the command name
    assert (segment.program, segment.args, segment.dynamic_program) == ("echo", ("hi",), False)
    (segment,) = parse('echo a"b c"d').segments
    assert segment.args == ("ab cd",)


def test_an_empty_backtick_beside_a_safe_command_is_not_denied(engine):
    assert _verdict(engine, "rm -rf build `` \\;") != "deny"


# -- substitutions whose output is known (echo / printf of literal words) -----------------------

from rtk_policy.shell.known_output import known_output  # noqa: E402


@pytest.mark.parametrize(
    ("substitution", "output"),
    [
        ("$(echo rm -rf /)", "rm -rf /"),
        ("`echo pwd`", "pwd"),
        ("$(echo -n rm)", "rm"),
        ("$(echo -nE 'a  b')", "a  b"),
        ("$(echo -x)", "-x"),  # not an option of echo: printed
        ("$(echo -- a)", "-- a"),  # echo prints `--`
        ('$(echo "a b" c)', "a b c"),
        ("$(echo)", ""),
        ("$(printf '%s' rm)", "rm"),
        ("$(printf '%s\\n' rm -rf /)", "rm\n-rf\n/"),
        ("$(printf '%s %s' a)", "a "),
        ("$(printf '100%%')", "100%"),
    ],
)
def test_known_output_of_echo_and_printf(substitution, output):
    assert known_output(substitution) == output


@pytest.mark.parametrize(
    "substitution",
    [
        "$(echo -e '\\x72m')",  # -e interprets escapes
        "$(echo '\\x72m')",  # so does bash's xpg_echo
        "$(echo $HOME)",
        '$(echo "$x")',
        "$(echo `id`)",
        "$(echo '*')",  # an unquoted result is globbed
        "$(echo ~)",
        "$(echo a; rm -rf /)",
        "$(echo a > f)",
        "$(echo a | tr a b)",
        "$(echo {a,b})",
        "$(printf '%b' '\\x72m')",
        "$(printf '%d' 1)",
        "$(printf -v x a)",
        "$(pwd)",
        "$((1+2))",
        "$(echo 'unclosed)",
    ],
)
def test_output_that_cannot_be_known_is_not_guessed(substitution):
    assert known_output(substitution) is None


@pytest.mark.parametrize(
    "text",
    [
        "$(echo rm -rf /)",
        "`echo rm` -rf /",
        'sh -c "$(echo rm -rf /)"',
        "$(echo -n rm) -rf /",
        "$(printf '%s\\n' rm -rf /)",
        "rm -rf $(echo /)",
        "x=$(echo /); rm -rf $x",
        "for d in $(echo /etc); do rm -rf $d; done",
    ],
)
def test_a_substitution_with_known_output_is_judged_with_it(engine, text):
    assert _verdict(engine, text) == "deny"


@pytest.mark.parametrize("text", ["$(echo ls)", "`echo pwd`", "$(echo hello)", "x=ls; $x -la"])
def test_a_program_with_a_known_name_is_not_unattestable(engine, text):
    assert _verdict(engine, text) == "none"


@pytest.mark.parametrize(
    "text",
    [
        "$(echo -e '\\x72m') -rf /",  # unsure: still asked
        "$(echo '*') -rf /",
        "$(pwd)",
        "$(echo) ls",
        "$0",  # the agent's shell's $0 is not shown by the command
        "read x; $x -rf /",
    ],
)
def test_a_program_whose_name_is_not_known_still_asks(engine, text):
    assert _verdict(engine, text) == "ask"


def test_a_quoted_known_output_stays_one_word():
    line = parse('rm -rf "$(echo / /etc)"')
    assert ("-rf", "/ /etc") in [s.args for s in line.segments]


# -- nested substitutions and empty backticks (bash 5.2 checked with echo/printf in rm's place) --


@pytest.mark.parametrize(
    ("substitution", "output"),
    [
        ("$(echo $(echo rm))", "rm"),
        ("$(echo $(echo $(echo rm)))", "rm"),
        ('$(echo "$(echo rm)")', "rm"),
        ("$(echo `echo rm`)", "rm"),
        ("`echo \\`echo rm\\``", "rm"),  # `\`` inside backticks is a nested substitution
        ("$(printf %s $(echo rm))", "rm"),
        ("$(echo $(echo r)m)", "rm"),
        ("$(echo a$(echo b c)d)", "ab cd"),
        ('$(echo "a$(echo "b  c")d")', "ab  cd"),
        ("$(echo $(echo) x)", "x"),
        ("``", ""),
        ("$()", ""),
    ],
)
def test_known_output_of_nested_substitutions(substitution, output):
    assert known_output(substitution) == output


@pytest.mark.parametrize(
    "substitution",
    [
        "$(echo $(echo $(echo $(echo $(echo $(echo rm))))))",  # deeper than the bound
        "$(echo $(echo '*'))",  # the inner output is globbed by the outer echo
        "$(echo $(id))",
        '$(echo "$(echo $HOME)")',
        "`echo \\`id\\``",
        "$(echo $(echo -e '\\x72m'))",
    ],
)
def test_nested_output_that_cannot_be_known_is_not_guessed(substitution):
    assert known_output(substitution) is None


@pytest.mark.parametrize(
    "text",
    [
        "$(echo $(echo rm)) -rf /",
        "$(echo $(echo $(echo rm))) -rf /",
        '$(echo "$(echo rm)") -rf /',
        '"$(echo $(echo rm))" -rf /',
        "$(printf %s $(echo rm)) -rf /",
        "rm -rf $(echo $(echo /))",
        'rm -rf "$(echo "$(echo /)")"',
        "rm -rf `echo \\`echo /\\``",
        "`echo \\`echo rm\\`` -rf /",
        "``rm -rf / ``",
        "``rm -rf /``",
        "``rm`` -rf /",
        "rm -rf ``/",
        '"``"rm -rf /',
        "r``m -rf /",
        "echo ok; ``rm -rf / ``",
    ],
)
def test_nested_and_empty_substitutions_are_judged_as_bash_runs_them(engine, text):
    assert _verdict(engine, text) == "deny"


@pytest.mark.parametrize(
    "text",
    ["$(echo $(echo ls)) -la", "``ls -la ``", "echo '``rm -rf /``'", "`echo \\`echo ls\\``"],
)
def test_nested_and_empty_substitutions_of_safe_commands_are_not_denied(engine, text):
    assert _verdict(engine, text) != "deny"


@pytest.mark.parametrize(
    ("substitution", "output"),
    [
        ("$(echo r\\\nm)", "rm"),
        ("`echo r\\\nm`", "rm"),
        ("$(\\\necho rm)", "rm"),
        ('$(echo "r\\\nm")', "rm"),
    ],
)
def test_a_line_continuation_inside_a_substitution_is_removed(substitution, output):
    assert known_output(substitution) == output


def test_a_backslash_newline_inside_single_quotes_stays():
    assert known_output("$(echo 'r\\\nm')") is None  # a newline in '…': not read here


@pytest.mark.parametrize(
    "text", ["$(echo r\\\nm) -rf /", "`echo r\\\nm` -rf /", "rm -rf $(echo \\\n/)", "$(\\\necho rm) -rf /"]
)
def test_a_line_continuation_inside_a_substitution_does_not_hide_a_deny(engine, text):
    assert _verdict(engine, text) == "deny"


@pytest.mark.parametrize(
    ("text", "program", "args"),
    [
        ("``rm -rf / ``", "rm", ("-rf", "/")),
        ("``rm`` -rf /", "rm", ("-rf", "/")),
        ("r``m -rf /", "rm", ("-rf", "/")),
        ('echo "a``b" ``', "echo", ("ab",)),
        ("echo '``' x", "echo", ("``", "x")),  # text inside '…'
    ],
)
def test_an_empty_backtick_is_read_as_bash_reads_it(text, program, args):
    line = parse(text)
    assert not line.parse_error, line.error
    expanded = [s for s in line.segments if (s.program, s.args) == (program, args)]
    assert expanded, [(s.program, s.args) for s in line.segments]


@pytest.mark.parametrize(
    "text", ["``ls -la ``", "``echo hi`` there", "git status ``", 'echo "$(rm -rf build `` \\;)"']
)
def test_an_empty_backtick_beside_a_safe_command_is_not_asked(engine, text):
    assert _verdict(engine, text) == "none"


# -- IFS: unquoted expansions split where the command says (bash 5.2 checked with echo) -----------


@pytest.mark.parametrize(
    "text",
    [
        "IFS=,; x=rm,-rf,/; $x",
        "x=rm:-rf:/; IFS=:; $x",
        "IFS=,; rm -rf $(echo a,/)",
        "IFS=,; for d in $(echo /etc,/usr); do rm -rf $d; done",
    ],
)
def test_words_split_at_the_ifs_the_command_set_are_judged(engine, text):
    assert _verdict(engine, text) == "deny"


@pytest.mark.parametrize(
    "text",
    [
        "IFS=; x='rm -rf /'; $x",  # IFS empty: no splitting, the program is "rm -rf /"
        "IFS=, true; x=rm,-rf,/; $x",  # IFS set for `true` only
        "IFS=,; x=ls,-la; $x",
    ],
)
def test_ifs_splitting_of_safe_or_unsplit_words_is_not_denied(engine, text):
    assert _verdict(engine, text) == "none"


def test_an_ifs_the_command_cannot_show_makes_a_split_word_unknown(engine):
    assert _verdict(engine, "read IFS; x=rm,-rf,/; $x") == "ask"


@pytest.mark.parametrize(
    ("text", "ifs", "fields"),
    [
        ("rm,-rf,/", ",", ["rm", "-rf", "/"]),
        ("a,,b", ",", ["a", "", "b"]),
        ("a,", ",", ["a"]),
        (",a", ",", ["", "a"]),
        (" a , b ", " ,", ["a", "b"]),
        ("a b", "", ["a b"]),
        (" a  b ", " \t\n", ["a", "b"]),
    ],
)
def test_split_fields_as_bash_splits(text, ifs, fields):
    from rtk_policy.shell.values import split_fields

    assert split_fields(text, ifs) == fields


# -- a shell reading its script from a process substitution ---------------------------------------


@pytest.mark.parametrize(
    "text",
    ["bash <(echo rm -rf /)", "bash < <(echo rm -rf /)", "sh -x <(printf '%s' 'rm -rf /')",
     "bash < <(echo $(echo rm) -rf /)"],  # fmt: skip
)
def test_a_script_from_a_known_process_substitution_is_judged(engine, text):
    assert _verdict(engine, text) == "deny"


@pytest.mark.parametrize("text", ["bash <(cat script.sh)", "bash < <(cat script.sh)", "sh /dev/fd/3"])
def test_a_script_from_an_unknown_process_substitution_asks(engine, text):
    assert _verdict(engine, text) == "ask"


@pytest.mark.parametrize("text", ["bash <(echo ls)", "bash < <(echo git status)", "bash script.sh"])
def test_a_known_safe_script_from_a_process_substitution_is_not_asked(engine, text):
    assert _verdict(engine, text) == "none"


@pytest.mark.parametrize(
    "text",
    ["bash /dev/stdin <<< 'rm -rf /'", "sh /proc/self/fd/0 <<< 'rm -rf /'",
     "bash /dev/fd/0 <<< 'rm -rf /'", "bash - <<< 'rm -rf /'", "source /dev/fd/0 <<< 'rm -rf /'"],
)  # fmt: skip
def test_a_shell_reading_its_script_from_stdin_by_name_reads_the_here_string(engine, text):
    assert _verdict(engine, text) == "deny"


def test_a_safe_script_on_stdin_by_name_is_not_asked(engine):
    assert _verdict(engine, "bash - <<< 'ls'") == "none"
