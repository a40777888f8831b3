"""The cold hook (no server, compiled cache on disk) imports only what a plain command's decision needs,
answers exactly as the warm engine does and still writes its audit record."""

from __future__ import annotations

import json
from pathlib import Path
import os
import subprocess
import sys

import pytest
from fakes import under_claude

from rtk_policy.engine.pipeline import load_engine
from rtk_policy.policy import cache

#: run `hook claude` in-process, then list the loaded modules on stderr after a marker
_PROBE = (
    "import json, sys\n"
    "from rtk_policy.main import main\n"
    "code = main(['hook', 'claude'])\n"
    "sys.stderr.write('\\nMODULES ' + json.dumps(sorted(sys.modules)) + '\\n')\n"
    "sys.exit(code)\n"
)
#: libraries a cold `git status` decision must not load (the guards decide it; the cache is valid)
_NOT_NEEDED = (
    "cel_expr_python.cel",  # the CEL engine: built on first use only
    "celpy",
    "tree_sitter",  # the shell's fast path parses a plain command
    "tree_sitter_bash",
    "yaml",  # no policy file is parsed on a cache hit
    "lark",
    "argparse",  # `hook AGENT` skips the CLI parser
    "hashlib",  # builtin sha256 instead of OpenSSL
    "_hashlib",
    "pickle",  # the cache is JSON data and program bytes: nothing unpickled
    "_pickle",
    "tempfile",  # only a cache write needs it
    "shlex",
    "rtk_policy.shell.fallback",  # the recovery lexer: only for inputs with a syntax error
    "rtk_policy.policy.guards.specialize",  # the plan of `git` is stored in the compiled cache
    "rtk_policy.policy.guards.code",  # plans are fused only for programs met many times
    "rtk_policy.policy.guards.regex_literal",  # the pre-test literals come from the compiled cache
    "rtk_policy.audit.forward",  # syslog forwarding: only when [audit.syslog] names a target
    "h11",  # the http hook's wire format: `serve --http` only
    "rtk_policy.serve.http_wire",
    "rich",  # the terminal bar and tables of `replay` and `audit stats` only
    "tqdm",
)
#: standard modules a cold decision must not load (each costs a cold hook milliseconds), unless the
#: interpreter loads them before any of our code (an editable install's finder loads pathlib)
_STDLIB_NOT_NEEDED = (
    "attr",  # the decision path's values are `rtk_policy.util.record` classes
    "attrs",
    "typing",  # TYPE_CHECKING = False, collections.namedtuple
    "threading",  # stdin is waited on with select
    "pathlib",  # paths are strings
    "importlib.util",  # the CEL library is found with PathFinder
    "contextlib",  # the hook swaps sys.stdout itself
    "fnmatch",  # glob() compiles its pattern on first use
    "dataclasses",
    "inspect",
)


