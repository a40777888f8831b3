"""`rtk-policy init --system` / `uninstall --system` (issue 15 item 7): the machine-wide hook
settings of every agent, a root-owned install or a refusal, and a hook that only the managed layer
decides. Root only (the checks need a root-owned install); the machine-wide paths are taken under a
temporary root (`--root`), the real /etc is never touched."""

from __future__ import annotations

import io
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from rtk_policy.agents import AGENTS
from rtk_policy.commands import hook, init, uninstall
from rtk_policy.config import managed
from rtk_policy.hook.service import HookOptions
from rtk_policy.settings import system

pytestmark = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0,
    reason="the --system install is refused unless run as root (it writes /etc)",
)
ROOT = Path(__file__).resolve().parents[1]
LINUX_FILES = {
    "claude": "etc/claude-code/managed-settings.json",
    "codex": "etc/codex/hooks.json",
    "gemini": "etc/gemini-cli/settings.json",
    "copilot": "etc/github-copilot/policy.d/rtk-policy.json",
    "cursor": "etc/cursor/hooks.json",
}


@pytest.fixture()
def root(tmp_path, monkeypatch):
    """A fake `/`: in a root-owned folder out of others' reach when there is one (so the system
    cache counts as safe), else under the test's temporary folder."""
    home = Path(os.path.expanduser("~root"))
    base = home if home.is_dir() and not managed.owner_problems(str(home)) else tmp_path
    folder = Path(tempfile.mkdtemp(prefix="rtk-system-root-", dir=base))
    monkeypatch.setattr(managed, "platform", lambda: "linux")
    monkeypatch.setattr(system, "platform", lambda: "linux")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def run(module, **fields):
    """A command module run with `fields` as its arguments: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    code = module.run(stdout=out, stderr=err, **fields)
    return code, out.getvalue(), err.getvalue()


def hook_commands(path: Path) -> list[str]:
    """Every hook command in a settings file (any event, any matcher)."""
    data = json.loads(path.read_text())
    found = []
    for groups in data["hooks"].values():
        for group in groups:
            for handler in group.get("hooks", [group]):
                found.append(handler.get("command") or handler.get("bash"))
    return found


def test_init_system_writes_every_agents_machine_wide_settings(root):
    code, out, err = run(init, system=True, root=str(root))
    assert code == 0, err
    for agent, relative in LINUX_FILES.items():
        path = root / relative
        commands = hook_commands(path)
        assert commands, agent
        for command in commands:
            words = shlex.split(command)
            assert words[1:] == ["-I", "-m", "rtk_policy", "hook", agent, "--system"]
            assert os.path.realpath(words[0]) == os.path.realpath(sys.executable)
    claude = json.loads((root / LINUX_FILES["claude"]).read_text())["hooks"]["PreToolUse"]
    assert [g["matcher"] for g in claude] == ["Bash", "Write|Edit|MultiEdit|NotebookEdit"]
    gemini = json.loads((root / LINUX_FILES["gemini"]).read_text())["hooks"]["BeforeTool"]
    assert [g["matcher"] for g in gemini] == ["run_shell_command", "write_file|replace"]
    copilot = json.loads((root / LINUX_FILES["copilot"]).read_text())
    assert copilot["version"] == 1 and list(copilot["hooks"]) == ["preToolUse"]
    assert (root / "etc/rtk-policy/policies").is_dir()
    assert "-I -m rtk_policy hook AGENT --system" in out
    first = {agent: (root / rel).read_bytes() for agent, rel in LINUX_FILES.items()}
    assert run(init, system=True, root=str(root))[0] == 0
    assert {agent: (root / rel).read_bytes() for agent, rel in LINUX_FILES.items()} == first


def test_uninstall_system_removes_exactly_ours(root):
    managed_settings = root / LINUX_FILES["claude"]
    managed_settings.parent.mkdir(parents=True)
    foreign = {
        "permissions": {"deny": ["Bash(curl:*)"]},
        "hooks": {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}
            ]
        },
    }
    managed_settings.write_text(json.dumps(foreign, indent=2) + "\n")
    assert run(init, system=True, root=str(root), agent="claude")[0] == 0
    assert len(hook_commands(managed_settings)) == 3
    assert not (root / LINUX_FILES["codex"]).exists()  # one agent asked for: one agent written
    code, out, _ = run(uninstall, system=True, root=str(root))
    assert code == 0 and "removed the rtk-policy hook" in out
    assert json.loads(managed_settings.read_text()) == foreign


def test_the_system_hook_is_decided_by_the_managed_layer_only(root, tmp_path, monkeypatch):
    """A user or project config that switches rules off, or a user policy that allows, changes
    nothing for the system hook; a managed policy does."""
    monkeypatch.setattr(managed, "MANAGED", {"linux": str(root / "etc/rtk-policy")})
    monkeypatch.setattr(managed, "CACHE", {"linux": str(root / "var/cache/rtk-policy")})
    assert run(init, system=True, root=str(root), agent="claude")[0] == 0
    (root / "etc/rtk-policy/policies/site.yaml").write_text(
        "name: site\nkind: permission\nrules:\n  - id: no-telnet\n    decision: deny\n"
        "    programs: [telnet]\n    match: 'true'\n"
    )
    user = tmp_path / "user-config" / "rtk-policy"
    (user / "policies").mkdir(parents=True)
    (user / "config.toml").write_text('disabled_rules = ["git-push-force", "guard-self-write"]\n')
    (user / "policies" / "mine.yaml").write_text(
        "name: mine\nkind: permission\nrules:\n  - id: allow-all\n    decision: allow\n"
        "    match: 'true'\n"
    )
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "user-config"))
    project = tmp_path / "project"
    (project / ".rtk-policy").mkdir(parents=True)
    (project / ".rtk-policy" / "config.toml").write_text('disabled_rules = ["rm-recursive-root"]\n')

    def decide(command: str, system_hook: bool) -> str:
        payload = {
            "session_id": "s",
            "cwd": str(project),
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": command},
        }
        out = io.StringIO()
        options = HookOptions(agent="claude", system=system_hook)
        hook.run(options, io.BytesIO(json.dumps(payload).encode()), out, io.StringIO())
        text = out.getvalue().strip()
        return json.loads(text)["hookSpecificOutput"].get("permissionDecision", "") if text else ""

    assert decide("git push --force origin main", True) == "deny"
    assert decide("rm -rf /", True) == "deny"
    assert decide("telnet example.com", True) == "deny"  # the managed layer's own rule
    assert decide("echo {} > ~/.claude/settings.json", True) == "ask"
    # the user-level hook honours the user's and the project's files (what --system closes)
    assert decide("git push --force origin main", False) != "deny"


def test_a_user_writable_install_is_refused(root, tmp_path):
    """A Python whose packages the agent's user owns: `init --system` refuses and says why."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next((venv / "lib").glob("python*/site-packages"))
    import attrs

    dependencies = Path(attrs.__file__).resolve().parents[1]  # this test run's site-packages
    (site / "rtk_policy_checkout.pth").write_text(f"{ROOT}\n{dependencies}\n")
    for folder, dirs, files in os.walk(venv):
        for name in [*dirs, *files]:
            os.lchown(os.path.join(folder, name), 1000, 1000)
    os.lchown(venv, 1000, 1000)
    python = str(venv / "bin" / "python")
    problems = system.install_problems(python)
    assert any("owned by uid 1000" in p for p in problems), problems
    done = subprocess.run(
        [python, "-m", "rtk_policy", "init", "--system", "--root", str(root)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert "the agent's user could change this install" in done.stderr
    assert "owned by uid 1000" in done.stderr
    assert not (root / "etc").exists()


def test_owner_problems_name_every_unsafe_folder(tmp_path):
    safe = tmp_path / "safe"
    safe.mkdir(mode=0o755)
    open_folder = safe / "open"
    open_folder.mkdir()
    open_folder.chmod(0o777)
    theirs = safe / "theirs"
    theirs.mkdir()
    os.chown(theirs, 1000, 1000)
    problems = managed.owner_problems(str(open_folder))
    assert any(f"{open_folder} is writable by its group or by others" in p for p in problems)
    problems = managed.owner_problems(str(theirs / "missing"))
    assert any(f"{theirs} is owned by uid 1000" in p for p in problems)
    below_open = open_folder / "install"
    below_open.mkdir(mode=0o755)
    problems = managed.owner_problems(str(below_open))  # every folder above is checked
    assert any(f"{open_folder} is writable by its group or by others" in p for p in problems)


def test_a_sticky_folder_above_guards_roots_entries_only(tmp_path):
    """Under a sticky, world-writable folder (as /tmp is) only an entry's owner may rename or
    remove it: a root-owned install below is safe, one owned by another user is not."""
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    sticky.chmod(0o1777)
    install = sticky / "install"
    install.mkdir(mode=0o755)
    assert not [p for p in managed.owner_problems(str(install)) if str(sticky) in p]
    os.chown(install, 1000, 1000)
    problems = managed.owner_problems(str(install / "bin"))
    assert any(f"{install} is owned by uid 1000" in p for p in problems)
    assert any(f"{sticky} is writable by its group or by others" in p for p in problems)
    sticky.chmod(0o777)  # without the sticky bit anyone may replace root's entry
    os.chown(install, 0, 0)
    assert any(f"{sticky} is writable" in p for p in managed.owner_problems(str(install)))


def test_init_system_refuses_without_root(root, monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    code, _, err = run(init, system=True, root=str(root))
    assert code == 1 and "run it as root" in err and not (root / "etc").exists()


def test_every_agent_has_a_machine_wide_file():
    assert set(system.SYSTEM_SETTINGS) == set(AGENTS)


def test_init_system_sets_up_the_audit_writer(root):
    """The writer's key (0600, new random bytes), its systemd unit and the managed config naming
    it; the writer then loads that config (its socket, log and key). No service is started."""
    code, out, err = run(init, system=True, root=str(root))
    assert code == 0, err
    key = root / "etc/rtk-policy/audit.key"
    assert key.stat().st_mode & 0o777 == 0o600 and len(key.read_bytes()) == 32
    unit = (root / "etc/systemd/system/rtk-policy-audit-writer.service").read_text()
    assert "User=rtk-policy-audit" in unit and "audit-writer" in unit
    assert "RuntimeDirectory=rtk-policy/audit" in unit
    assert "systemctl" in out and "audit writer" in out
    from rtk_policy.audit import writer

    config = writer.writer_config(str(root / "etc/rtk-policy/config.toml"))
    assert config.audit_writer == "/run/rtk-policy/audit/writer.sock"
    assert config.audit_key_file == str(key) and config.audit_path == writer.DEFAULT_LOG
    # run again: the key and an existing config are kept as they are
    before = key.read_bytes()
    assert run(init, system=True, root=str(root))[0] == 0
    assert key.read_bytes() == before


def test_init_system_writes_a_launchd_plist_on_macos(root, monkeypatch):
    from rtk_policy.settings import writer_service

    monkeypatch.setattr(writer_service, "platform", lambda: "darwin")
    files = writer_service.service_files("/opt/py/bin/python3")
    (text,) = files.values()
    assert "audit-writer" in text and "_rtkpolicyaudit" in text and "/opt/py/bin/python3" in text
    import plistlib

    assert plistlib.loads(text.encode())["KeepAlive"] is True


def test_init_system_can_leave_the_writer_out(root):
    code, out, err = run(init, system=True, root=str(root), no_audit_writer=True)
    assert code == 0, err
    assert not (root / "etc/rtk-policy/audit.key").exists()
    assert not (root / "etc/rtk-policy/config.toml").exists()


UNIT = "etc/systemd/system/rtk-policy-audit-writer.service"
ENABLED = "etc/systemd/system/multi-user.target.wants/rtk-policy-audit-writer.service"


def test_uninstall_system_takes_back_the_audit_writer_init_set_up(root):
    """The unit (and the link `systemctl enable` made to it), the managed config and the key
    init wrote, the compiled cache and the folders init made are gone; each is named."""
    assert run(init, system=True, root=str(root))[0] == 0
    (root / ENABLED).parent.mkdir(parents=True)
    (root / ENABLED).symlink_to("/" + UNIT)
    cache = Path(system.system_cache(str(root)))
    assert any(cache.iterdir())
    code, out, err = run(uninstall, system=True, root=str(root))
    assert code == 0, err
    for relative in (UNIT, ENABLED, "etc/rtk-policy/config.toml", "etc/rtk-policy/audit.key"):
        assert not os.path.lexists(root / relative), relative
        assert any(line.startswith("removed ") for line in out.splitlines()
                   if line.endswith(str(root / relative)) or f"{root / relative} " in line)
    assert not cache.exists() and not (root / "etc/rtk-policy").exists()
    assert "kept" not in out  # nothing of anyone else's was there
    assert not any((root / relative).exists() for relative in LINUX_FILES.values())


def test_uninstall_system_keeps_the_writers_log_and_the_key_it_needs(root):
    """Nothing is lost: the log, its rotated file and anchor stay byte for byte, and so does the
    key that verifies their chain; the output says what was kept and why."""
    assert run(init, system=True, root=str(root))[0] == 0
    key = root / "etc/rtk-policy/audit.key"
    secret = key.read_bytes()
    logs = root / "var/log/rtk-policy"
    logs.mkdir(parents=True)
    kept = {name: f"{name} bytes\n".encode() for name in ("audit.jsonl", "audit.jsonl.1")}
    kept["audit.anchor"] = b"{}\n"
    for name, data in kept.items():
        (logs / name).write_bytes(data)
    code, out, err = run(uninstall, system=True, root=str(root), as_json=True)
    assert code == 0, err
    report = json.loads(out)
    assert {name: (logs / name).read_bytes() for name in kept} == kept
    assert key.read_bytes() == secret
    assert any(line.startswith(f"kept the audit key {key}") for line in report["kept"])
    assert any(str(logs / "audit.jsonl") in line for line in report["kept"])
    assert f"removed {root / UNIT}" in report["removed"]
    assert not (root / "etc/rtk-policy/config.toml").exists()


def test_uninstall_system_keeps_what_the_admin_wrote_or_changed(root):
    """A managed config that was there before init, a unit changed since, a managed policy and
    another unit's link are the admin's: kept (and named), never removed."""
    managed_folder = root / "etc/rtk-policy"
    (managed_folder / "policies").mkdir(parents=True)
    policy = managed_folder / "policies/team.yaml"
    policy.write_text("name: team\nkind: permission\nrules: []\n")
    config = managed_folder / "config.toml"
    config.write_text('fail_mode = "closed"\n[audit]\nwriter = "/run/x/writer.sock"\n')
    assert run(init, system=True, root=str(root))[0] == 0
    with open(root / UNIT, "a") as handle:
        handle.write("Environment=TEAM=1\n")
    other = root / "etc/systemd/system/multi-user.target.wants/other.service"
    other.parent.mkdir(parents=True)
    other.symlink_to("/etc/systemd/system/other.service")
    before = {path: path.read_bytes() for path in (policy, config, root / UNIT)}
    code, out, err = run(uninstall, system=True, root=str(root))
    assert code == 0, err
    assert {path: path.read_bytes() for path in before} == before
    assert os.path.islink(other)
    assert f"kept {root / UNIT}: it was changed" in out and f"kept {config} (yours)" in out
    assert not (root / "etc/rtk-policy/audit.key").exists()  # init's, and no log needs it


def test_uninstall_system_of_one_agent_keeps_the_writer_the_others_use(root):
    assert run(init, system=True, root=str(root))[0] == 0
    code, out, _ = run(uninstall, system=True, root=str(root), agent="claude")
    assert code == 0 and "kept the audit writer" in out
    assert (root / UNIT).exists() and (root / "etc/rtk-policy/audit.key").exists()
    assert hook_commands(root / LINUX_FILES["codex"])
    assert not (root / LINUX_FILES["claude"]).exists()  # ours alone: the file is gone again
