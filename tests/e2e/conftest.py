"""Fixtures of the end-to-end suite: where the agent CLIs are, and a "world" per agent and hook
form — a sandbox HOME with the agent configured and rtk-policy installed by `init`.

The CLIs come from `tests/e2e/install_clis.sh`, found in `$RTK_E2E_CLIS`, else
`$RTK_E2E_CACHE`, else `~/.cache/rtk-policy-e2e`. Without them every test here is skipped with the
reason, so a bare `pytest` passes; with `RTK_E2E_REQUIRED=1` (CI) a missing CLI is a failure.
Every test of this folder carries the `e2e` marker (`pytest -m "not e2e"` leaves them out).
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .drivers import AGENTS, Agent, Run
from .sandbox import Sandbox

HERE = Path(__file__).resolve().parent
FORMS = ("thin", "in-process")  #: the two hook commands `init` writes: default, --in-process
NO_HOOK = "no-hook"  #: a world without rtk-policy: the control of a scenario

USER_POLICY = """\
name: e2e-user
description: A user's own rule, for the end-to-end suite.
kind: permission
rules:
  - id: e2e-keep-me
    decision: deny
    programs: [rm]
    match: segment.args.exists(a, a.contains("keep-me"))
    message: '"e2e user policy: the keep-me folder stays"'
  - id: e2e-allowed-marker
    decision: allow
    programs: [touch]
    match: segment.args == ["allowed.marker"]
    message: '"e2e user policy: allowed.marker may be touched"'
"""


def pytest_configure(config: pytest.Config) -> None:
    """Register the `e2e` marker."""
    config.addinivalue_line(
        "markers", "e2e: drives a real agent CLI offline (tests/e2e; see install_clis.sh)"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test of this folder `e2e`."""
    for item in items:
        if HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.e2e)


def clis_folder() -> Path:
    """Where `install_clis.sh` put the CLIs."""
    default = Path.home() / ".cache" / "rtk-policy-e2e"
    return Path(os.environ.get("RTK_E2E_CLIS") or os.environ.get("RTK_E2E_CACHE") or default)


def require_cli(agent: Agent) -> Path:
    """The CLIs folder, after checking `agent`'s CLI is there (skip, or fail in CI)."""
    folder = clis_folder()
    missing = ""
    if not agent.executable(folder).exists():
        missing = f"{agent.name} CLI not installed in {folder} (run tests/e2e/install_clis.sh)"
    elif not shutil.which("node"):
        missing = "node is not on PATH (the agent CLIs need Node >= 20)"
    if missing:
        if os.environ.get("RTK_E2E_REQUIRED") == "1":
            pytest.fail(f"RTK_E2E_REQUIRED=1 but {missing}")
        pytest.skip(missing)
    return folder


@dataclass
class World:
    """One agent CLI with rtk-policy installed in a sandbox, ready to run commands."""

    agent: Agent
    sandbox: Sandbox
    clis: Path
    form: str

    def run(self, work: Path, command: str, **options: Any) -> Run:
        """Run the agent headless in `work`, the model asking for `command` (see Agent.run);
        with `RTK_E2E_RECORD=FILE` also append what happened to FILE (see `record`)."""
        run = self.agent.run(self.clis, self.sandbox, work, command, **options)
        if os.environ.get("RTK_E2E_RECORD"):
            record(Path(os.environ["RTK_E2E_RECORD"]), self, work, command, run)
        return run


def record(path: Path, world: World, work: Path, command: str, run: Run) -> None:
    """One JSON line: the agent, form, command, our hook's answers (from its audit log), what
    the model saw and what ran — the raw material of the README's per-agent table."""
    answers = [
        {"verdict": r["verdict"], "rewrite": (r.get("rewrite") or {}).get("after")}
        for r in world.sandbox.audit(cwd=work)
    ]
    line = {
        "agent": world.agent.name,
        "form": world.form,
        "test": os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0],
        "command": command,
        "answers": answers,
        "rtk_calls": [argv for cwd, argv in world.sandbox.rtk_calls() if cwd.startswith(str(work))],
        "tool_result": run.tool_result[:300],
        "timed_out": run.timed_out,
        "seconds": round(run.seconds, 1),
    }
    with path.open("a") as out:
        out.write(json.dumps(line) + "\n")


def make_world(
    root: Path,
    cache: Path,
    name: str,
    form: str,
    *,
    user_steps: bool = True,
    cli: bool = True,
    **sandbox_options: Any,
) -> World:
    """Configure agent NAME in a sandbox under `root` and install our hook in `form` (none for
    `NO_HOOK`), then take the user's steps after `init` (Codex: trust it) unless not
    `user_steps`. Without `cli` (Cursor) no CLI is needed: only the hook is installed."""
    agent = AGENTS[name] if cli else Agent(name, "", "")
    clis = require_cli(agent) if cli else clis_folder()
    root.mkdir(parents=True, exist_ok=True)
    sandbox = Sandbox(root, cache, **sandbox_options)
    agent.setup(sandbox)
    sandbox.user_policy("e2e-user", USER_POLICY)
    if form != NO_HOOK:
        sandbox.init(agent.name, in_process=form == "in-process")
        if user_steps:
            agent.after_init(sandbox)
    return World(agent, sandbox, clis, form)


@pytest.fixture(scope="session")
def policy_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One compiled-policy cache for every sandbox of the session."""
    return tmp_path_factory.mktemp("e2e-cache")


@pytest.fixture(scope="module")
def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, policy_cache: Path
):
    """The world of `request.param` = (agent name, form), shared by a module's tests."""
    name, form = request.param
    built = make_world(tmp_path_factory.mktemp(f"{name}-{form}"), policy_cache, name, form)
    yield built
    built.sandbox.stop_servers()
