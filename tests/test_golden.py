"""Golden snapshots of what leaves the program for every command of the corpus (issue #4 item 6).

For each section of `tests/corpus/commands.txt` (and the multi-line cases), one snapshot file in
`snapshots/test_golden/` maps every command to the Claude Code hook JSON and the `rewrite` exit code
and stdout, under the shipped packs with no Claude Code rules and again with a fixed set of rules.
A representative subset is also answered in every other agent's protocol, and run through the real
console script and the `hooks/claude/rtk-rewrite.sh` delegate, which must answer exactly as the
in-process hook.

Everything runs in a sandbox: HOME and the XDG folders are temporary, so the user's config,
policies, cache, audit log and Claude settings never leak in. The corpus pins the rewrites, so the
sandbox is a machine where they reach the agent: RTK is installed (a stub `rtk` answering
`--version` comes first on PATH, so `rewrite = "auto"` rewrites), the rules project is a workspace
Claude Code trusts (`~/.claude.json`), and the hook runs under a Claude Code whose command line
holds no rules (the processes run as children of a fake `claude`; in-process, that command line is
given as read). A small group (`test_rtk_absent`) pins the same answers with no `rtk` on PATH.
Regenerate with `pytest tests/test_golden.py --snapshot-update` and review the diff like code.
"""

from __future__ import annotations

import functools
import io
import json
import os
import subprocess
import sys
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from fakes import fake_claude
from syrupy.extensions.json import JSONSnapshotExtension

from rtk_policy.policytest.plugin import read_corpus

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"
SNAPSHOTS = ROOT / "snapshots" / "test_golden"
DELEGATE = ROOT / "hooks" / "claude" / "rtk-rewrite.sh"
CONSOLE = Path(sys.executable).with_name("rtk-policy")
SECTION_MARK = "# == "
#: The Claude Code rules of the second pass (patterns inside `Bash(...)`).
CLAUDE_RULES = {
    "allow": ["git *", "cargo *", "npm run *", "ls *"],
    "deny": ["rm -rf /"],
    "ask": ["git push *"],
}
#: The same rules in Gemini CLI's settings (prefixes) and Cursor's (`Shell(first word)`, no ask).
#: Gemini denies the shell commands an allow list omits, so the list allows `rtk` (the rewrites).
GEMINI_TOOLS = {
    "allowed": ["run_shell_command(git)", "run_shell_command(cargo)", "ShellTool(npm run)",
                "run_shell_command(ls)", "run_shell_command(rtk)"],
    "exclude": ["run_shell_command(rm -rf /)"],
    "confirmationRequired": ["run_shell_command(git push)"],
}  # fmt: skip
CURSOR_PERMISSIONS = {"allow": ["Shell(git)", "Shell(cargo)", "Shell(ls)"], "deny": ["Shell(rm)"]}
#: Commands answered again with no `rtk` on PATH (`rewrite = "auto"` then hands over no rewrite).
RTK_ABSENT = ("git status", "ls -la", "cargo build", "git push origin main", "rm -rf /",
              "npm run build 2>&1 | tail -5")  # fmt: skip
SESSION = "3f6c2a1e-8d4b-4c2f-9a57-0d1e2b3c4d5e"
PASSES = ("no_rules", "rules")
AGENT_SHAPES = ("copilot_cli", "copilot_claude", "gemini", "cursor", "codex")

try:  # the hook command is written by another helper; until it exists the golden tests skip
    from rtk_policy.commands import hook as hook_command
    from rtk_policy.commands import rewrite as rewrite_command
    from rtk_policy.hook.service import HookOptions
    from rtk_policy.main import command_options
except ImportError as error:  # pragma: no cover - only while the pipeline is incomplete
    pytestmark = pytest.mark.skip(reason=f"the hook/rewrite commands are not importable: {error}")


class GoldenSnapshot(JSONSnapshotExtension):
    """JSON snapshots stored in the repository's `snapshots/test_golden/` folder."""

    @classmethod
    def dirname(cls, *, test_location: Any) -> str:
        """Every golden file lives in `snapshots/test_golden/`, whatever the test's folder."""
        return str(SNAPSHOTS)


