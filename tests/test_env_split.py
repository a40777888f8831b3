"""GNU `env -S` splitting (shell/env_split): the words env makes of its string, checked against the
real `env` of this machine (a script that prints its argv stands in for the command)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from rtk_policy.shell.env_split import env_command, split
from rtk_policy.shell.words import make_word

STRINGS = [
    "PATH=/usr/bin",
    "rm -rf",
    "a\\_b \"c\\_d\" e",
    "a;b #c d",
    "'a\\'b' 'x\\_y' \"x\\_y\"",
    "a\\cb c",
    "\"t\\tt\" ${HOME}x \"q${HOME}\" 's${HOME}'",
    "x#y '' z",
]


@pytest.mark.parametrize(
    "string, expected",
    [
        ("PATH=/usr/bin", ["PATH=/usr/bin"]),
        ("rm\\_-rf\\_/", ["rm", "-rf", "/"]),
        ("a;b #c d", ["'a;b'"]),
        ("x ${HOME}/y", ["x", '"${HOME}"/y']),
        ("'it\\'s'", ["'it'\"'\"'s'"]),
    ],
)
def test_split_quotes_each_word_for_bash(string, expected):
    assert split(string) == expected


@pytest.mark.parametrize("string", ["echo $HOME", "a\\x41", "'open", "a\\ b"])
def test_strings_env_refuses_are_none(string):
    assert split(string) is None


def test_env_command_appends_the_words_after_the_string():
    rest = [make_word("reset", 30), make_word("'--hard'", 36)]
    word = env_command(make_word("'PATH=/usr/bin git'", 7), rest)
    assert word.value == "env PATH=/usr/bin git reset '--hard'"


@pytest.mark.skipif(shutil.which("env") is None or shutil.which("bash") is None, reason="no env")
@pytest.mark.parametrize("string", STRINGS)
def test_split_matches_gnu_env(string, tmp_path):
    version = subprocess.run(["env", "--version"], capture_output=True, text=True).stdout
    if "GNU" not in version:
        pytest.skip("not GNU env")
    show = tmp_path / "show"
    show.write_text('#!/bin/sh\nfor a in "$@"; do printf "%s\\0" "$a"; done\n')
    show.chmod(0o755)
    real = subprocess.run(["env", "-S", f"{show} {string}"], capture_output=True, text=True)
    words = split(string)
    assert words is not None
    ours = subprocess.run(
        ["bash", "-c", f"{show} {' '.join(words)}"], capture_output=True, text=True
    )
    assert real.returncode == 0
    assert ours.stdout == real.stdout


def test_an_s_without_its_string_is_no_nested_command():
    """`env -S` alone (env refuses it) is one segment, not a loop of nested `env -S`."""
    from rtk_policy.shell import parse

    for text in ("env -S", "env --split-string", "env -S -S"):
        line = parse(text)
        assert line.error == "" and len(line.segments) <= 2
