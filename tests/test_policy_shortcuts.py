"""The policy stage's shortcuts for bulk speed (issue 20 point 9) give the values of the long way.

- `PolicySet._loop_steps`: a plan's steps less the rules left out and, on a segment that cannot be
  rewritten, the rewrites, remembered by the plan object and what else they depend on;
- `functions_git._runs`: the subcommand test that lets `git_restore_discards` and
  `git_push_branches` skip parsing the words of other subcommands;
- `rtk_excluded` with no `exclude_commands`;
- `writes.by_words`: a program whose special reads its own words gets no `Args` worked out, and
  `writes_special.git` reads nothing for a subcommand that names no written path;
- `guards/code.py`: forms with one source share one compiled code object, each with its own
  constants.
"""

from __future__ import annotations

import itertools
import os

import pytest

from rtk_policy.policy import load_policy_set, paths, writes_special
from rtk_policy.policy import writes as writes_module
from rtk_policy.policy.functions_git import _runs, git_push_branches, git_restore_discards
from rtk_policy.policy.functions_rtk import rtk_excluded
from rtk_policy.policy.guards import code as guard_code
from rtk_policy.policy.guards.guard import guard_functions
from rtk_policy.policy.model import Context
from rtk_policy.policy.policyset import _needs_writes
from rtk_policy.shell import parse
from rtk_policy.shell.git_options import parse as git_parse
from rtk_policy.util import record

PACK = """
name: shortcuts
kind: permission
rules:
  - id: ask-rm
    decision: ask
    match: segment.program == "rm"
  - id: deny-rm-rf
    decision: deny
    match: segment.program == "rm" && "-rf" in segment.args
  - id: ask-out-txt
    decision: ask
    match: segment.program != "rm" && tool.paths_written.exists(p, p.endsWith("/out.txt"))
  - id: ask-nothing-written
    decision: ask
    match: segment.program == "ls" && !tool.paths_written.exists(p, true)
  - id: ask-written-or-pwd
    decision: ask
    match: segment.program != "rm" && (tool.paths_written.exists(p, true) || segment.program == "pwd")
---
name: shortcut-rewrites
kind: rewrite
when: segment.rewritable && !segment.negated
rules:
  - id: rm-verbose
    match: segment.program == "rm"
    rewrite: '"rm -v " + segment.args.join(" ")'
"""


@pytest.fixture
def policy_set(tmp_path):
    folder = tmp_path / "packs"
    folder.mkdir()
    for number, text in enumerate(PACK.split("---\n")):
        (folder / f"p{number}.yaml").write_text(text)
    return load_policy_set([str(folder)], use_cache=False)


def _ids(evaluation) -> tuple[list[str], str | None]:
    (result,) = evaluation.results
    rewrite = result.rewrite.rule.id if result.rewrite is not None else None
    return sorted(hit.rule.id for hit in result.permission_hits), rewrite


def test_left_out_rules_follow_the_context_on_the_same_plan(policy_set):
    line = parse("rm -rf build")
    everything = Context(cwd="/tmp")
    without_deny = Context(cwd="/tmp", disabled_rules=("deny-rm-rf",))
    for _ in range(3):  # the same plan object each time: its loop is remembered, never stale
        assert _ids(policy_set.evaluate(line, everything)) == (
            ["ask-rm", "deny-rm-rf"],
            "rm-verbose",
        )
        assert _ids(policy_set.evaluate(line, without_deny)) == (["ask-rm"], "rm-verbose")


def test_a_segment_that_cannot_be_rewritten_gets_no_rewrite_on_the_same_plan(policy_set):
    context = Context(cwd="/tmp")
    rewritable = parse("rm -rf build")
    refused = record.evolve(rewritable, rewrite_refused=True)
    negated = parse("! rm -rf build")
    for _ in range(2):
        assert _ids(policy_set.evaluate(rewritable, context)) == (
            ["ask-rm", "deny-rm-rf"],
            "rm-verbose",
        )
        assert _ids(policy_set.evaluate(refused, context)) == (["ask-rm", "deny-rm-rf"], None)
        assert _ids(policy_set.evaluate(negated, context))[1] is None  # the file's `when`


