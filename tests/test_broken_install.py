"""A broken install fails the way the user chose (issue 16 point 2), with a real install removed.

A throwaway venv gets a wheel of this checkout (built once, non-editable; the dependencies are
linked in from the test interpreter's site-packages, rtk_policy left out), `init` writes the hooks
into a temporary HOME, `pip uninstall rtk-policy` removes the package (the venv kept), and the
installed command is run as the agents run it (`bash -c`) on each agent's payload: it must exit 0
and print the fail mode's answer — nothing (open, `{}` for Cursor), the agent's ask (closed; a deny
for Codex) or its deny — never exit 2 or any other code an agent reads as a block. The unguarded
command of earlier inits is run too, to show what the guard prevents. Then the venv is deleted.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from rtk_policy.agents import AGENTS, agent_module
from rtk_policy.agents.samples import sample_payload
from rtk_policy.settings.hook_command import MISSING, unguarded
from rtk_policy.settings.install import our_commands
from rtk_policy.settings.jsonfile import read_json
from rtk_policy.settings.targets import target, thin_client_unavailable

ROOT = Path(__file__).resolve().parent.parent
pytestmark = [
    pytest.mark.skipif(bool(thin_client_unavailable()), reason="needs a POSIX shell and sockets"),
    pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash"),
]
#: Not linked into the throwaway venv: the package under test, and pip's own machinery.
OURS = ("rtk_policy", "__editable__", "pip", "_distutils_hack", "setuptools", "pkg_resources")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel of this checkout, built from a copy of its sources (the checkout stays clean)."""
    source = tmp_path_factory.mktemp("source")
    for name in ("rtk_policy", "policies", "hooks"):
        shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    out = tmp_path_factory.mktemp("wheel")
    # built in an isolated environment: its setuptools comes from the configured package index
    pip(["wheel", "--no-deps", "-q", "-w", str(out), str(source)], offline=False)
    (built,) = out.glob("rtk_policy-*.whl")
    return built


def pip(args: list[str], offline: bool = True) -> None:
    """This interpreter's pip (`offline`: every package comes from the wheel or is already here)."""
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    if offline:
        env["PIP_NO_INDEX"] = "1"
    subprocess.run([sys.executable, "-m", "pip", *args], check=True, env=env, timeout=300)


def link_dependencies(venv: Path) -> None:
    """Make this interpreter's installed packages (not rtk_policy, not pip) importable in `venv`."""
    here = Path(sysconfig.get_paths()["purelib"])
    deps = venv / "deps"
    deps.mkdir()
    for entry in here.iterdir():
        if entry.name.startswith(OURS) or entry.suffix == ".pth":
            continue
        (deps / entry.name).symlink_to(entry)
    (site_packages(venv) / "deps.pth").write_text(f"{deps}\n")


def site_packages(venv: Path) -> Path:
    """The venv's site-packages folder."""
    (found,) = venv.glob("lib/python*/site-packages")
    return found


@pytest.fixture()
def installed(tmp_path: Path, wheel: Path) -> dict[str, Path]:
    """A venv with the wheel installed, and a private HOME."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    link_dependencies(venv)
    pip(["--python", str(venv / "bin" / "python"), "install", "--no-deps", "-q", str(wheel)])
    home = tmp_path / "home"
    home.mkdir()
    return {"venv": venv, "home": home, "run": tmp_path / "run"}


def environment(folders: dict[str, Path]) -> dict[str, str]:
    """What an agent's hook process sees: the private HOME, no variable of ours."""
    folders["run"].mkdir(mode=0o700, exist_ok=True)
    home = folders["home"]
    return {
        "HOME": str(home),
        "PATH": "/usr/bin:/bin",
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".state"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_RUNTIME_DIR": str(folders["run"]),
        "RTK_POLICY_SERVE_IDLE": "3",
        "CODEX_HOME": str(home / ".codex"),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
    }


def init(folders: dict[str, Path], agent: str, *options: str) -> str:
    """Run the venv's `rtk-policy init --global --agent AGENT`; the command it installed."""
    env = environment(folders)
    script = str(folders["venv"] / "bin" / "rtk-policy")
    subprocess.run(
        [script, "init", "--global", "--agent", agent, *options],
        check=True, capture_output=True, env=env, timeout=120, cwd=folders["home"],
    )  # fmt: skip
    old = os.environ.copy()
    os.environ.update(env)
    try:
        spec = target(agent, True)
        (command,) = our_commands(read_json(spec.path).data, spec)
    finally:
        os.environ.clear()
        os.environ.update(old)
    return command


