"""A function body bash never runs is not judged as if it ran (`shell/functions.py`,
`Segment.uncalled`): its asks go, its denies stay, and every call keeps the body's verdict.

Each shape's claim (called or not) is checked against the real bash first, with a body that
prints a marker, so the table below is bash's behaviour, not our reading of it.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from rtk_policy.config.load import Config
from rtk_policy.engine.pipeline import Engine
from rtk_policy.policy import load_policy_set
from rtk_policy.policy.load import packs_dir
from rtk_policy.shell import parse

PROJECT = "/home/dev/project"
BODY = "{ rm -rf ../outside; }"  # asked where it runs: it deletes outside the project

#: (the input with `f` defined by BODY as `F`, whether bash calls it)
SHAPES = [
    ("F", False),
    ("F; f", True),
    ("F; ! f", True),
    ("F; f; echo done", True),
    ("F; f &", True),
    ("F; (f)", True),
    ("F; echo $(f)", True),
    ("F; trap f EXIT", True),
    ("F; time -- f", True),
    ("F; time -p f", True),
    ("g(){ f; }; F; g", True),  # g's body calls the f defined by the time g runs
    ("F; f(){ echo other; }; f", False),  # the later definition replaces it
    ("F; false && f(){ echo other; }; f", True),  # a conditional redefinition may not happen
    ("F; if false; then f(){ echo other; }; fi; f", True),
    ("( F ); f", False),  # defined in a subshell: gone after it
    ("F; !f", False),  # one word: a program named `!f`
    ("F; X=1 ! f", False),  # after an assignment `!` is a program name
    ("F; sh -c f", False),  # a child shell does not see an unexported function
    ("F; bash -c 'f'", False),
    ('F; time "--" f', False),
    ("F; X=1 time f", False),  # after an assignment `time` is the program /usr/bin/time
    ("F; time f", True),  # the keyword takes only an unquoted `--`: runs a program `--`
    ("F; export -f f; bash -c f", True),
    ("F; g(){ f(){ echo other; }; }; f", True),  # g never runs, so f stays the first one
]


def _text(shape: str, body: str) -> str:
    return shape.replace("F", "f() " + body)


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize(("shape", "called"), SHAPES)
def test_the_table_is_what_bash_does(shape, called, tmp_path):
    """With a body that prints a marker, real bash prints it exactly when the table says."""
    script = _text(shape, "{ echo CALLED; }")
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=tmp_path,
                          timeout=10, env={"PATH": "/usr/bin:/bin"}, check=False)  # fmt: skip
    assert ("CALLED" in done.stdout) is called, (script, done.stdout, done.stderr)


@pytest.mark.parametrize(("shape", "called"), SHAPES)
def test_the_body_is_uncalled_exactly_when_bash_skips_it(shape, called):
    """The body's `rm` is marked uncalled exactly when bash does not call the function."""
    body = [s for s in parse(_text(shape, BODY)).segments if s.argv[:1] == ("rm",)]
    assert body and all(s.uncalled is not called for s in body), body


@pytest.mark.parametrize(
    "text",
    [
        "f(){ rm -rf ../x; }; $g",  # a computed program may be f
        'f(){ rm -rf ../x; }; eval "$cmd"',
        "f(){ rm -rf ../x; }; mapfile -C f -c 1 < list",
        "f(){ rm -rf ../x; }; declare -fx f; sh -c f",
        "set -a; f(){ rm -rf ../x; }; bash -c f",
        "f(){ rm -rf ../x; }; f(",  # a parse error
    ],
)
def test_in_doubt_the_body_counts(text):
    """A computed program, an unread eval, a callback builtin, a possible export, a parse
    error: the body is judged as today."""
    body = [s for s in parse(text).segments if s.program == "rm"]
    assert body and not any(s.uncalled for s in body)


@pytest.fixture(scope="module")
def engine() -> Engine:
    """The shipped packs."""
    return Engine(policies=load_policy_set([str(packs_dir())]), config=Config(audit_enabled=False))


def _verdict(engine: Engine, command: str) -> str:
    context = engine.context(agent="claude", cwd=PROJECT, project_dir=PROJECT)
    return engine.decide(command, context).verdict


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("cleanup() { rm -rf ../outside; }", "none"),
        ("cleanup() { rm -rf ../outside; }; cleanup", "ask"),
        ("cleanup() { rm -rf ../outside; }; cleanup() { rm -rf build; }; cleanup", "none"),
        ("( cleanup() { rm -rf ../outside; } ); cleanup", "none"),
        ("cleanup() { rm -rf ../outside; }; sh -c cleanup", "none"),
        ("f(){ rm -rf /; }; f", "deny"),
        ("f(){ rm -rf /; }; X=1 time f", "deny"),  # never called: kept (the deny of a body stays)
        ("cleanup() { rm -rf ../outside; }; X=1 time cleanup", "none"),  # /usr/bin/time runs
        ("cleanup() { rm -rf ../outside; }; time cleanup", "ask"),  # the keyword: called
        ("f(){ rm -rf /; }; ! f", "deny"),
        ("f(){ rm -rf /; }; f; echo done", "deny"),
        ("f(){ rm -rf /; }; export -f f; bash -c f", "deny"),
        # never called, the deny stays: a shell that lasts between calls could call it later
        ("f(){ rm -rf /; }", "deny"),
        ("f(){ rm -rf /; }; f(){ ls; }; f", "deny"),
        (":(){ :|:& }", "deny"),
        # an uncalled body has no opinion: it never makes the whole an allow
        ("f(){ git status; } 2>&1 | tail -5", "none"),
    ],
)
def test_decisions(engine, command, expected):
    """Asks of bodies bash never runs go; denies and every call's verdict stay."""
    assert _verdict(engine, command) == expected