def corpus_sections() -> OrderedDict[str, list[str]]:
    """The corpus commands per section, in file order; the multi-line cases as `multiline`."""
    sections: OrderedDict[str, list[str]] = OrderedDict()
    current = "unsectioned"
    for line in (CORPUS / "commands.txt").read_text(encoding="utf-8").splitlines():
        if line.startswith(SECTION_MARK):
            current = line[len(SECTION_MARK) :].strip(" =")
            continue
        if line.strip() and not line.startswith("#"):
            sections.setdefault(current, []).append(line)
    sections["multiline"] = read_corpus(CORPUS / "multiline.jsonl")
    return sections


SECTIONS = corpus_sections()
ALL_COMMANDS = [command for commands in SECTIONS.values() for command in commands]
#: Commands answered in every agent's protocol and run through the console script and the delegate.
SUBSET = [commands[i] for commands in SECTIONS.values() for i in range(0, len(commands), 20)]
#: Commands also run through real processes (the console script and the delegate), about 40.
PROCESS_SUBSET = SUBSET[::2] + SUBSET[1::8]


class Sandbox:
    """The isolated environment: temporary HOME/XDG folders, two projects, one loaded engine."""

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.root = root
        self.monkeypatch = monkeypatch
        self.projects = {name: root / "work" / name for name in PASSES}
        for project in self.projects.values():
            project.mkdir(parents=True)
        claude_dir = self.projects["rules"] / ".claude"
        claude_dir.mkdir()
        settings = {"permissions": {k: [f"Bash({p})" for p in v] for k, v in CLAUDE_RULES.items()}}
        (claude_dir / "settings.json").write_text(json.dumps(settings, indent=2), encoding="utf-8")
        rules = self.projects["rules"]
        for path, data in (
            (rules / ".gemini" / "settings.json", {"tools": GEMINI_TOOLS}),
            (Path(os.environ["HOME"]) / ".gemini" / "trustedFolders.json",
             {str(rules): "TRUST_FOLDER"}),
            (rules / ".cursor" / "cli.json", {"permissions": CURSOR_PERMISSIONS}),
            (Path(os.environ["HOME"]) / ".claude.json",
             {"projects": {str(rules): {"hasTrustDialogAccepted": True}}}),
        ):  # fmt: skip
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(data), encoding="utf-8")
        self.engine: Any = None

    def env(self) -> dict[str, str]:
        """The environment for subprocesses: the sandbox's variables over a minimal PATH."""
        keep = {
            k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "SYSTEMROOT")
        }
        keep.update({k: os.environ[k] for k in _SANDBOX_VARS})
        keep["RTK_POLICY_BIN"] = str(CONSOLE)
        # a loaded CI machine may take seconds to start the process: not what this test is about
        keep["RTK_POLICY_STDIN_TIMEOUT"] = "60"
        return keep

    def scrub(self, text: str) -> str:
        """Text with the temporary root replaced by `<tmp>`, so snapshots do not depend on it."""
        return text.replace(str(self.root), "<tmp>")


_SANDBOX_VARS = ("HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME")
_FOREIGN_VARS = ("CLAUDE_CONFIG_DIR", "CLAUDE_PROJECT_DIR", "RTK_REWRITE_HOST", "RTK_POLICY_FAIL")


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory, fake_rtk_dir: str) -> Any:
    """A module-wide sandbox with the engine loaded once from the default search path, RTK on
    PATH, and the agent's command line (Claude Code's, Gemini CLI's, Copilot CLI's: no rules) read
    by every in-process hook call."""
    root = tmp_path_factory.mktemp("golden")
    with pytest.MonkeyPatch.context() as monkeypatch:
        for name in _SANDBOX_VARS:
            folder = root / name.lower()
            folder.mkdir()
            monkeypatch.setenv(name, str(folder))
        for name in _FOREIGN_VARS:
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("PATH", fake_rtk_dir + os.pathsep + os.environ.get("PATH", ""))
        from rtk_policy.settings import claude_cli, copilot_cli, gemini_cli

        no_rules = claude_cli.CliRules(seen=True, why="golden: the agent with no rule options")
        monkeypatch.setattr(claude_cli, "host_rules", lambda start_pid=None: no_rules)
        monkeypatch.setattr(gemini_cli, "host_rules", lambda start_pid=None, stderr=None: no_rules)
        monkeypatch.setattr(copilot_cli, "host_rules", lambda start_pid=None: no_rules)
        box = Sandbox(root, monkeypatch)
        from rtk_policy.engine import pipeline as engine_module

        box.engine = engine_module.load_engine(cwd=str(box.projects["no_rules"]))
        monkeypatch.setattr(engine_module, "load_engine", lambda *a, **k: box.engine)
        yield box


