"""Shell-stage readings of issue 18's gaps: BSD xargs options, programs spelt otherwise (a
case-insensitive file system, Git for Windows) and the `cd` of a called function."""

from __future__ import annotations

import pytest

from rtk_policy.shell import parse
from rtk_policy.shell.nested import xargs_command
from rtk_policy.shell.words import make_word, program_name, spelt_otherwise


def _words(text: str) -> list:
    out, at = [], 0
    for raw in text.split(" "):
        out.append(make_word(raw, at))
        at += len(raw) + 1
    return out


@pytest.mark.parametrize(
    "text, command",
    [
        ("xargs -J {} rm -rf {}", "rm -rf {}"),
        ("xargs -R 2 python -c x", "python -c x"),
        ("xargs -S 4096 awk x", "awk x"),
        ("xargs -0J {} rm {}", "rm {}"),
        ("xargs -0n 1 rm", "rm"),
        ("xargs -n1 rm", "rm"),
        ("xargs -0r rm", "rm"),
        ("xargs -i rm {}", "rm {}"),
        ("xargs -I {} sh -c x", "sh -c x"),
    ],
)
def test_xargs_options_that_take_a_value(text, command):
    """The command after xargs's options, BSD/macOS -J/-R/-S and option clusters included."""
    assert " ".join(w.value for w in xargs_command(_words(text))) == command


@pytest.mark.parametrize(
    "word, name",
    [
        ("RM", "rm"),
        ("/usr/bin/RM", "rm"),
        ("git.exe", "git"),
        ("GIT.EXE", "git"),
        ("C:\\Program Files\\Git\\bin\\git.exe", "git"),
        ("/c/Program Files/Git/bin/git.exe", "git"),
        ("HEAD", "head"),
        ("rm", "rm"),
        ("[", "["),
        ("7z", "7z"),
        (".exe", ".exe"),
    ],
)
def test_program_name_folds_case_exe_and_windows_paths(word, name):
    """`program_name`, and `spelt_otherwise` exactly when it folds something."""
    assert program_name(word) == name
    assert spelt_otherwise(word) == (name != word.rsplit("/", 1)[-1])


@pytest.mark.parametrize(
    "text, program, typed",
    [
        ("RM -rf /", "rm", "RM"),
        ("git.exe reset --hard", "git", "git.exe"),
        ('"C:\\Program Files\\Git\\bin\\git.exe" reset --hard', "git", "C:\\Program Files\\Git\\bin\\git.exe"),
        ("HEAD http://localhost/", "head", "HEAD"),
    ],
)
def test_a_program_spelt_otherwise_is_judged_as_it_and_never_rewritten(text, program, typed):
    """The segment's program is the folded name, program_path and raw_words keep the typed one,
    and the segment is not rewritable, saying why."""
    (segment,) = parse(text).segments
    assert segment.program == program
    assert segment.program_path == typed
    assert not segment.rewritable
    assert "spelt otherwise" in segment.rewrite_refusal


def test_wrappers_and_runners_spelt_otherwise_are_looked_through():
    """`SUDO rm`, `XARGS rm`, `BASH -c`: the command they run is a segment of its own."""
    assert [s.program for s in parse("SUDO rm -rf /").segments] == ["rm"]
    assert "rm" in [s.program for s in parse("echo / | XARGS rm -rf").segments]
    assert "rm" in [s.program for s in parse("BASH -c 'rm -rf /'").segments]


def test_lower_case_programs_are_unchanged():
    """An ordinary command keeps its program and its rewritability."""
    (segment,) = parse("git status").segments
    assert segment.program == "git" and segment.rewritable


def test_a_called_functions_cd_moves_the_folder_of_later_commands():
    """`f(){ cd ..; }; f && rm -rf build`: rm runs in .. (as after a top-level cd)."""
    last = parse("cleanup() { cd ..; }; cleanup && rm -rf build").segments[-1]
    assert (last.program, last.cwd) == ("rm", "..")
    assert last.paths == ("../build",)


@pytest.mark.parametrize(
    "text",
    [
        "cleanup() { cd ..; }; rm -rf build",  # never called
        "cleanup() ( cd ..; ); cleanup && rm -rf build",  # a body in a subshell
        "cleanup() { (cd ..); }; cleanup && rm -rf build",  # a subshell in the body
    ],
)
def test_a_cd_that_does_not_move_this_shell_leaves_the_folder(text):
    """Only a called body's own cd counts."""
    last = parse(text).segments[-1]
    assert (last.program, last.cwd) == ("rm", "")


def test_a_called_functions_cd_takes_its_arguments():
    """`f(){ cd "$1"; }; f /etc && rm -rf *`: rm runs in /etc."""
    last = parse('f() { cd "$1"; }; f /etc && rm -rf *').segments[-1]
    assert (last.program, last.cwd) == ("rm", "/etc")


@pytest.fixture(scope="module")
def engine():
    """The shipped packs, audit off, no user config."""
    from rtk_policy.config.load import Config
    from rtk_policy.engine.pipeline import Engine
    from rtk_policy.policy import load_policy_set
    from rtk_policy.policy.load import packs_dir

    packs = packs_dir()
    assert packs is not None
    return Engine(policies=load_policy_set([packs]), config=Config(audit_enabled=False))


@pytest.mark.parametrize("text", ["HEAD README.md", "RTK git status", "Git status", "GIT.EXE status"])
def test_a_command_spelt_otherwise_is_never_rewritten(engine, text, tmp_path):
    """No rewrite (not even the identity of an `rtk` command) for a program spelt otherwise."""
    outcome = engine.evaluate(text, engine.context(cwd=str(tmp_path)))
    assert outcome.decision.rewritten is None


@pytest.mark.parametrize("text", ["head README.md", "git status"])
def test_the_lower_case_spelling_is_still_rewritten(engine, text, tmp_path):
    """The same commands typed as usual keep their rewrite."""
    outcome = engine.evaluate(text, engine.context(cwd=str(tmp_path)))
    assert outcome.decision.rewritten is not None and outcome.decision.rewritten.startswith("rtk ")
