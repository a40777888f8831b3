"""The facts behind `tool` (issue 15 item 3): which words a shell command writes (`writes.py`), how
a path is spelt out (`paths.py`), the `tools:` selector and its load-time checks, and the resident
server never remembering a decision that the file system decides."""

from __future__ import annotations

import os

import pytest

from rtk_policy.config.load import Config
from rtk_policy.engine.pipeline import Engine
from rtk_policy.policy import PolicyLoadError, guarded, load_policy_set, paths
from rtk_policy.policy.backends.select import available_backends
from rtk_policy.policy.model import ToolCall
from rtk_policy.policy.shell_paths import command_writes, depends_on_system
from rtk_policy.policy.writes import read_args, segment_writes
from rtk_policy.shell import parse


def written(command: str) -> list[tuple[str, bool]]:
    """The words the first segment of `command` writes."""
    return segment_writes(parse(command).segments[0])


@pytest.mark.parametrize(
    ("command", "words"),
    [
        ("echo x > a 2>&1 >> b", [("a", False), ("b", False)]),
        ("cat < in", []),
        ("rm -rf a b", [("a", True), ("b", True), ("a/*", True), ("b/*", True)]),
        ("rm -r /", [("/", True)]),
        ("rm a", [("a", False)]),
        ("cp a b c/", [("c/", False), ("c/a", False), ("c/b", False)]),
        ("cp -r src dst", [("dst", True), ("dst/src", True)]),
        ("cp -t dir a", [("dir", True), ("dir/a", False)]),
        ("cp -s target link", [("link", False), ("link/target", False), ("target", True)]),
        ("mv a b", [("a", True), ("b", True)]),
        ("ln -sf /x y", [("/x", True), ("y", True)]),
        ("tee -a f g", [("f", False), ("g", False)]),
        ("dd if=/dev/zero of=disk.img bs=1M", [("disk.img", False)]),
        (
            "install -m 644 a /usr/local/bin/a",
            [("/usr/local/bin/a", False), ("/usr/local/bin/a/a", False)],
        ),
        ("sed -i 's/a/b/' f", [("f", False)]),
        ("sed -i.bak -e s/a/b/ f g", [("f", False), ("g", False)]),
        ("sed 's/a/b/' f", []),
        ("perl -pi -e 's/a/b/' f", [("f", False)]),
        ("perl -pe 's/a/b/' f", []),
        ("truncate -s 0 log", [("log", False)]),
        ("chmod 644 f", [("f", False)]),
        ("chmod -R u+w d", [("d", True)]),
        ("chmod -w f", [("f", False)]),
        ("chown -R me: d", [("d", True)]),
        ("curl -sSLo out.txt https://e/x", [("out.txt", False)]),
        ("curl -O https://e/a/b.tgz?x=1", [("./b.tgz", False)]),
        ("curl https://e/x", []),
        ("wget https://e/a/file.zip", [("./file.zip", False)]),
        ("wget -O - https://e/x", []),
        ("wget -r -P mirror https://e/", [("mirror", True)]),
        ("tar xzf a.tgz -C dest", [("dest", True)]),
        ("tar -xf a.tar", [(".", True)]),
        ("tar -czf out.tgz src", [("out.tgz", False)]),
        ("tar -tzf a.tgz", []),
        ("unzip a.zip -d out", [("out", True)]),
        ("unzip -l a.zip", []),
        ("git clone https://e/r.git", [("r", True)]),
        ("git clone https://e/r.git there", [("there", True)]),
        ("git -C repo rm -r old", [("repo/old", True)]),
        ("git checkout main -- a b", [("a", False), ("b", False)]),
        ("git status", []),
        ("find d -name '*.o' -delete", [("d", True)]),
        ("find . -name '*.go' -exec gofmt -l {} +", []),
        ("vim -c ':wq' +10 f", [("f", False)]),
        ("gzip f", [("f", False)]),
        ("gzip -c f", []),
        ("ls -la", []),
    ],
)
def test_what_a_command_writes(command, words):
    assert written(command) == words


def test_read_args_sorts_clusters_values_and_double_dash():
    args = read_args(
        ("-sSLo", "out", "--output-dir=d", "--max-time", "5", "--", "-x"), "o", ("max-time",)
    )
    assert args.operands == ("-x",)
    assert args.value("o") == ["out"] and args.value("output-dir") == ["d"]
    assert args.value("max-time") == ["5"] and args.has("s", "S") and not args.has("x")


