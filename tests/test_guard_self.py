"""The guard guards itself (issue 15 item 3), tried as the agent would: file-tool payloads of every
agent and shell commands that write the guard's own state, in many spellings, must be asked;
reading it must not be. The real shipped packs decide, through the real hook service."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import BARE_MKTEMP, MKTEMP_VERDICT, guard_names_in_tmp, whole_tmp_verdicts
from guard_helpers import claude_tool, hook_answer, private_home
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rtk_policy.config.load import Config
from rtk_policy.engine.pipeline import Engine
from rtk_policy.policy import guarded, load_policy_set, paths

ROOT = Path(__file__).resolve().parents[1]
#: the guarded places of a user install, relative to the home folder
GUARDED_HOME = (
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".config/rtk-policy/config.toml",
    ".config/rtk-policy/policies/local.yaml",
    ".local/state/rtk-policy/audit.jsonl",
    ".local/state/rtk-policy/anchor.json",
    ".cache/rtk-policy/policies-x.pickle",
    ".codex/hooks.json",
    ".codex/config.toml",
    ".gemini/settings.json",
    ".copilot/hooks/rtk-policy.json",
    ".cursor/hooks.json",
)
#: guarded in any project
GUARDED_PROJECT = (
    ".rtk-policy/config.toml",
    ".rtk-policy/policies/allow.yaml",
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".gemini/settings.json",
    ".cursor/hooks.json",
    ".codex/hooks.json",
    ".github/hooks/hooks.json",
)


@pytest.fixture()
def home(tmp_path, monkeypatch) -> Path:
    """A private home (its Claude Code and rtk-policy folders), a project folder as the cwd."""
    return private_home(tmp_path, monkeypatch, (".claude", ".config/rtk-policy"))


def shell_verdict(engine: Engine, command: str, cwd: str) -> str:
    """The verdict of a shell command in folder `cwd`."""
    return engine.decide(command, engine.context(cwd=cwd, agent="claude")).verdict


# ------------------------------------------------------------------------- file tools, every agent


@pytest.mark.parametrize("relative", GUARDED_HOME)
@pytest.mark.parametrize("tool", ["Write", "Edit", "MultiEdit"])
def test_claude_file_tools_on_guarded_home_files_are_asked(engine, home, tool, relative):
    answer = claude_tool(engine, tool, {"file_path": str(home / relative)}, os.getcwd())
    assert answer["permissionDecision"] == "ask"
    assert (
        "rtk-policy asks before any change to its own state" in answer["permissionDecisionReason"]
    )
    assert "updatedInput" not in answer  # never a rewrite of a tool call


@pytest.mark.parametrize("relative", GUARDED_PROJECT)
def test_claude_writes_to_a_projects_guarded_files_are_asked(engine, home, relative):
    project = os.getcwd()
    assert (
        claude_tool(engine, "Write", {"file_path": relative, "content": "{}"}, project)[
            "permissionDecision"
        ]
        == "ask"
    )
    nested = os.path.join(project, "sub", "dir", relative)
    assert (
        claude_tool(engine, "Edit", {"file_path": nested}, project)["permissionDecision"] == "ask"
    )


def test_notebook_edit_of_a_guarded_path_is_asked(engine, home):
    inputs = {"notebook_path": str(home / ".claude" / "settings.json"), "new_source": "x"}
    assert claude_tool(engine, "NotebookEdit", inputs, os.getcwd())["permissionDecision"] == "ask"


def test_ordinary_writes_and_every_read_pass(engine, home):
    cwd = os.getcwd()
    assert (
        claude_tool(engine, "Write", {"file_path": f"{cwd}/src/main.py", "content": ""}, cwd)
        is None
    )
    for relative in GUARDED_HOME:
        assert claude_tool(engine, "Read", {"file_path": str(home / relative)}, cwd) is None
    assert shell_verdict(engine, "cat ~/.claude/settings.json", cwd) == "none"
    assert (
        shell_verdict(engine, "jq .hooks ~/.claude/settings.json > /tmp/hooks.json", cwd) == "none"
    )
    assert shell_verdict(engine, "cp ~/.config/rtk-policy/config.toml /tmp/", cwd) == "none"


def test_every_agents_file_tools_are_asked_in_its_own_protocol(engine, home):
    settings_file = str(home / ".claude" / "settings.json")
    gemini = {
        "hook_event_name": "BeforeTool",
        "session_id": "s",
        "cwd": os.getcwd(),
        "tool_name": "write_file",
        "tool_input": {"file_path": settings_file, "content": "{}"},
    }
    assert json.loads(hook_answer(engine, gemini, "gemini"))["decision"] == "ask"
    replace = {**gemini, "tool_name": "replace", "tool_input": {"file_path": settings_file}}
    assert json.loads(hook_answer(engine, replace, "gemini"))["decision"] == "ask"
    read = {**gemini, "tool_name": "read_file", "tool_input": {"file_path": settings_file}}
    assert json.loads(hook_answer(engine, read, "gemini")) == {"decision": "allow"}

    for tool in ("create", "edit"):
        cli = {
            "sessionId": "s",
            "timestamp": 1,
            "cwd": os.getcwd(),
            "toolName": tool,
            "toolArgs": json.dumps({"path": settings_file, "file_text": "{}"}),
        }
        answer = json.loads(hook_answer(engine, cli, "copilot"))
        assert answer["permissionDecision"] == "ask" and "modifiedArgs" not in answer
    pascal = {
        "hook_event_name": "PreToolUse",
        "session_id": "s",
        "cwd": os.getcwd(),
        "tool_name": "Write",
        "tool_input": {"path": settings_file},
    }
    answer = json.loads(hook_answer(engine, pascal, "copilot"))["hookSpecificOutput"]
    assert answer["permissionDecision"] == "ask"

    patch = f"*** Begin Patch\n*** Update File: {settings_file}\n@@\n-a\n+b\n*** End Patch\n"
    codex = {
        "session_id": "s",
        "turn_id": "u",
        "cwd": os.getcwd(),
        "hook_event_name": "PreToolUse",
        "tool_name": "apply_patch",
        "tool_input": {"command": patch},
        "tool_use_id": "t",
    }
    answer = json.loads(hook_answer(engine, codex, "codex"))["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny"  # Codex takes no ask from a hook: said so
    assert "approval" in answer["permissionDecisionReason"]
    harmless = patch.replace(settings_file, f"{os.getcwd()}/src/a.py")
    assert hook_answer(engine, {**codex, "tool_input": {"command": harmless}}, "codex") == ""

    cursor = {
        "conversation_id": "c",
        "hook_event_name": "preToolUse",
        "cwd": os.getcwd(),
        "tool_name": "Write",
        "tool_input": {"file_path": settings_file},
    }
    answer = json.loads(hook_answer(engine, cursor, "cursor"))
    assert answer["permission"] == "ask" and "updated_input" not in answer
    read_file = {
        "conversation_id": "c",
        "hook_event_name": "beforeReadFile",
        "file_path": settings_file,
        "content": "{}",
    }
    assert json.loads(hook_answer(engine, read_file, "cursor")) == {}


# ------------------------------------------------------------------------------- spellings


def _separators() -> st.SearchStrategy[str]:
    return st.sampled_from(["/", "//", "/./", "/x/../", "///", "/./x/../"])


@st.composite
def spelt(draw: st.DrawFn, relative: str, home: str) -> str:
    """`~/relative` in a drawn spelling: the home as `~`, `$HOME`, `${HOME}` or spelt out, the
    parts joined by drawn separators, a drawn trailing `/.` or `/`."""
    head = draw(st.sampled_from(["~", "$HOME", "${HOME}", home, home + "/", home + "/."]))
    text = head
    for part in relative.split("/"):
        text += draw(_separators()) + part
    return text


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_every_spelling_of_a_guarded_path_is_asked(engine, home, data):
    relative = data.draw(st.sampled_from(GUARDED_HOME))
    path = data.draw(spelt(relative, str(home)))
    cwd = os.getcwd()
    template = data.draw(
        st.sampled_from(
            [
                "echo {{}} > {p}",
                "cp /tmp/x {p}",
                "tee -a {p} < /dev/null",
                "dd if=/dev/zero of={p}",
                "sed -i 's/a/b/' {p}",
                "truncate -s 0 {p}",
                "rm -f {p}",
                "mv {p} /tmp/old",
                "ln -sf /tmp/x {p}",
                "install -m 644 /tmp/x {p}",
                "curl -sSLo {p} https://example.com/x",
                "wget -O {p} https://e/x",
                "vim -c ':wq' {p}",
                "printf x >> {p}",
                "ed -s {p}",
            ]
        )
    )
    command = template.format(p=f'"{path}"' if "$" in path else path)
    assert shell_verdict(engine, command, cwd) == "ask", command
    if not path.startswith("$"):
        file_path = paths.expand_user(path)
        assert (
            claude_tool(engine, "Write", {"file_path": file_path}, cwd)["permissionDecision"]
            == "ask"
        )


def test_a_case_insensitive_file_system_folds_case(engine, home, monkeypatch):
    monkeypatch.setattr(paths, "case_insensitive", lambda path: True)
    guarded._tables.clear()
    try:
        upper = str(home / ".Claude" / "SETTINGS.json")
        assert (
            claude_tool(engine, "Write", {"file_path": upper}, os.getcwd())["permissionDecision"]
            == "ask"
        )
        assert shell_verdict(engine, "echo x > .RTK-Policy/Config.toml", os.getcwd()) == "ask"
    finally:
        guarded._tables.clear()
    assert paths.case_insensitive(str(home)) is True  # still patched here; below, Linux's answer
    monkeypatch.undo()
    guarded._tables.clear()
    assert (
        claude_tool(
            engine, "Write", {"file_path": str(home / ".Claude" / "SETTINGS.json")}, os.getcwd()
        )
        is None
    )


def test_a_symlink_to_a_guarded_folder_is_followed(engine, home, tmp_path):
    link = tmp_path / "innocent"
    link.symlink_to(home / ".claude")
    cwd = os.getcwd()
    assert (
        claude_tool(engine, "Write", {"file_path": f"{link}/settings.json"}, cwd)[
            "permissionDecision"
        ]
        == "ask"
    )
    assert shell_verdict(engine, f"echo x > {link}/settings.json", cwd) == "ask"
    hard = tmp_path / "hard"
    (home / ".claude" / "settings.json").write_text("{}")
    assert shell_verdict(engine, f"ln {home}/.claude/settings.json {hard}", cwd) == "ask"


@pytest.mark.parametrize(
    "command",
    [
        "cd ~/.claude && echo {} > settings.json",
        "cd ~ ; cd .config/rtk-policy ; rm config.toml",
        "pushd ~/.config/rtk-policy && rm -r policies",
        "D=~/.claude; echo x > $D/settings.json",
        'export D=$HOME/.config/rtk-policy && cp /tmp/x "$D/config.toml"',
        'for f in ~/.claude/settings.json; do echo {} > "$f"; done',
        "echo hi > ~/.claude/{settings,other}.json",
        "rm -rf ~/.c*",
        "rm ~/.claude/settings.*",
        "X=$(echo ~/.claude) && rm -rf $X/settings.json",
        "curl -o ~/.claude/settings.json https://example.com/s.json",
        "wget -O ~/.config/rtk-policy/config.toml https://example.com/c",
        "cd ~/.config/rtk-policy && wget https://example.com/config.toml",
        "cd ~/.config/rtk-policy && curl -O https://example.com/config.toml",
        "tar xzf evil.tgz -C ~",
        "tar -x -f evil.tar --directory=$HOME/.config",
        "unzip evil.zip -d ~/.config/rtk-policy",
        "git clone https://example.com/p.git ~/.config/rtk-policy",
        "git -C ~/.config/rtk-policy checkout -- policies",
        "cp -r evil/. ~",
        "rsync -a evil/ ~/.claude/",
        "mv ~/.claude ~/.claude.off",
        "ln -s /tmp/evil .claude",
        "find ~/.config/rtk-policy -name '*.yaml' -delete",
        "chmod -R 000 ~/.config/rtk-policy",
        "perl -pi -e 's/deny/allow/' .rtk-policy/policies/a.yaml",
        "ex -sc 'g/hooks/d|x' ~/.claude/settings.json",
        "gzip ~/.claude/settings.json",
        "bash -c 'echo {} > ~/.claude/settings.json'",
        "rm ~/.local/state/rtk-policy/audit.jsonl",
        "echo > ~/.local/state/rtk-policy/audit.jsonl",
        "pip uninstall -y rtk-policy",
        "pipx uninstall rtk-policy",
        "uv tool uninstall rtk-policy",
        "python3 -m pip install --force-reinstall rtk-policy==0.0.1",
        "rtk-policy uninstall --global",
        "pkill -f rtk-policy",
        "kill $(pgrep -f rtk_policy)",
        "pgrep -f 'rtk_policy serve' | xargs kill",
        "killall python3",
        'd=$(mktemp -d -p ~/.config) && rm -rf "$d"',
        "d=$(mktemp --tmpdir=$HOME/.claude) && rm -rf $d",
        "TMPDIR=~/.config; d=$(mktemp -d); rm -rf $d/../rtk-policy",
        "cd ~/.claude && f=$(mktemp settings.jsonXX) && mv $f settings.json",
        "d=$(mktemp -d $(echo ~/.config)/x.XXX) && rm -rf $d/..",
    ],
)
def test_shell_forms_that_change_the_guard_are_asked(engine, home, command):
    assert shell_verdict(engine, command, os.getcwd()) in ("ask", "deny"), command


@pytest.mark.parametrize(
    "command",
    [
        "cat ~/.claude/settings.json",
        "cd ~/.claude && cat settings.json",
        "ls -la ~/.config/rtk-policy",
        "rtk-policy check",
        "rtk-policy audit verify",
        "rm -rf build dist",
        "cp ~/.claude/settings.json backup.json",
        "tar xzf release.tgz -C /tmp",
        "git clone https://example.com/p.git",
        "find . -name '*.go' -exec gofmt -l {} +",
        "pkill -f node",
        "pip install requests",
        "echo ok > out.txt",
        'd=$(mktemp -d) && cp a.txt "$d"/ && rm -rf "$d"',
        "f=`mktemp`; echo x > $f; rm -f $f",
        "d=$(mktemp -d -t build.XXXX); rm -rf $d",
        "d=$(mktemp -d out.XXXX) && rm -rf $d",
    ],
)
def test_look_alikes_are_not_asked(engine, home, command):
    # a `mktemp` path is some new /tmp/tmp.* folder: while the install itself is such a folder
    # (CI's interpreter matrix), the guard cannot tell them apart and asks
    expected = MKTEMP_VERDICT if BARE_MKTEMP.search(command) else "none"
    assert shell_verdict(engine, command, os.getcwd()) == expected, command


def test_the_readme_pack_of_rules_on_file_tools_works(tmp_path, capsys):
    """The security team's pack of the README ("Rules on file tools"): its examples pass, and a
    Write, an Edit and a shell `sed -i` of a workflow are asked, a read of ~/.ssh denied."""
    from rtk_policy.main import main

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = (
        readme.split("### Rules on file tools", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    )
    (tmp_path / "team-files.yaml").write_text(block, encoding="utf-8")
    assert main(["check", str(tmp_path / "team-files.yaml")]) == 0
    assert "5 passed, 0 failed, 0 errors" in capsys.readouterr().out
    engine = Engine(
        load_policy_set([str(tmp_path / "team-files.yaml")]), Config(audit_enabled=False)
    )
    context = engine.context(cwd=str(tmp_path))
    from rtk_policy.agents.tools import tool_call

    workflow = {"file_path": str(tmp_path / ".github" / "workflows" / "ci.yml")}
    for name in ("Write", "Edit", "write_file", "create"):
        assert engine.evaluate_tool(tool_call(name, workflow), context).decision.verdict == "ask"
    read = tool_call("Read", {"file_path": "~/.ssh/id_rsa"})
    assert engine.evaluate_tool(read, context).decision.verdict == "deny"
    assert engine.decide("rm .github/workflows/ci.yml", context).verdict == "ask"
    assert engine.decide("cat .github/workflows/ci.yml", context).verdict == "none"


# ------------------------------------------------------------- the runtime folder and temp folders


def test_the_runtime_folder_guarded_is_the_one_the_client_uses(engine, home, monkeypatch):
    from rtk_policy.serve.runtime import runtime_dir

    cwd = os.getcwd()
    monkeypatch.delenv("TMPDIR", raising=False)
    fallback = runtime_dir()  # no XDG_RUNTIME_DIR: rtk-policy-run-<uid> in /tmp
    assert fallback.startswith("/tmp/rtk-policy-run-")
    assert shell_verdict(engine, f"rm -rf {fallback}", cwd) == "ask"
    assert shell_verdict(engine, "rm -rf /tmp/*", cwd) == "ask"  # the glob holds it
    for whole in ("rm -rf /tmp", "rm -rf $TMPDIR", "rm -r /tmp/"):  # so does all of /tmp
        assert shell_verdict(engine, whole, cwd) == "ask", whole
    assert shell_verdict(engine, "tar -x -C /tmp -f a.tar", cwd) == "none"  # writes beside it
    away_from_tmp(monkeypatch)
    assert shell_verdict(engine, "rm -rf /run/user/4242/rtk-policy", cwd) == "ask"
    assert shell_verdict(engine, "rm -rf $XDG_RUNTIME_DIR/rtk-policy/engine.sock", cwd) == "ask"
    # with the runtime folder (and the home) elsewhere, /tmp holds nothing of the guard's
    # (unless rtk-policy itself is installed there, or another process keeps such a folder in
    # /tmp: `conftest.whole_tmp_verdicts`; `test_a_temp_folder_holds_what_its_entries_hold` checks
    # the same in a temp folder of the test's own)
    assert shell_verdict(engine, "rm -rf /tmp/*", cwd) in whole_tmp_verdicts(), guard_names_in_tmp()
    assert shell_verdict(engine, f"rm -rf {fallback}", cwd) == "none"


def away_from_tmp(monkeypatch) -> None:
    """A home and a runtime folder outside /tmp (the test's own folders are under it)."""
    monkeypatch.setenv("HOME", "/home/rtk-test-nobody")
    monkeypatch.setenv("XDG_RUNTIME_DIR", "/run/user/4242")
    guarded._tables.clear()


@pytest.mark.parametrize(
    "command", ["rm -rf $TMPDIR", "rm -rf ${TMPDIR}/*", 'rm -rf "$TMPDIR"/build']
)
def test_an_unset_tmpdir_stands_for_the_temp_folder(engine, home, monkeypatch, command):
    monkeypatch.delenv("TMPDIR", raising=False)
    away_from_tmp(monkeypatch)
    # all of /tmp (its entries, as the glob names them) reaches an install in /tmp
    whole = command != 'rm -rf "$TMPDIR"/build'
    expected = whole_tmp_verdicts(globbed="*" in command) if whole else {"none"}
    assert shell_verdict(engine, command, os.getcwd()) in expected, guard_names_in_tmp()


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        (None, "none"),  # an empty temp folder
        ("build/out.o", "none"),  # a tree of everyday work
        ("run/rtk-policy", "ask"),  # a runtime folder (`XDG_RUNTIME_DIR` in it) of some rtk-policy
        ("clone/rtk_policy", "ask"),  # a checkout of rtk-policy: its shipped packs
        ("x/managed-settings.json", "ask"),  # Claude Code's managed settings
    ],
)
def test_a_temp_folder_holds_what_its_entries_hold(engine, home, monkeypatch, tmp_path, entry,
                                                   expected):  # fmt: skip
    """`rm -rf $TMPDIR/*` (the shared temp folder: never a holder of the guard's places as such)
    asks exactly when an entry it reaches is named like one: the hermetic twin of the /tmp
    checks above, whose answer depends on what else the machine keeps in /tmp."""
    temp = tmp_path / "temp"
    temp.mkdir()
    if entry:
        (temp / entry).parent.mkdir(parents=True)
        (temp / entry).mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    away_from_tmp(monkeypatch)
    assert shell_verdict(engine, "rm -rf $TMPDIR/*", os.getcwd()) == expected
    assert shell_verdict(engine, f"rm -rf {temp}/*", os.getcwd()) == expected


