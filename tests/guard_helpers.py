"""Shared set-up of the guard-self tests (`test_guard_self.py`, `test_guard_startup.py`): a private
home with the project folder as the cwd, and the real hook's answer to an agent's payload."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

from rtk_policy.commands import hook
from rtk_policy.engine.pipeline import Engine
from rtk_policy.hook.service import HookOptions
from rtk_policy.policy import guarded

#: what could point the guarded places away from the private home
HOME_VARIABLES = (
    "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR",
    "CLAUDE_CONFIG_DIR", "CODEX_HOME", "COPILOT_HOME", "ZDOTDIR", "BASH_ENV", "ENV",
)  # fmt: skip


def private_home(tmp_path: Path, monkeypatch, folders: tuple[str, ...] = ()) -> Path:
    """`tmp_path/home` as HOME (with `folders` made in it, none of `HOME_VARIABLES` set) and
    `tmp_path/project` as the cwd; the guard's path tables are read again."""
    home = tmp_path / "home"
    home.mkdir()
    for folder in folders:
        (home / folder).mkdir(parents=True)
    for name in HOME_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    guarded._tables.clear()
    return home


def hook_answer(engine: Engine, payload: dict, agent: str) -> str:
    """What `rtk-policy hook AGENT` prints for `payload` (the real service, this engine)."""
    out, err = io.StringIO(), io.StringIO()
    data = io.BytesIO(json.dumps(payload).encode())
    assert hook.run(HookOptions(agent=agent), data, out, err, engine=engine) == 0
    assert "internal error" not in err.getvalue(), err.getvalue()
    return out.getvalue().strip()


def claude_tool(
    engine: Engine, tool: str, tool_input: dict, cwd: str | None = None
) -> dict | None:
    """Claude Code's answer to a file tool call in folder `cwd` (default: the working folder;
    None for no output)."""
    payload = {
        "session_id": "s",
        "cwd": cwd or os.getcwd(),
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "t",
        "permission_mode": "default",
    }
    text = hook_answer(engine, payload, "claude")
    return json.loads(text)["hookSpecificOutput"] if text else None