def test_command_writes_follows_cd_and_variables(tmp_path):
    cwd = str(tmp_path)
    line = parse("cd sub && D=out; echo x > $D/f; for n in a b; do rm $n; done")
    found = command_writes(line, cwd)
    # the commands as typed (the shell stage adds copies with the values it knows: `echo x >
    # out/f`, `rm a`, `rm b`, each right after its command)
    echo, rm = (next(s.index for s in line.segments if s.program == p) for p in ("echo", "rm"))
    assert found[0] == () and f"{cwd}/sub/out/f" in found[echo] and f"{cwd}/out/f" in found[echo]
    assert {f"{cwd}/sub/a", f"{cwd}/sub/b"} <= set(found[rm])
    unknown = command_writes(parse("rm -rf $UNSET_VARIABLE_X/settings.json"), cwd)
    assert unknown[0] == ("/*/settings.json/", "/*/settings.json/*/")


@pytest.mark.parametrize(
    ("text", "spelt"),
    [
        ("~/.claude//settings.json", "{home}/.claude/settings.json"),
        ("$HOME/./x/../.claude/", "{home}/.claude/"),
        ("${HOME}", "{home}"),
        ("rel/./a//b", "{cwd}/rel/a/b"),
        ("//etc/x", "/etc/x"),
        ("/", "/"),
    ],
)
def test_spellings_are_absolute_and_collapsed(text, spelt, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "h"))
    assert paths.spellings(text, str(tmp_path))[0] == spelt.format(
        home=tmp_path / "h", cwd=tmp_path
    )


def test_spellings_resolve_symlinks_and_fold_case_where_it_is_ignored(tmp_path, monkeypatch):
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    assert f"{tmp_path}/real/f" in paths.spellings(f"{tmp_path}/link/f")
    assert paths.case_insensitive(str(tmp_path)) is False  # this file system keeps case
    monkeypatch.setattr(paths, "case_insensitive", lambda path: True)
    assert f"{tmp_path}/real/f".casefold() in paths.spellings(f"{tmp_path}/link/F")