@pytest.fixture(autouse=True)
def _sandbox_claude_dir(_isolated_environment: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Claude Code's folders are the sandbox HOME's (`~/.claude`, `~/.claude.json`), in-process as
    in the processes, whose environment holds no CLAUDE_CONFIG_DIR."""
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)


@pytest.fixture
def golden(snapshot: Any) -> Any:
    """The syrupy snapshot writing to `snapshots/test_golden/`."""
    return snapshot.use_extension(GoldenSnapshot)


# -- payloads --------------------------------------------------------------------------------------


def payload(shape: str, command: str, cwd: str, home: str) -> dict[str, Any]:
    """A realistic PreToolUse payload of `shape` for `command` run in `cwd`."""
    described = {"command": command, "description": "Run the command for the current task"}
    claude_like = {
        "session_id": SESSION,
        "transcript_path": f"{home}/.claude/projects/-work-app/{SESSION}.jsonl",
        "cwd": cwd,
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": described,
        "tool_use_id": "toolu_01ABCdefGHIjklMNOpqrSTU",
    }
    if shape == "claude":
        return claude_like
    if shape == "codex":
        return {**claude_like, "model": "gpt-5-codex", "turn_id": "turn-7"}
    if shape == "copilot_claude":
        return {
            "hook_event_name": "PreToolUse",
            "session_id": SESSION,
            "cwd": cwd,
            "timestamp": "2026-11-29T22:00:00Z",
            "tool_name": "Bash",
            "tool_input": {"command": command},
        }
    if shape == "copilot_cli":
        return {
            "sessionId": SESSION,
            "timestamp": 1764453600000,
            "cwd": cwd,
            "toolName": "bash",
            "toolArgs": json.dumps(described),
        }
    if shape == "gemini":
        return {
            "session_id": SESSION,
            "transcript_path": f"{home}/.gemini/tmp/chat.json",
            "cwd": cwd,
            "hook_event_name": "BeforeTool",
            "timestamp": "2026-11-29T22:00:00Z",
            "tool_name": "run_shell_command",
            "tool_input": described,
        }
    if shape == "cursor":
        return {
            "conversation_id": SESSION,
            "generation_id": "gen-42",
            "hook_event_name": "beforeShellExecution",
            "command": command,
            "cwd": cwd,
            "workspace_roots": [cwd],
            "model": "claude-sonnet",
            "cursor_version": "2.1.0",
            "user_email": "dev@example.com",
        }
    raise ValueError(shape)


AGENT_OF_SHAPE = {
    "claude": "claude",
    "codex": "codex",
    "copilot_claude": "copilot",
    "copilot_cli": "copilot",
    "gemini": "gemini",
    "cursor": "cursor",
}


# -- running the commands in-process ---------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def cli_parser() -> Any:
    """The real argparse parser, built once (building it costs more than deciding a command)."""
    from rtk_policy.main import build_parser

    return build_parser()


def hook_stdout(box: Sandbox, shape: str, command: str, which: str, agent: str | None = "") -> str:
    """The raw stdout of `rtk-policy hook AGENT` for the payload, run in-process."""
    project = str(box.projects[which])
    name = AGENT_OF_SHAPE[shape] if agent == "" else agent
    args = cli_parser().parse_args(["hook", *([name] if name else [])])
    options = HookOptions(args.agent, args.policies, args.backend, args.config, args.system)
    stdin = io.StringIO(json.dumps(payload(shape, command, project, os.environ["HOME"])))
    stdout, stderr = io.StringIO(), io.StringIO()
    assert hook_command.run(options, stdin, stdout, stderr, engine=box.engine) == 0, (
        stderr.getvalue()
    )
    return stdout.getvalue()


def parsed(box: Sandbox, stdout: str) -> Any:
    """The hook's answer as JSON (None when silent); it must be exactly one JSON line."""
    if stdout == "":
        return None
    assert stdout.endswith("\n") and stdout.count("\n") == 1, f"not one line: {stdout!r}"
    return json.loads(box.scrub(stdout))


def rewrite_answer(box: Sandbox, command: str, which: str) -> dict[str, Any]:
    """`rtk-policy rewrite CMD` run in-process from the pass's project: exit code and stdout."""
    args = cli_parser().parse_args(["rewrite", "--", command])
    stdout, stderr = io.StringIO(), io.StringIO()
    box.monkeypatch.chdir(box.projects[which])
    options = command_options(args)
    code = rewrite_command.run(stdin=io.StringIO(), stdout=stdout, stderr=stderr, **options)
    return {"exit": code, "stdout": box.scrub(stdout.getvalue())}


def answers(box: Sandbox, command: str) -> dict[str, Any]:
    """The Claude hook answer and the rewrite result of `command`, per pass."""
    return {
        which: {
            "hook": parsed(box, hook_stdout(box, "claude", command, which)),
            "rewrite": rewrite_answer(box, command, which),
        }
        for which in PASSES
    }


_CACHE: dict[str, dict[str, Any]] = {}


def cached_answers(box: Sandbox, command: str) -> dict[str, Any]:
    """`answers`, computed once per command for the whole module."""
    if command not in _CACHE:
        _CACHE[command] = answers(box, command)
    return _CACHE[command]


# -- the golden tests ------------------------------------------------------------------------------


def test_corpus_is_large_and_has_no_duplicates() -> None:
    """The corpus holds at least 550 distinct commands, and the subset is drawn from it."""
    assert len(ALL_COMMANDS) >= 550
    duplicates = sorted({c for c in ALL_COMMANDS if ALL_COMMANDS.count(c) > 1})
    assert duplicates == []
    assert 50 <= len(SUBSET) <= 80
    assert 35 <= len(set(PROCESS_SUBSET)) == len(PROCESS_SUBSET) <= 50


@pytest.mark.parametrize("section", list(SECTIONS))
def test_claude_hook_and_rewrite(section: str, sandbox: Sandbox, golden: Any) -> None:
    """Claude hook JSON and `rewrite` exit/stdout for every command of a corpus section."""
    result = OrderedDict(
        (command, cached_answers(sandbox, command)) for command in SECTIONS[section]
    )
    assert result == golden


def test_rtk_absent(sandbox: Sandbox, golden: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """With no `rtk` on PATH (`rewrite = "auto"`), the Claude hook hands over no rewrite: the
    decision stays (a read-only command is still allowed), `rewrite` still prints RTK's answer."""
    monkeypatch.setenv("PATH", os.pathsep.join(
        folder for folder in os.environ["PATH"].split(os.pathsep)
        if not os.path.exists(os.path.join(folder, "rtk"))
    ))  # fmt: skip
    result = OrderedDict((command, answers(sandbox, command)) for command in RTK_ABSENT)
    hooks = [answer[which]["hook"] for answer in result.values() for which in PASSES]
    assert not any("updatedInput" in (hook or {}).get("hookSpecificOutput", {}) for hook in hooks)
    assert result == golden


def test_other_agents(sandbox: Sandbox, golden: Any) -> None:
    """Every other agent's answer for the representative subset, with and without the agent's own
    rules (Claude Code's for Copilot and Codex, Gemini's and Cursor's equivalents for those)."""
    result: OrderedDict[str, Any] = OrderedDict()
    for command in SUBSET:
        result[command] = {
            which: {
                shape: parsed(sandbox, hook_stdout(sandbox, shape, command, which))
                for shape in AGENT_SHAPES
            }
            for which in PASSES
        }
    assert result == golden


@pytest.mark.parametrize("shape", ["claude", *AGENT_SHAPES])
def test_agent_detection_matches_the_named_agent(shape: str, sandbox: Sandbox) -> None:
    """`hook` without an agent name answers each payload exactly as the named protocol does; a
    Copilot payload in Claude Code's own shape cannot be told apart, and is answered as Claude's."""
    agent = "claude" if shape == "copilot_claude" else ""
    for command in SUBSET[::4]:
        named = hook_stdout(sandbox, shape, command, "rules", agent=agent)
        detected = hook_stdout(sandbox, shape, command, "rules", agent=None)
        assert detected == named, command


@pytest.mark.parametrize("which", PASSES)
def test_hook_agrees_with_rewrite(which: str, sandbox: Sandbox) -> None:
    """`rewrite` exits 2 exactly when the hook denies, and exits 0 only when the hook allows."""
    disagreements = []
    for command in ALL_COMMANDS:
        answer = cached_answers(sandbox, command)[which]
        hook = (answer["hook"] or {}).get("hookSpecificOutput", {})
        verdict, code = hook.get("permissionDecision"), answer["rewrite"]["exit"]
        if (code == 2) != (verdict == "deny") or (code == 0 and verdict != "allow"):
            disagreements.append((command, code, verdict))
    assert disagreements == []


#: Destructive corpus commands the shipped packs let through (no opinion, or a bare rewrite) when
#: the snapshots were generated; reported to the security-baseline owner (issue #6). Delete an entry
#: once the packs deny or ask it. The rest of the `destructive` section must be denied or asked.
#: Empty since the baseline's review rules (rm-recursive-project, git-history-destroy, database-drop, ...).
KNOWN_GAPS: frozenset[str] = frozenset()


def test_destructive_commands_are_denied_or_asked(sandbox: Sandbox) -> None:
    """With no Claude rules at all, the shipped packs deny or ask every destructive command."""
    assert KNOWN_GAPS <= set(SECTIONS["destructive"])
    packs = {rule.policy for rule in sandbox.engine.policies.rules}
    if "security-baseline" not in packs:
        pytest.skip("no security-baseline pack is shipped (issue #6)")
    let_through = []
    for command in SECTIONS["destructive"]:
        answer = cached_answers(sandbox, command)["no_rules"]["hook"] or {}
        if answer.get("hookSpecificOutput", {}).get("permissionDecision") not in ("deny", "ask"):
            let_through.append(command)
    assert sorted(set(let_through) - KNOWN_GAPS) == []


# -- through real processes ------------------------------------------------------------------------


def _run(argv: list[str], stdin: str, box: Sandbox, which: str) -> tuple[int, str, str]:
    done = subprocess.run(
        argv,
        input=stdin.encode("utf-8"),
        capture_output=True,
        cwd=box.projects[which],
        env=box.env(),
        timeout=60,
        check=False,
    )
    return done.returncode, done.stdout.decode("utf-8"), done.stderr.decode("utf-8", "replace")


@pytest.mark.skipif(not CONSOLE.exists(), reason="the rtk-policy console script is not installed")
@pytest.mark.parametrize("which", PASSES)
def test_console_script_and_delegate_match_the_direct_command(which: str, sandbox: Sandbox) -> None:
    """The console script and the delegate print byte for byte what the in-process hook prints."""
    assert DELEGATE.is_file(), "hooks/claude/rtk-rewrite.sh is missing"
    home = os.environ["HOME"]

    claude = str(fake_claude(sandbox.root / f"claude-{which}"))  # the hook's Claude Code

    def one(command: str) -> tuple[tuple[int, str, str], tuple[int, str, str]]:
        stdin = json.dumps(payload("claude", command, str(sandbox.projects[which]), home))
        console = _run([claude, "--", str(CONSOLE), "hook", "claude"], stdin, sandbox, which)
        delegate = _run([claude, "--", "sh", str(DELEGATE)], stdin, sandbox, which)
        return console, delegate

    commands = PROCESS_SUBSET[PASSES.index(which) :: 2]
    # in-process runs first: the hook redirects sys.stdout, which threads would share
    direct = [hook_stdout(sandbox, "claude", command, which) for command in commands]
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(one, commands))
    for command, expected, (console, delegate) in zip(commands, direct, results, strict=True):
        assert console[:2] == (0, expected), (command, console[2])
        assert delegate[:2] == (0, expected), (command, delegate[2])