@pytest.mark.parametrize(
    "command",
    [
        "TMPDIR=~/.config; rm -rf $TMPDIR/rtk-policy",
        "export TMPDIR=$HOME/.claude && echo {} > $TMPDIR/settings.json",
        "rm -rf $TMPDIR/../../$HOME/.config/rtk-policy",
        "rm -rf $UNSET/.config/rtk-policy",
    ],
)
def test_a_tmpdir_the_command_sets_or_leaves_is_still_followed(engine, home, monkeypatch, command):
    monkeypatch.delenv("TMPDIR", raising=False)
    assert shell_verdict(engine, command, os.getcwd()) in ("ask", "deny"), command


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    guarded_file=st.sampled_from([".config/rtk-policy/config.toml", ".claude/settings.json",
                                  ".local/state/rtk-policy/audit.jsonl"]),
    sets=st.sampled_from(["TMPDIR={g}; ", "export TMPDIR={g} && ", "TMPDIR={g}\n",
                          "declare TMPDIR={g}; "]),
    made=st.sampled_from(["$(mktemp -d)", "`mktemp -d`", "$(mktemp)", "$(mktemp -t x.XXXX)",
                          "$(mktemp -dq)", "$(mktemp -d -q)", "${TMPDIR}/fixed", "$TMPDIR/sub"]),
    then=st.sampled_from(['rm -rf "$d"/..', "rm -rf $d/../*", "echo {{}} > $d/../{name}",
                          "cp x $d/../{name}"]),
)  # fmt: skip
def test_a_temp_path_in_a_tmpdir_the_command_points_at_the_guard_is_asked(
    engine, home, monkeypatch, guarded_file, sets, made, then
):
    """However the command sets $TMPDIR to a guarded folder before it makes or names a temp path
    there, a write next to that path is asked (the value propagates into mktemp's and $TMPDIR's)."""
    monkeypatch.delenv("TMPDIR", raising=False)
    folder, name = os.path.split(f"{home}/{guarded_file}")
    command = sets.format(g=folder) + f"d={made}; " + then.format(name=name)
    assert shell_verdict(engine, command, os.getcwd()) in ("ask", "deny"), command
