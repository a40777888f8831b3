"""The shared hook delegate `hooks/rtk-policy-hook.sh` and its per-agent wrappers
`hooks/<agent>/rtk-rewrite.sh`: they hand stdin to `rtk-policy hook AGENT`, and without the
executable they answer in the agent's own shape for each `RTK_POLICY_FAIL` mode."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from rtk_policy.agents import AGENTS, agent_module
from rtk_policy.agents.common import fail_reason

HOOKS = Path(__file__).resolve().parent.parent / "hooks"
MISSING = "rtk-policy is not installed (executable not found)"


def run(script: list[str], env: dict[str, str], data: bytes = b"{}") -> subprocess.CompletedProcess:
    """`sh SCRIPT...` with a bare PATH plus `env`, fed `data` on stdin."""
    return subprocess.run(
        ["sh", *script],
        input=data,
        capture_output=True,
        env={"PATH": "/usr/bin:/bin", **env},
        timeout=30,
        cwd="/tmp",
    )


@pytest.mark.parametrize("agent", AGENTS)
def test_wrapper_hands_stdin_and_agent_to_the_binary(agent, tmp_path):
    """With the executable present the wrapper execs `BIN hook AGENT` and passes stdin through."""
    fake = tmp_path / "rtk-policy"
    fake.write_text('#!/bin/sh\necho "args:$*"; cat; exit 4\n')
    fake.chmod(0o755)
    done = run([str(HOOKS / agent / "rtk-rewrite.sh")], {"RTK_POLICY_BIN": str(fake)}, b'{"a":1}')
    assert (done.returncode, done.stdout) == (4, f'args:hook {agent}\n{{"a":1}}'.encode())


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("mode", ["deny", "closed", "open"])
def test_missing_binary_answers_like_the_agents_fail_mode(agent, mode):
    """Without it: one stderr line, exit 0, and the agent module's fail answer with our reason."""
    env = {"RTK_POLICY_BIN": "/nonexistent/rtk-policy", "RTK_POLICY_FAIL": mode}
    shared = run([str(HOOKS / "rtk-policy-hook.sh"), agent], env)
    wrapper = run([str(HOOKS / agent / "rtk-rewrite.sh")], env)
    assert shared.returncode == 0 and shared.stderr.count(b"\n") == 1
    assert (wrapper.returncode, wrapper.stdout, wrapper.stderr) == (0, shared.stdout, shared.stderr)
    expected = agent_module(agent).fail_answer(mode, "X")
    if mode == "open":
        assert shared.stdout == (expected + "\n" if expected else "").encode()
        return
    answer = json.loads(shared.stdout)
    action = "blocking the command" if mode == "deny" else "asking for approval"
    assert f"{MISSING}; {action}" in shared.stdout.decode()
    if mode == "deny" or agent != "cursor":  # Cursor's closed answer carries no agent_message
        assert answer == json.loads(
            expected.replace(fail_reason("X", mode), f"{MISSING}; {action}")
        )