def test_the_loop_of_a_plan_lists_its_steps_in_order(policy_set):
    steps = policy_set._planner.plan("rm")
    loop = policy_set._loop_steps(steps, frozenset(), True)
    assert [step[:2] for step in loop] == [tuple(step) for step in steps]
    ids = [policy_set.compiled_rules[index].rule.id for index, *_ in loop]
    assert ids == ["ask-rm", "deny-rm-rf", "rm-verbose"]
    assert [step[2] for step in loop] == [False, False, True]
    assert [step[3] is None for step in loop] == [True, True, False]  # only p1 has a `when`
    unrewritable = policy_set._loop_steps(steps, frozenset({"ask-rm"}), False)
    assert [policy_set.compiled_rules[i].rule.id for i, *_ in unrewritable] == ["deny-rm-rf"]
    assert policy_set._loop_steps(steps, frozenset(), True) is loop  # remembered


_GIT_WORDS = ["-C", "dir", "-c", "k=v", "--no-pager", "-", "restore", "push", "status",
              "--staged", "f", "origin", "main", "--"]  # fmt: skip


def test_runs_names_the_subcommand_parse_finds():
    for size in range(4):
        for words in itertools.product(_GIT_WORDS, repeat=size):
            args = list(words)
            for sub in ("restore", "push", "status"):
                assert _runs(args, sub) == (git_parse(args).sub == sub), args


@pytest.mark.parametrize(
    ("args", "discards"),
    [
        (["restore", "f"], True),
        (["-C", "repo", "restore", "f"], True),
        (["-c", "a=b", "restore", "--staged", "f"], False),
        (["-C", "restore", "status", "f"], False),  # -C takes `restore`: the subcommand is status
        (["status", "restore"], False),
        ([], False),
    ],
)
def test_restore_discards_after_git_options(args, discards):
    assert git_restore_discards(args) is discards


@pytest.mark.parametrize(
    ("args", "branches"),
    [
        (["push", "origin", "main"], ["main"]),
        (["-C", "x", "push"], ["HEAD"]),
        (["-C", "push", "status"], []),
        (["log", "push"], []),
    ],
)
def test_push_branches_after_git_options(args, branches):
    assert git_push_branches(args) == branches


def test_rtk_excluded_with_and_without_entries():
    assert rtk_excluded("git status", ["git", "status"], []) is False
    assert rtk_excluded("git status", ["git", "status"], ["git"]) is True
    assert rtk_excluded("cargo test", ["cargo", "test"], ["git"]) is False


def test_writers_by_words_have_only_their_special():
    plain = writes_module.Writer(targets="none")
    by_words = {name: spec for name, spec in writes_module.WRITERS.items() if spec.own_args}
    assert {"git", "tar", "curl", "wget", "find", "dd", "cpio", "patch"} <= set(by_words)
    for name, spec in by_words.items():
        assert spec.special is not None, name
        assert writes_module.Writer(targets="none", special=spec.special, own_args=True) == spec
        assert plain.targets == spec.targets


@pytest.mark.parametrize(
    "command",
    [
        "git clone https://x/y.git",
        "git -C repo rm -r src",
        "git restore --source HEAD f",
        "git checkout main -- a b",
        "git config -f cfg k v",
        "git status",
        "git -C repo log -p",
        "tar -xzf a.tgz -C out",
        "curl -o out.html https://x",
        "wget -P dl https://x/a.zip",
        "find . -name '*.o' -delete",
        "dd if=/dev/zero of=disk.img",
        "cpio -i -D here",
        "patch -o out.c",
    ],
)
def test_by_words_writes_what_the_long_way_writes(command):
    (segment,) = parse(command).segments
    spec = writes_module.WRITERS[segment.program]
    args = writes_module.read_args(segment.args, spec.short_values, spec.long_values)
    assert writes_module._targets(segment.args, spec) == spec.special(segment.args, args)