def run_hook(folders: dict[str, Path], agent: str, command: str) -> subprocess.CompletedProcess:
    """Run `command` as an agent does, through `bash -c`, on that agent's `git status` payload."""
    payload = json.dumps(sample_payload(agent, "git status", str(folders["home"])))
    return subprocess.run(
        ["bash", "-c", command], input=payload.encode(), capture_output=True,
        env=environment(folders), timeout=120, cwd=folders["home"],
    )  # fmt: skip


def stop_servers(folders: dict[str, Path]) -> None:
    """End the resident engine the working hook started (its lock holds the pid)."""
    lock = folders["run"] / "rtk-policy" / "engine.lock"
    try:
        os.kill(int(lock.read_text().strip()), 15)
    except (OSError, ValueError):
        pass


def expected(agent: str, mode: str) -> bytes:
    """The fail mode's answer for `agent`, as the guard prints it."""
    answer = agent_module(agent).fail_answer(mode, MISSING)
    return (answer + "\n").encode() if answer else b""


@pytest.mark.parametrize("mode", ["open", "closed"])
def test_uninstalled_package_answers_per_fail_mode_for_every_agent(installed, mode) -> None:
    """Working first (the engine's answer: Claude Code's read-only `git status` allowed), then
    after `pip uninstall` the fail mode's answer, exit 0."""
    commands = {agent: init(installed, agent, "--fail", mode) for agent in AGENTS}
    try:
        done = run_hook(installed, "claude", commands["claude"])
        assert done.returncode == 0, done.stderr
        answer = json.loads(done.stdout)["hookSpecificOutput"]
        assert answer["permissionDecision"] == "allow", answer
        assert answer["permissionDecisionReason"].startswith("Claude Code runs this read-only")
    finally:
        stop_servers(installed)
    python = installed["venv"] / "bin" / "python"
    pip(["--python", str(python), "uninstall", "-y", "-q", "rtk-policy"])
    assert not list(site_packages(installed["venv"]).glob("rtk_policy*"))
    for agent, command in commands.items():
        done = run_hook(installed, agent, command)
        assert (done.returncode, done.stdout) == (0, expected(agent, mode)), (agent, done)
        assert b"the hook cannot run" in done.stderr
    answer = json.loads(run_hook(installed, "codex", commands["codex"]).stdout or b"{}")
    if mode == "closed":  # Codex cannot ask: its closed answer is a deny asking for approval
        assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    stricter = {**environment(installed), "RTK_POLICY_FAIL": "deny"}  # the agent's environment
    done = subprocess.run(["bash", "-c", commands["gemini"]], input=b"{}", capture_output=True,
                          env=stricter, timeout=60)  # fmt: skip
    assert (done.returncode, done.stdout) == (0, expected("gemini", "deny"))
    unguarded_command = " ".join(unguarded(commands["claude"]) or [])
    old = run_hook(installed, "claude", unguarded_command)
    assert old.returncode == 2  # what earlier inits installed: Claude Code reads exit 2 as block


def test_a_missing_client_body_answers_per_fail_mode(installed) -> None:
    """`client.py` runs `thin_client.py`: the guard checks both, so a half-removed package still
    answers with the fail mode chosen at `init` (here closed), not the client's own fallback."""
    command = init(installed, "claude", "--fail", "closed")
    (site_packages(installed["venv"]) / "rtk_policy" / "serve" / "thin_client.py").unlink()
    done = run_hook(installed, "claude", command)
    assert (done.returncode, done.stdout) == (0, expected("claude", "closed")), done
    assert b"the hook cannot run" in done.stderr


def test_fail_closed_sets_claude_codes_own_block_on_failure(installed) -> None:
    """`--fail closed` writes `onFailure: "block"` and a timeout; `--fail open` takes it away."""
    init(installed, "claude", "--fail", "closed")
    settings = json.loads((installed["home"] / ".claude" / "settings.json").read_text())
    (handler,) = settings["hooks"]["PreToolUse"][0]["hooks"]
    assert handler["onFailure"] == "block" and handler["timeout"] == 30
    init(installed, "claude", "--fail", "open")
    settings = json.loads((installed["home"] / ".claude" / "settings.json").read_text())
    (handler,) = settings["hooks"]["PreToolUse"][0]["hooks"]
    assert "onFailure" not in handler and handler["timeout"] == 30