def _startup_modules() -> set[str]:
    """The modules this interpreter has loaded before running any code of ours."""
    done = subprocess.run(
        [sys.executable, "-c", "import json, sys; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True, check=True, text=True,
    )  # fmt: skip
    return set(json.loads(done.stdout))


def _payload(command: str) -> bytes:
    return json.dumps(
        {
            "session_id": "s",
            "transcript_path": "/tmp/t.jsonl",
            "cwd": "/tmp",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": command},
            "tool_use_id": "toolu_cold",
        }
    ).encode()


@pytest.fixture(scope="module")
def cache_home(tmp_path_factory):
    """One compiled-policy cache for the module (compiling the packs takes seconds)."""
    return str(tmp_path_factory.mktemp("cold-cache"))


@pytest.fixture()
def env(tmp_path, cache_home):
    """A private HOME/XDG tree and no server (its runtime folder does not exist)."""
    values = {k: v for k, v in os.environ.items() if not k.startswith(("RTK_POLICY_", "CLAUDE_"))}
    values.update(
        HOME=str(tmp_path / "home"),
        XDG_CACHE_HOME=cache_home,
        XDG_STATE_HOME=str(tmp_path / "state"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_RUNTIME_DIR=str(tmp_path / "none"),
    )
    return values


def _hook(env: dict[str, str], command: str) -> tuple[str, list[str]]:
    """The cold hook's answer and imported modules, run as Claude Code runs a hook."""
    folder = os.path.join(env["XDG_STATE_HOME"], "claude-bin")
    done = subprocess.run(
        under_claude(Path(folder), [sys.executable, "-c", _PROBE]),
        input=_payload(command),
        capture_output=True,
        env=env,
        timeout=60,
        cwd="/tmp",
    )
    assert done.returncode == 0, done.stderr
    err = done.stderr.decode()
    assert "MODULES " in err, err
    return done.stdout.decode(), json.loads(err.rsplit("MODULES ", 1)[1])


def _audit_lines(env: dict[str, str]) -> list[dict[str, object]]:
    path = os.path.join(env["XDG_STATE_HOME"], "rtk-policy", "audit.jsonl")
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def test_cold_plain_command_loads_no_cel_parser_or_yaml(env):
    _hook(env, "git status")  # builds the compiled cache when no other test did
    assert any(
        name.startswith("policies-")
        for name in os.listdir(os.path.join(env["XDG_CACHE_HOME"], "rtk-policy"))
    )
    out, modules = _hook(env, "git status")
    loaded = [name for name in _NOT_NEEDED if name in modules]
    assert loaded == []
    startup = _startup_modules()
    assert [name for name in _STDLIB_NOT_NEEDED if name in modules and name not in startup] == []
    answer = json.loads(out)
    assert answer["hookSpecificOutput"]["updatedInput"]["command"] == "rtk git status"
    records = _audit_lines(env)
    assert len(records) == 2  # one per call, the cold one included
    assert records[-1]["tool_use_id"] == "toolu_cold"


@pytest.mark.parametrize("command", ["git status", "rm -rf /", "ls -la | grep x"])
def test_cold_answer_is_the_warm_engines(env, monkeypatch, command):
    _hook(env, command)  # builds the cache when no other test did
    out, _ = _hook(env, command)
    from rtk_policy.agents import claude
    from rtk_policy.agents.common import HookRequest

    engine = _engine()
    context = engine.context(agent="claude", cwd="/tmp", tool_name="Bash",
                             tool_input=(("command", command),))  # fmt: skip
    decision = engine.decide(command, context)
    request = claude.parse_request(json.loads(_payload(command)))
    assert isinstance(request, HookRequest)
    expected = claude.render(decision, request)
    assert out.strip() == (expected or "").replace("\n", " ").strip()


_ENGINES: list[object] = []


def _engine():
    """The packs compiled without the cache (once per module)."""
    if not _ENGINES:
        _ENGINES.append(load_engine(cwd="/tmp", use_cache=False))
    return _ENGINES[0]


def test_cache_document_round_trips_the_compiled_records(tmp_path, monkeypatch):
    """The packs' compiled records, stored as JSON data and read back, are equal and of the same
    types, down to the guard forms' tuples."""
    from rtk_policy.policy.stored import policy_data, policy_from_data

    engine = _engine()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    policies = engine.policies  # type: ignore[attr-defined]
    rules, files = policies.compiled_rules, policies.compiled_files
    tables = policies.plan_tables()
    document = policy_data(files, rules, policies.expected, policies.uses, tables, {"a+b": ("b",)})
    assert cache.write_cache("k", document, policies.program_blobs())
    found = cache.read_cache("k")
    assert found is not None and len(found[1]) == len(policies.expected)
    parts = policy_from_data(found[0], len(found[1]))
    assert tuple(parts["rules"]) == rules and parts["files"] == files
    assert [type(r) for r in parts["rules"]] == [type(r) for r in rules]
    assert [r.guard for r in parts["rules"]] == [r.guard for r in rules]
    assert repr([r.guard for r in parts["rules"]]) == repr([r.guard for r in rules])
    plans = parts["plans"]
    assert tuple(plans.residuals) == tables.residuals and set(plans.steps) == set(tables.steps)
    assert all(plans.pairs(p, len(rules)) == tables.steps[p] for p in tables.steps)
    assert parts["patterns"] == {"a+b": ("b",)}
    assert parts["uses"] == policies.uses and parts["expected"] == policies.expected


def test_cold_plain_command_with_cel_python_imports_no_celpy(env):
    """The second backend is found by its files: a decision the guards make never imports celpy
    (with lark and pendulum, ~50 ms)."""
    env = dict(env, RTK_POLICY_BACKEND="cel-python")
    _hook(env, "git status")  # compiles with cel-python: celpy is imported then
    out, modules = _hook(env, "git status")
    assert [name for name in ("celpy", "lark", "pendulum") if name in modules] == []
    assert json.loads(out)["hookSpecificOutput"]["updatedInput"]["command"] == "rtk git status"
