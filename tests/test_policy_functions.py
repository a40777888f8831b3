"""Custom CEL functions: the Python implementations and the same results through both backends."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rtk_policy.policy import all_backends
from rtk_policy.policy.bash_pattern import bash_rule_matches
from rtk_policy.policy.functions import agent_name, agent_rule, expand_home, glob, path_under, re_find

CORPUS = Path("/work/shared/reference/rtk_cases_public.json")
CASES = json.loads(CORPUS.read_text()) if CORPUS.is_file() else {}
BACKENDS = all_backends()


@pytest.mark.skipif(not CASES, reason="reference corpus not present")
@pytest.mark.parametrize(
    "case", CASES.get("pattern_match", []), ids=lambda c: f"{c['pattern']}|{c['cmd']}"
)
def test_corpus_pattern_match(case):
    assert bash_rule_matches(case["pattern"], case["cmd"]) is case["expected"]


@pytest.mark.parametrize(
    "pattern, text, expected",
    [
        ("sudo:*", "sudo rm -rf /", True),
        ("sudo:*", "sudoedit /etc/hosts", False),
        ("git *", "git", True),
        ("git *", "git log", True),
        ("git:*", "gitk", False),
        ("* --force", "git push --force", True),
        ("git -C * diff:*", "git -C /path diff", True),
        ("git -C * diff:*", "git -C /path diff --stat", True),
        ("git -C * diff:*", "git -C /path status", False),
        ("git status", "git status\rrm -rf ~", False),
        ("git  status", "git\tstatus  -s", True),
        ("git status", "git \\\nstatus", True),
        ("*", "", True),
        ("*:*", "anything at all", True),
        ("rm -rf /", "rm -rf /tmp", False),
    ],
)
def test_bash_rule_matches_reference_examples(pattern, text, expected):
    assert bash_rule_matches(pattern, text) is expected


def test_path_helpers(monkeypatch):
    monkeypatch.setenv("HOME", "/home/u")
    assert expand_home("~/x") == "/home/u/x" and expand_home("$HOME/y") == "/home/u/y"
    assert expand_home("${HOME}") == "/home/u" and expand_home("~other") == "~other"
    assert path_under("~/.ssh/id_rsa", "/home/u") and path_under("/home/u/a/../b", "~")
    assert not path_under("/home/user2", "/home/u") and not path_under("/etc/../tmp", "/etc")
    assert path_under("/anything", "/")


def test_glob_and_re_find():
    assert glob("*.env", "config/prod.env") and not glob("*.env", "x.envrc") and glob("a?c", "abc")
    assert re_find(r"(\d+)\.\d+", "version 1.2.3") == "1" and re_find("b.", "abc") == "bc"
    assert re_find("z", "abc") == ""


# (expression, expected result) evaluated on every backend with segment.args = ["a b", "c"]
TABLE = [
    ('bash_rule_matches("git *", "git log")', True),
    ('glob("*.txt", "dir/x.txt")', True),
    ('shell_quote("a b")', "'a b'"),
    ("shell_join(segment.args)", "'a b' c"),
    ('basename("/usr/bin/rm")', "rm"),
    ('dirname("/usr/bin/rm")', "/usr/bin"),
    ('path_under("/etc/passwd", "/etc")', True),
    ('expand_home("/abs")', "/abs"),
    ('find_actions(["-exec", "echo", "-delete", ";", "-delete"]).join(" ")', "-exec -delete"),
    ('find_actions(["-ok", "rm", "{}", "+", "-print"]) == ["-ok", "-print"]', True),
    ('find_actions(["-execdir", "rm", "-delete"]) == ["-execdir"]', True),
    ('git_restore_discards(["-C", "x", "restore", "-s", "HEAD", "f"])', True),
    ('git_restore_discards(["restore", "--staged", "--pathspec-from-file", "--worktree"])', False),
    (
        'without_literals("system(\'rm x\'); run(\\"rm x\\"); f(\'rm x \')", ["rm x"])',
        "system(); run(); f('rm x ')",
    ),
    ('re_find("-(\\\\w+)", "rm -rf /")', "rf"),
    ('segment.args.join("+")', "a b+c"),
    ('"a,b".split(",") == ["a", "b"]', True),
    ('"MiX".lowerAscii() + "x".upperAscii() + " t ".trim() + "aa".replace("a", "b")', "mixXtbb"),
    ('segment.args.exists(a, a.startsWith("a ")) && !segment.args.all(a, a.size() == 1)', True),
    ('segment.args.filter(a, a.contains(" ")).size() == 1', True),
]


@pytest.mark.parametrize("backend", BACKENDS, ids=lambda b: b.name)
@pytest.mark.parametrize("source, expected", TABLE, ids=[t[0] for t in TABLE])
def test_functions_through_backends(backend, source, expected):
    kind = "bool" if isinstance(expected, bool) else "string"
    program, _ = backend.compile(source, kind)
    activation = backend.activation({"segment": {"args": ["a b", "c"]}})
    run = backend.run_bool if kind == "bool" else backend.run_string
    assert run(program, activation) == expected


def test_home_expansion_through_backends(monkeypatch):
    monkeypatch.setenv("HOME", os.sep + "h")
    for backend in BACKENDS:
        program, _ = backend.compile('expand_home("~/x") == "/h/x"', "bool")
        assert backend.run_bool(program, backend.activation({})) is True


@pytest.mark.parametrize(
    ("agent", "expected"),
    [
        ("claude", "Claude Code deny rule Bash(git push)"),
        ("gemini", "Gemini CLI deny rule run_shell_command(git push)"),
        ("cursor", "Cursor deny rule Shell(git push)"),
        ("copilot", "Copilot CLI deny rule shell(git push)"),
        ("codex", "Codex deny rule prefix_rule for 'git push'"),
        ("unknown-agent", "Claude Code deny rule Bash(git push)"),
    ],
)
def test_an_agents_rule_is_named_as_its_user_wrote_it(agent, expected):
    """A deny message names the agent whose rule matched, in that agent's spelling."""
    assert agent_rule(agent, "deny", "git push") == expected
    assert expected.startswith(agent_name(agent) + " deny rule ")