def test_deleted_venv_and_in_process_form_fail_open(installed) -> None:
    """The in-process form is guarded too; with the whole venv gone both forms still exit 0."""
    thin = init(installed, "copilot")
    in_process = init(installed, "claude", "--in-process")
    assert unguarded(in_process)[-2:] == ["hook", "claude"]
    shutil.rmtree(installed["venv"])
    for agent, command in (("copilot", thin), ("claude", in_process)):
        done = run_hook(installed, agent, command)
        assert (done.returncode, done.stdout) == (0, b""), (agent, done)


def test_doctor_of_another_install_names_what_is_missing(installed) -> None:
    """After the uninstall, this checkout's doctor finds the hook file gone, the guard answering."""
    init(installed, "claude")
    pip(["--python", str(installed["venv"] / "bin" / "python"), "uninstall", "-y", "-q",
         "rtk-policy"])  # fmt: skip
    env = {**environment(installed), "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "rtk_policy", "doctor"], capture_output=True, text=True,
        env=env, timeout=300, cwd=installed["home"],
    )  # fmt: skip
    assert done.returncode == 1
    assert "PROBLEM the hook's hook file" in done.stdout and "client.py is missing" in done.stdout
    assert "PROBLEM hook command runs and answers (rtk-policy: the hook cannot run" in done.stdout


@pytest.mark.parametrize("shell", ["sh", "dash", "zsh", "fish"])
def test_the_guard_is_valid_in_every_shell_an_agent_may_use(shell, tmp_path) -> None:
    """Claude Code and Codex run hooks with the user's $SHELL: the guarded command works in each
    (when installed): the fallback per fail mode, stricter with RTK_POLICY_FAIL, never looser."""
    from rtk_policy.settings.hook_command import FAIL_MODES, guarded

    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed")
    missing = str(tmp_path / "gone" / "client.py")
    for agent in AGENTS:
        for mode in FAIL_MODES:
            command = guarded(["/gone/python", "-S", "-I", missing, agent],
                              [("-x", "/gone/python"), ("-f", missing)], agent, mode)  # fmt: skip
            for env in ("", "open", "closed", "deny"):
                strictest = max(mode, env or "open", key=FAIL_MODES.index)
                done = subprocess.run(
                    [shell, "-c", command], input=b"{}", capture_output=True, timeout=30,
                    env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "RTK_POLICY_FAIL": env},
                )  # fmt: skip
                assert (done.returncode, done.stdout) == (0, expected(agent, strictest)), (
                    agent, mode, env, done,
                )  # fmt: skip


@pytest.mark.parametrize("removed", ["security-baseline.yaml", ""])
def test_a_missing_shipped_pack_makes_every_answer_ask(installed, removed) -> None:
    """A pack file deleted from the install (or the whole packs folder, `""`) leaves what it held
    unjudged: the real hook asks about every command then, naming what is missing, instead of a
    quiet "no opinion" on `rm -rf /`; `check` fails and `rewrite` exits 3 (ask)."""
    command = init(installed, "claude")
    packs = site_packages(installed["venv"]) / "rtk_policy" / "packs"
    try:
        done = run_hook(installed, "claude", command)
        assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "allow"
    finally:
        stop_servers(installed)  # the resident engine read the whole set: it is stopped
    if removed:
        (packs / removed).unlink()
    else:
        shutil.rmtree(packs)
    env = environment(installed)
    payload = json.dumps(sample_payload("claude", "rm -rf /", str(installed["home"])))
    try:
        done = subprocess.run(
            ["bash", "-c", command], input=payload.encode(), capture_output=True, env=env,
            timeout=120, cwd=installed["home"],
        )  # fmt: skip
        answer = json.loads(done.stdout)["hookSpecificOutput"]
        assert answer["permissionDecision"] == "ask", answer
        assert "a shipped policy pack is missing" in answer["permissionDecisionReason"]
        assert (removed or "claude-permissions.yaml") in answer["permissionDecisionReason"]
    finally:
        stop_servers(installed)
    script = str(installed["venv"] / "bin" / "rtk-policy")
    for argv, code in ((["rewrite", "git status"], 3), (["check"], 1)):
        done = subprocess.run([script, *argv], capture_output=True, text=True, env=env,
                              timeout=120, cwd=installed["home"])  # fmt: skip
        assert done.returncode == code, (argv, done)
    assert "a shipped policy pack is missing" in done.stderr