def test_spellings_are_remembered_only_within_one_evaluation(tmp_path):
    """Inside `evaluation_memo` a path is spelt once (the file system is read once per command);
    outside it nothing is remembered, so a symlink changed between two commands is seen; an
    evaluation of a command that writes leaves no memo behind."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "a")
    path = f"{tmp_path}/link/f"
    assert f"{tmp_path}/a/f" in paths.spellings(path)
    previous = paths.evaluation_memo({})
    try:
        first = paths.spellings(path)
        (tmp_path / "link").unlink()
        (tmp_path / "link").symlink_to(tmp_path / "b")
        assert paths.spellings(path) is first  # remembered within the evaluation
    finally:
        assert paths.evaluation_memo(previous) is not None
    assert previous is None
    assert f"{tmp_path}/b/f" in paths.spellings(path)  # seen again outside it
    from rtk_policy.policy.load import packs_dir

    packs = os.path.join(packs_dir(), "guard-self.yaml")
    engine = Engine(load_policy_set([packs]), Config(audit_enabled=False))
    settings = f"{tmp_path}/link/.claude/settings.json"
    decision = engine.decide(f"echo x > {tmp_path}/link/g && echo x > {settings}", engine.context())
    assert decision.rule_ids == ("guard-self-write",)  # the written paths were spelt and looked up
    assert paths.evaluation_memo(None) is None  # the evaluation restored it


@pytest.mark.parametrize(
    ("path", "folder", "overlap"),
    [
        ("/a/b/c", "/a/b", True),
        ("/a/bc", "/a/b", False),
        ("/a/", "/a/b", True),
        ("/a", "/a/b", False),
        ("/a/b*/", "/a/bee/x", True),
        ("/a/*.yaml", "/a", True),
        ("/*/settings.json", "/h/.claude/settings.json", True),
        ("/*", "/h/.claude", False),
        ("/*/", "/h/.claude", False),
    ],
)
def test_overlaps(path, folder, overlap):
    assert paths.overlaps(path, folder) is overlap


def test_nothing_a_path_holds_breaks_the_facts(tmp_path):
    for text in ("a\x00b", "x" * 5000 + "/y", "/" + "a/" * 3000, "[", "$(", "~nosuchuser/x"):
        paths.spellings(text, str(tmp_path))
        guarded.guarded_what(text)
        command_writes(parse(f"echo x > '{text}'"), str(tmp_path))


# ------------------------------------------------------------------- the selector, checked at load


def _pack(tmp_path, body: str) -> str:
    path = tmp_path / "p.yaml"
    path.write_text("name: p\nkind: permission\nrules:\n" + body, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("backend", available_backends())
def test_a_typo_in_tool_is_a_load_error_on_every_backend(tmp_path, backend):
    body = "  - id: r\n    decision: ask\n    tools: [write]\n    match: tool.pathz.size() > 0\n"
    with pytest.raises(PolicyLoadError, match="pathz"):
        load_policy_set([_pack(tmp_path, body)], backend=backend, use_cache=False)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "  - id: r\n    decision: ask\n    tools: [writes]\n    match: 'true'\n",
            "tools must list",
        ),
        ("  - id: r\n    decision: ask\n    tools: []\n    match: 'true'\n", "tools must list"),
        (
            "  - id: r\n    decision: ask\n    match: 'true'\n    examples:\n"
            "      - {command: ls, tool: Write, expect: none}\n",
            "either 'command' or 'tool'",
        ),
    ],
)
def test_a_wrong_selector_or_example_is_a_load_error(tmp_path, body, message):
    with pytest.raises(PolicyLoadError, match=message):
        load_policy_set([_pack(tmp_path, body)], use_cache=False)


def test_a_rewrite_file_only_rewrites_shell_commands(tmp_path):
    path = tmp_path / "r.yaml"
    path.write_text(
        "name: r\nkind: rewrite\ntools: [write]\nrules:\n  - id: x\n    match: 'true'\n"
        "    rewrite: '\"x\"'\n",
        encoding="utf-8",
    )
    with pytest.raises(PolicyLoadError, match="tools must be"):
        load_policy_set([str(path)], use_cache=False)


def test_rules_are_tried_only_on_the_kinds_they_select(tmp_path):
    body = (
        "  - id: any-write\n    decision: deny\n    tools: [write, edit]\n    match: 'true'\n"
        "  - id: shell-only\n    decision: ask\n    match: 'true'\n"
        "  - id: reads\n    decision: ask\n    tools: [read]\n    match: tool.kind == 'read'\n"
    )
    engine = Engine(load_policy_set([_pack(tmp_path, body)], use_cache=False), Config())
    context = engine.context(cwd=str(tmp_path))
    write = engine.evaluate_tool(ToolCall("Write", "write", ("a",)), context).decision
    assert (write.verdict, write.rule_ids) == ("deny", ("any-write",))
    read = engine.evaluate_tool(ToolCall("Read", "read", paths_read=("a",)), context).decision
    assert (read.verdict, read.rule_ids) == ("ask", ("reads",))
    other = engine.evaluate_tool(ToolCall("WebFetch", "other"), context).decision
    assert other.verdict == "none" and other.rewritten is None
    assert engine.decide("ls", context).rule_ids == ("shell-only",)


# ------------------------------------------------------------------------------ the resident memo


def test_the_memo_never_remembers_what_the_file_system_decides(tmp_path, monkeypatch):
    from rtk_policy.serve.memo import MemoEngine

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home" / ".claude").mkdir(parents=True)
    guarded._tables.clear()
    packs = os.path.join(os.path.dirname(__file__), "..", "policies", "guard-self.yaml")
    memo = MemoEngine(Engine(load_policy_set([packs]), Config(audit_enabled=False)))
    context = memo.context(cwd=str(tmp_path))
    command = f"echo x > {tmp_path}/innocent/settings.json"
    assert depends_on_system(parse(command)) and not depends_on_system(parse("git status"))
    assert memo.evaluate(command, context).decision.verdict == "none"
    (tmp_path / "innocent").symlink_to(tmp_path / "home" / ".claude")
    assert memo.evaluate(command, context).decision.verdict == "ask"
    memo.evaluate("git status", context)
    assert memo.evaluate("git status", context).evaluation.eval_us == 0  # remembered
