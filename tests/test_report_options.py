"""Every command that reports takes `--quiet` and `--json` (issue 20.4): `--quiet` prints nothing
on stdout and keeps the exit code, `--json` prints JSON (one object, or one object a line where
the command streams records). Run through the console script, as a user or a CI job does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rtk_policy.main import build_parser

#: the commands that do not report: `hook` answers an agent's protocol, `serve` runs until idle,
#: `audit-writer` is a service run by systemd or launchd until stopped
NOT_REPORTING = {"hook", "serve", "audit-writer"}


def subcommand_parsers():
    """(name, parser) of every subcommand, the audit actions as `audit tail` and so on."""
    parser = build_parser()
    found = []
    for action in parser._subparsers._group_actions:  # noqa: SLF001 - argparse keeps them there
        for name, sub in action.choices.items():
            nested = [a for a in sub._actions if a.__class__.__name__ == "_SubParsersAction"]
            if nested:
                found += [(f"{name} {n}", p) for n, p in nested[0].choices.items()]
            else:
                found.append((name, sub))
    return found


def test_every_reporting_command_takes_quiet_and_json():
    missing = []
    for name, sub in subcommand_parsers():
        if name in NOT_REPORTING:
            continue
        options = {o for action in sub._actions for o in action.option_strings}
        missing += [f"{name} {flag}" for flag in ("--quiet", "-q", "--json") if flag not in options]
    assert missing == []
    assert len(subcommand_parsers()) >= 13  # the list above is really every command


@pytest.fixture(scope="module")
def user(tmp_path_factory):
    """A user with a project (a trusted-to-be `.rtk-policy/`), an audit log of two decisions and
    a user-wide Claude hook."""
    root = tmp_path_factory.mktemp("user")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
    for name, sub in (("HOME", "home"), ("XDG_CONFIG_HOME", "config"),
                      ("XDG_STATE_HOME", "state"), ("XDG_CACHE_HOME", "cache"),
                      ("XDG_RUNTIME_DIR", "run"), ("TMPDIR", "tmp")):  # fmt: skip
        (root / sub).mkdir(mode=0o700)
        env[name] = str(root / sub)
    project = root / "project"
    (project / ".rtk-policy").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    user = (env, project)
    for words in (("init", "--global"), ("rewrite", "git", "status"), ("rewrite", "ls")):
        cli(user, *words)
    return user


def cli(user, *words: str) -> subprocess.CompletedProcess[str]:
    env, project = user
    return subprocess.run(
        [sys.executable, "-m", "rtk_policy", *words],
        cwd=project, env=env, capture_output=True, text=True, timeout=300,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip


def audit_log(user) -> str:
    return str(Path(user[0]["XDG_STATE_HOME"]) / "rtk-policy" / "audit.jsonl")


#: (words, what the JSON holds: a key of the object, or "lines" for one object a line)
COMMANDS = [
    (("rewrite", "git", "status"), "verdict"),
    (("explain", "git", "log", "--oneline"), "segments"),
    (("check",), "backends"),
    (("init", "--global"), "file"),
    (("doctor",), "findings"),
    (("trust", "--list"), "trusted"),
    (("audit", "tail"), "lines"),
    (("audit", "stats"), "verdicts"),
    (("audit", "verify"), "records"),
    (("test",), "lines?"),
    (("replay", "{log}"), "changes?"),
]


def _words(user, words, flag=None):
    """The command's words, `flag` right after the command's name (`rewrite` and `explain` take
    every word after the command's first as part of it, options included)."""
    words = [w.replace("{log}", audit_log(user)) for w in words]
    at = 2 if words[0] == "audit" else 1
    return words[:at] + ([flag] if flag else []) + words[at:]


@pytest.mark.parametrize(("words", "holds"), COMMANDS, ids=[" ".join(w) for w, _ in COMMANDS])
def test_quiet_prints_nothing_and_keeps_the_exit_code(user, words, holds):
    plain = cli(user, *_words(user, words))
    quiet = cli(user, *_words(user, words, "--quiet"))
    assert plain.stdout.strip(), plain.stderr  # there was something to keep quiet about
    assert (quiet.returncode, quiet.stdout) == (plain.returncode, "")


@pytest.mark.parametrize(("words", "holds"), COMMANDS, ids=[" ".join(w) for w, _ in COMMANDS])
def test_json_is_json(user, words, holds):
    plain = cli(user, *_words(user, words))
    done = cli(user, *_words(user, words, "--json"))
    assert done.returncode == plain.returncode, done.stderr
    if holds == "lines":
        records = [json.loads(line) for line in done.stdout.splitlines()]
        assert records and all(isinstance(r, dict) and "verdict" in r for r in records)
        return
    data = json.loads(done.stdout)
    assert isinstance(data, dict)
    if not holds.endswith("?"):
        assert holds in data, sorted(data)


def test_trust_and_uninstall_json(user):
    env, project = user
    trusted = json.loads(cli(user, "trust", "--json").stdout)
    assert trusted["ok"] is True and trusted["layer"] == str(project / ".rtk-policy")
    listed = json.loads(cli(user, "trust", "--list", "--json").stdout)["trusted"]
    assert [(t["layer"], t["state"]) for t in listed] == [(str(project / ".rtk-policy"), "trusted")]
    revoked = json.loads(cli(user, "trust", "--revoke", "--json").stdout)
    assert revoked["ok"] is True and revoked["action"] == "revoke"
    again = cli(user, "trust", "--revoke", "--json")
    assert again.returncode == 1 and json.loads(again.stdout)["ok"] is False
    removed = json.loads(cli(user, "uninstall", "--global", "--json").stdout)
    settings = str(Path(env["HOME"]) / ".claude" / "settings.json")
    assert removed["ok"] is True and removed["files"][0]["file"] == settings
    assert removed["files"][0]["changed"] is True
    assert cli(user, "init", "--global", "--quiet").stdout == ""  # put back for the others


def test_check_json_on_a_broken_policy(user, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nrules:\n  - id: x\n    decision: deny\n    match: 'nope('\n")
    done = cli(user, "check", str(bad), "--json")
    data = json.loads(done.stdout)
    assert done.returncode == 1 and data["ok"] is False
    assert data["backends"][0]["problems"]