def test_git_writes_nothing_for_the_other_subcommands():
    for sub in ("status", "log", "diff", "commit", "push", "fetch"):
        assert writes_special.git(("-C", "d", sub, "--", "f"), writes_module.NO_ARGS) == []
    assert writes_special.git(("-C", "d", "rm", "f"), writes_module.NO_ARGS) == [("d/f", True)]


def _program_is(name: str) -> tuple:
    return ("rel", "eq", ("dot", ("ident", "segment"), "program"), ("lit", name))


def test_forms_of_one_source_share_code_but_not_constants():
    functions = guard_functions()
    git = guard_code.form_function(_program_is("git"), functions)
    npm = guard_code.form_function(_program_is("npm"), functions)
    assert git.__code__ is npm.__code__  # compiled once
    env = {"segment": {"program": "git"}}
    assert git(env) is True
    assert npm(env) is False
    assert npm({"segment": {"program": "npm"}}) is True


def test_realpath_is_os_realpath(tmp_path):
    (tmp_path / "dir" / "sub").mkdir(parents=True)
    (tmp_path / "dir" / "file").write_text("x")
    (tmp_path / "link").symlink_to(tmp_path / "dir")
    (tmp_path / "dir" / "rel").symlink_to("sub")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    root = str(tmp_path)
    tails = ["dir", "dir/", "dir/file", "dir/file/x", "dir//sub", "link", "link/sub/new",
             "dir/rel/x", "dangling", "dangling/x", "loop", "loop/x", "missing/a/b", "dir/./sub",
             "dir/../link", "link/..", ""]  # fmt: skip
    for tail in tails:
        path = f"{root}/{tail}"
        assert paths.realpath(path) == os.path.realpath(path), path
    for path in ["/", "//", "//tmp", "/tmp/", "relative/x", ".", "../x"]:
        assert paths.realpath(path) == os.path.realpath(path), path
    with pytest.raises(ValueError):
        paths.realpath(f"{root}/a\0b")
    assert paths.resolved(f"{root}/a\0b") == f"{root}/a\0b"
    assert paths.resolved(f"{root}/link/") == f"{root}/dir/"


def test_rules_that_need_a_written_path_are_left_out_only_when_nothing_is_written(policy_set):
    rules = policy_set.rules
    needs = {rules[i].id for i in range(len(rules)) if policy_set._writes_needed(i)}
    assert needs == {"ask-out-txt"}
    context = Context(cwd="/tmp")
    for _ in range(2):
        assert _ids(policy_set.evaluate(parse("echo x > out.txt"), context))[0] == [
            "ask-out-txt",
            "ask-written-or-pwd",
        ]
        assert _ids(policy_set.evaluate(parse("echo x > other.txt"), context))[0] == [
            "ask-written-or-pwd"
        ]
        assert _ids(policy_set.evaluate(parse("ls"), context))[0] == ["ask-nothing-written"]
        assert _ids(policy_set.evaluate(parse("pwd"), context))[0] == ["ask-written-or-pwd"]
        assert _ids(policy_set.evaluate(parse("ls > out.txt"), context))[0] == [
            "ask-out-txt",
            "ask-written-or-pwd",
        ]


def test_needs_writes_reads_the_top_conjunction_only():
    written = ("dot", ("ident", "tool"), "paths_written")
    exists = ("exists", written, "p", ("lit", True))
    program = ("rel", "eq", ("dot", ("ident", "segment"), "program"), ("lit", "ls"))
    assert _needs_writes(exists)
    assert _needs_writes(("and", program, ("and", program, exists)))
    assert not _needs_writes(("or", program, exists))
    assert not _needs_writes(("not", exists))
    assert not _needs_writes(("exists", ("dot", ("ident", "tool"), "paths"), "p", ("lit", True)))
    assert not _needs_writes(("all", written, "p", ("lit", False)))
    assert not _needs_writes(())
