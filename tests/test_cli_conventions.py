"""CLI conventions of the console script: usage errors exit 64 (EX_USAGE), apart from rewrite's
verdict codes 0-3 (2 is "denied"), and --version names the installed version."""

from __future__ import annotations

import subprocess
import sys

import pytest
from fakes import trust_workspace

import rtk_policy

EX_USAGE = 64


def run(*words: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rtk_policy", *words],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize(
    "words",
    [
        ("--no-such-option",),
        ("explain",),
        ("check", "--backend", "no-such-backend"),
        ("audit", "no-such-action"),
        ("rewrite",),
        ("rewrite", "--batch", "-", "--jobs", "-1"),
        (),
    ],
    ids=["unknown-option", "missing-argument", "bad-choice", "bad-action", "rewrite-no-command",
         "negative-jobs", "no-subcommand"],
)
def test_usage_errors_exit_64_never_the_deny_code(words: tuple[str, ...]) -> None:
    done = run(*words)
    assert done.returncode == EX_USAGE, done.stderr
    assert done.stdout == "" and done.stderr.strip()


def test_a_denied_command_still_exits_2() -> None:
    done = run("rewrite", "sudo rm -rf /")
    assert done.returncode == 2 and "denied" in done.stderr


def test_version_names_the_installed_version() -> None:
    done = run("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"rtk-policy {rtk_policy.__version__}"


def test_rewrite_json_names_the_verdict_that_exit_1_leaves_open(tmp_path):
    """Exit 1 is both "allowed, not rewritten" and "no opinion": `--json` tells them apart."""
    import json

    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"allow": ["Bash(echo:*)"]}}), encoding="utf-8"
    )
    trust_workspace(tmp_path)  # a project's allow rules count only in a trusted workspace

    def answer(command: str) -> tuple[int, dict]:
        done = subprocess.run(
            [sys.executable, "-m", "rtk_policy", "rewrite", "--json", command],
            capture_output=True, text=True, timeout=120, cwd=tmp_path, stdin=subprocess.DEVNULL,
        )
        return done.returncode, json.loads(done.stdout)

    allowed, unknown = answer("echo hi"), answer("whoami")
    assert allowed[0] == unknown[0] == 1
    assert allowed[1]["verdict"] == "allow" and unknown[1]["verdict"] == "none"
    code, denied = answer("rm -rf /")
    assert code == 2 and denied["verdict"] == "deny" and denied["exit"] == 2


def test_every_subcommand_takes_its_options_as_the_parameters_of_run() -> None:
    """`main` hands a subcommand's parsed options to its `run` by their dests: each dest must be a
    keyword parameter of that `run`, and `run` must want no option the parser does not give
    (`--quiet` is main's own; `test --json` becomes `format`)."""
    import argparse
    import importlib
    import inspect

    from rtk_policy.main import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    wrong = {}
    for name, parser in sub.choices.items():
        if name == "hook":  # main builds its HookOptions
            continue
        actions = list(parser._actions)
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                actions += [a for choice in action.choices.values() for a in choice._actions]
        dests = {a.dest for a in actions} - {"help", "quiet"}
        if name == "test":
            dests.discard("as_json")
        run = importlib.import_module(f"rtk_policy.commands.{name.replace('-', '_')}").run
        params = inspect.signature(run).parameters
        keywords = {p for p, v in params.items() if v.kind is inspect.Parameter.KEYWORD_ONLY}
        if dests != keywords - {"stdin", "stdout", "stderr"}:
            wrong[name] = sorted(dests ^ (keywords - {"stdin", "stdout", "stderr"}))
    assert wrong == {}
