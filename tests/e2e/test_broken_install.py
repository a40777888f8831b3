"""A broken install (issue 16 point 2): rtk-policy installed by `init` from its own venv, then
removed with `pip uninstall -y rtk-policy`, the venv kept. The hook command `init` wrote still
runs, in every agent CLI and both forms: it must fail the way the user chose — open (the
default: the command is not blocked, the agent's own flow decides) or, with
`RTK_POLICY_FAIL=deny`, blocked with our reason (one that says rtk-policy cannot decide, not
an interpreter's or a shell's error about a missing file).

What the CLIs do with a hook command that fails (observed here): Claude Code blocks on exit 2
(Python's "can't open file") and not on 127; Codex likewise; Gemini CLI blocks on any exit >= 2
with the output as the reason (exit 1 is a warning); Copilot CLI denies on any non-zero exit.
"""

from __future__ import annotations

import os

import pytest

from .conftest import FORMS, clis_folder, make_world, require_cli
from .drivers import AGENTS
from .sandbox import prose
from .scratch_install import ScratchInstall, build_wheel
from .test_scenarios import AGENT_NAMES

#: (agent, form, scenario) -> why it fails today. Empty since the installed command is guarded
#: (rtk_policy/settings/hook_command.py): with its files gone it answers the fail mode, exit 0.
KNOWN_FAILURES: dict[tuple[str, str, str], str] = {}


def broken_worlds(scenario: str):
    """`broken` parameters for every agent and form, known failures marked xfail(strict)."""
    params = []
    for agent in AGENT_NAMES:
        for form in FORMS:
            reason = KNOWN_FAILURES.get((agent, form, scenario))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            params.append(pytest.param((agent, form), id=f"{agent}-{form}", marks=marks))
    return pytest.mark.parametrize("broken", params, indirect=True)


def wheel_of(tmp_path_factory: pytest.TempPathFactory):
    """rtk-policy's wheel, built from this checkout (skip, or fail in CI, when pip cannot)."""
    try:
        return build_wheel(tmp_path_factory.mktemp("wheel"))
    except RuntimeError as error:
        if os.environ.get("RTK_E2E_REQUIRED") == "1":
            pytest.fail(str(error))
        pytest.skip(f"cannot build rtk-policy's wheel: {error}")


@pytest.fixture(scope="module")
def broken_worlds_by_param(tmp_path_factory: pytest.TempPathFactory, policy_cache):
    """{(agent, form): world} for every installed CLI: one scratch venv, `init` run from it in
    every world, then rtk-policy uninstalled from it once."""
    root = tmp_path_factory.mktemp("broken")
    install = None
    built = {}
    for name in AGENT_NAMES:
        if not AGENTS[name].executable(clis_folder()).exists():
            continue
        for form in FORMS:
            if install is None:
                install = ScratchInstall(root, wheel_of(tmp_path_factory))
            built[name, form] = make_world(
                root / f"{name}-{form}", policy_cache, name, form, rtk_policy=install.script
            )
    if install is not None:
        install.uninstall()
    yield built
    for world in built.values():
        world.sandbox.stop_servers()


@pytest.fixture
def broken(request: pytest.FixtureRequest, broken_worlds_by_param):
    """The broken-install world of `request.param` = (agent, form)."""
    name, form = request.param
    require_cli(AGENTS[name])
    return broken_worlds_by_param[name, form]


@broken_worlds("fails_open")
def test_broken_install_fails_open(broken):
    """By default a broken install does not block: the command runs (permissive agent)."""
    work = broken.sandbox.repo("fails-open")
    run = broken.run(work, "touch ran.marker")
    assert (work / "ran.marker").exists(), run.describe()


@broken_worlds("fails_deny")
def test_broken_install_fail_mode_deny(broken):
    """With `RTK_POLICY_FAIL=deny` a broken install blocks, telling the model why."""
    work = broken.sandbox.repo("fails-deny")
    run = broken.run(work, "touch ran.marker", env={"RTK_POLICY_FAIL": "deny"})
    assert not (work / "ran.marker").exists(), run.describe()
    assert "rtk-policy" in prose(run.tool_result), run.describe()
