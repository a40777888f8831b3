"""`rtk-policy doctor` as a user runs it (the CLI in a subprocess, real settings files, a real
audit log, the real resident engine): read-only on a clean and on broken installs, `--fix`,
`--json`, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rtk_policy.settings.targets import thin_client_unavailable

needs_thin_client = pytest.mark.skipif(
    bool(thin_client_unavailable()), reason="the thin client needs Unix sockets"
)


@pytest.fixture()
def user(tmp_path):
    """A user of their own: HOME, XDG folders, a runtime folder, TMPDIR, a private cache, and a
    git project to run in. `user.run(*words)` runs the CLI there."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
    for name, sub in (
        ("HOME", "home"),
        ("XDG_CONFIG_HOME", "config"),
        ("XDG_STATE_HOME", "state"),
        ("XDG_CACHE_HOME", "cache"),
        ("XDG_RUNTIME_DIR", "run"),
        ("TMPDIR", "tmp"),
    ):
        (tmp_path / sub).mkdir(mode=0o700)
        env[name] = str(tmp_path / sub)
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    return User(env, project, tmp_path)


class User:
    """The CLI run as one user, in their project."""

    def __init__(self, env: dict[str, str], project: Path, root: Path) -> None:
        self.env, self.project, self.root = env, project, root
        self.home = Path(env["HOME"])
        self.audit = Path(env["XDG_STATE_HOME"]) / "rtk-policy" / "audit.jsonl"
        self.cache = Path(env["XDG_CACHE_HOME"])
        self.socket = Path(env["XDG_RUNTIME_DIR"]) / "rtk-policy" / "engine.sock"

    def run(self, *words: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "rtk_policy", *words],
            cwd=cwd or self.project,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    def doctor(self, *words: str) -> subprocess.CompletedProcess[str]:
        done = self.run("doctor", *words)
        self.assert_nothing_left()
        return done

    def assert_nothing_left(self) -> None:
        """No engine runs for this user (its socket, and a real look at the processes), and
        doctor's temporary folders are gone."""
        assert not self.socket.exists()
        assert engines_of(self.home) == []
        assert list(Path(self.env["TMPDIR"]).iterdir()) == []

    def files(self, folder: Path) -> dict[str, tuple[int, bytes]]:
        """Every file under `folder`: (mtime_ns, bytes)."""
        return {
            str(path): (path.stat().st_mtime_ns, path.read_bytes())
            for path in sorted(folder.rglob("*"))
            if path.is_file()
        }


def engines_of(home: Path) -> list[int]:
    """The pids of running `rtk_policy ... serve` processes whose HOME is `home` (Linux /proc)."""
    if not os.path.isdir("/proc/self"):
        pytest.skip("no /proc to look for processes in")
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            environ = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
            state = Path(f"/proc/{entry}/stat").read_text().split(") ", 1)[1][:1]
        except OSError:
            continue
        if b"serve" in cmdline and f"HOME={home}".encode() in environ and state != "Z":
            found.append(int(entry))
    return found


def a_decision_in_the_log(user: User) -> bytes:
    """Write one real audit record (a `rewrite` decision) and return the log's bytes."""
    assert user.run("rewrite", "git", "status").returncode in (0, 1, 2, 3)
    return user.audit.read_bytes()


@needs_thin_client
def test_doctor_on_a_clean_install_changes_nothing(user):
    assert user.run("init", "--global").returncode == 0
    log = a_decision_in_the_log(user)
    stats = user.run("audit", "stats", "--json").stdout
    cache = user.files(user.cache)
    settings = user.files(user.home)
    done = user.doctor()
    assert done.returncode == 0, done.stdout + done.stderr
    for line in (
        "ok      hook command runs and answers",
        "ok      the resident engine starts and listens",
        "ok      the compiled cache is fresh for the current policies",
        "ok      a sample payload round-trips",
    ):
        assert line in done.stdout
    assert user.audit.read_bytes() == log  # not one record more
    assert user.run("audit", "stats", "--json").stdout == stats
    assert user.files(user.cache) == cache
    assert user.files(user.home) == settings


def test_doctor_without_a_hook_exits_1_and_says_how(user):
    done = user.doctor()
    assert done.returncode == 1
    assert "PROBLEM an rtk-policy hook is installed" in done.stdout
    assert "fix: run `rtk-policy init --global`" in done.stdout


def test_doctor_json(user):
    assert user.run("init", "--global").returncode == 0
    done = user.doctor("--json")
    report = json.loads(done.stdout)
    assert report["ok"] is (done.returncode == 0)
    texts = [finding["text"] for finding in report["findings"]]
    assert "an rtk-policy hook is installed" in texts
    assert all(set(f) == {"ok", "text", "fix"} for f in report["findings"])
    broken = user.doctor("--json")  # the same install, the same answer
    assert json.loads(broken.stdout) == report


def test_doctor_quiet_prints_nothing_and_keeps_the_exit_code(user):
    done = user.doctor("--quiet")
    assert (done.returncode, done.stdout) == (1, "")


def test_a_usage_error_exits_64(user):
    assert user.run("doctor", "--no-such-flag").returncode == 64


def add_a_user_policy(user: User) -> None:
    folder = Path(user.env["XDG_CONFIG_HOME"]) / "rtk-policy" / "policies"
    folder.mkdir(parents=True)
    (folder / "team.yaml").write_text(
        "name: team\n"
        "rules:\n"
        "  - id: no-curl\n"
        "    decision: deny\n"
        "    programs: [curl]\n"
        "    match: 'true'\n"
        "    message: '\"no downloads here\"'\n"
    )


def test_a_stale_cache_is_reported_then_fixed(user):
    assert user.run("init", "--global").returncode == 0
    add_a_user_policy(user)
    cache = user.files(user.cache)
    log_before = user.audit.read_bytes() if user.audit.exists() else None
    done = user.doctor()
    assert "ok      policies load and compile" in done.stdout  # the new file among them
    assert done.returncode == 1
    assert "PROBLEM the compiled cache does not hold the current policies" in done.stdout
    assert "fix: run `rtk-policy doctor --fix`" in done.stdout
    assert user.files(user.cache) == cache  # reported, not rebuilt
    assert (user.audit.read_bytes() if user.audit.exists() else None) == log_before
    fixed = user.doctor("--fix")
    assert "fixed: the stale compiled cache was rebuilt" in fixed.stdout, fixed.stdout
    assert fixed.returncode == 0, fixed.stdout
    again = user.doctor()
    assert "ok      the compiled cache is fresh" in again.stdout and again.returncode == 0
    assert user.run("rewrite", "curl", "example.com").returncode == 2  # the new rule decides


def point_at_a_removed_interpreter(settings: Path) -> str:
    """Rewrite our commands in `settings` as an init run from a venv since removed wrote them."""
    gone = "/nonexistent/old-venv/bin/python"
    text = settings.read_text().replace(sys.executable, gone)
    assert gone in text
    settings.write_text(text)
    return gone


@needs_thin_client
def test_a_removed_interpreter_is_reported_then_reinstalled(user):
    assert user.run("init", "--global").returncode == 0
    settings = user.home / ".claude" / "settings.json"
    gone = point_at_a_removed_interpreter(settings)
    before = settings.read_bytes()
    done = user.doctor()
    assert done.returncode == 1
    assert f"PROBLEM the hook's interpreter or script {gone} is missing" in done.stdout
    assert settings.read_bytes() == before
    fixed = user.doctor("--fix")
    assert "fixed: the hook's files were gone; replaced" in fixed.stdout, fixed.stdout
    assert gone not in settings.read_text() and sys.executable in settings.read_text()
    assert fixed.returncode == 0, fixed.stdout


def test_a_customised_command_is_not_rewritten_by_fix(user):
    settings = user.home / ".claude" / "settings.json"
    settings.parent.mkdir()
    command = "/nonexistent/bin/rtk-policy hook claude --config /etc/team.toml"
    handler = {"type": "command", "command": command, "timeout": 30}
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [handler]}]}}))  # fmt: skip
    before = settings.read_bytes()
    user.doctor("--fix")
    assert settings.read_bytes() == before


@needs_thin_client
def test_a_user_and_a_project_install_judging_twice_is_reported(user):
    assert user.run("init", "--global").returncode == 0
    assert user.run("init", "--in-process").returncode == 0  # a different command
    done = user.doctor()
    assert done.returncode == 1
    user_file = user.home / ".claude" / "settings.json"
    project_file = user.project / ".claude" / "settings.local.json"
    expected = f"PROBLEM claude runs the rtk-policy hook from {user_file} and {project_file}"
    assert expected in done.stdout, done.stdout
    assert "every command is judged twice" in done.stdout


def test_the_same_command_in_two_claude_files_runs_once(user):
    assert user.run("init", "--global", "--in-process").returncode == 0
    assert user.run("init", "--in-process").returncode == 0
    done = user.doctor()
    assert "Claude Code runs it once" in done.stdout
    assert "judged twice" not in done.stdout


def test_codex_twice_is_reported_even_with_one_command(user):
    assert user.run("init", "--global", "--agent", "codex", "--in-process").returncode == 0
    assert user.run("init", "--agent", "codex", "--in-process").returncode == 0
    done = user.doctor()
    assert "PROBLEM codex runs the rtk-policy hook from" in done.stdout


@needs_thin_client
def test_an_audit_log_configured_by_path_is_never_probed(user):
    log = user.root / "team-audit.jsonl"
    config = Path(user.env["XDG_CONFIG_HOME"]) / "rtk-policy" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'[audit]\npath = "{log}"\n')
    assert user.run("init", "--global").returncode == 0
    assert user.run("rewrite", "git", "status").returncode in (0, 1, 2, 3)
    before = log.read_bytes()
    done = user.doctor()
    assert f"note: the hook commands were not run: the audit log is configured at {log}" in (
        done.stdout
    )
    assert log.read_bytes() == before


@needs_thin_client
def test_when_the_engine_cannot_start_the_probed_client_starts_none(user, monkeypatch):
    """Doctor's own engine fails to start (here: it is not started at all): the thin client it
    then probes must decide in-process, not start an engine that outlives doctor."""
    from rtk_policy.commands import doctor
    from rtk_policy.settings.sandbox import Sandbox

    assert user.run("init", "--global").returncode == 0
    for name, value in user.env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("CLAUDE_CONFIG_DIR")  # the user's: ~/.claude
    monkeypatch.chdir(user.project)
    monkeypatch.setattr(Sandbox, "start_server", lambda self: "it was not started (test)")
    found = doctor.findings(str(user.project))
    texts = {f.text: f.ok for f in found}
    assert texts["the resident engine starts and listens (it was not started (test))"] is False
    assert texts["hook command runs and answers"] is True  # decided in-process
    time.sleep(1.0)  # an engine the client had started would be importing by now
    user.assert_nothing_left()


def test_an_entry_in_the_committed_settings_json_is_reported(user):
    from rtk_policy.settings.targets import hook_command

    settings = user.project / ".claude" / "settings.json"
    settings.parent.mkdir()
    handler = {"type": "command", "command": hook_command("claude"), "timeout": 30}
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [handler]}]}}))  # fmt: skip
    done = user.doctor()
    assert f"PROBLEM claude's hook is in {settings}, the file teams commit" in done.stdout
    assert "it moves the entry to the per-user settings.local.json" in done.stdout
    assert user.run("init").returncode == 0
    after = user.doctor()
    assert "the file teams commit" not in after.stdout
    assert f"claude hook installed in {settings.with_name('settings.local.json')}" in after.stdout


def test_doctor_in_a_sub_folder_reads_the_project_root(user):
    assert user.run("init", "--in-process").returncode == 0
    sub = user.project / "src"
    sub.mkdir()
    done = user.run("doctor", cwd=sub)
    local = user.project / ".claude" / "settings.local.json"
    assert f"ok      claude hook installed in {local}" in done.stdout, done.stdout
    user.assert_nothing_left()


def test_fix_keeps_the_broken_entrys_form_and_fail_mode(user):
    from rtk_policy.settings.hook_command import fallback_mode
    from rtk_policy.settings.install import IN_PROCESS, command_form

    assert user.run("init", "--global", "--in-process", "--fail", "closed").returncode == 0
    settings = user.home / ".claude" / "settings.json"
    venv_bin = str(Path(sys.executable).parent)
    text = settings.read_text().replace(venv_bin, "/nonexistent/old-venv/bin")
    assert "/nonexistent/old-venv/bin" in text
    settings.write_text(text)
    fixed = user.doctor("--fix")
    assert "fixed: the hook's files were gone" in fixed.stdout, fixed.stdout
    data = json.loads(settings.read_text())
    (command,) = [h["command"] for g in data["hooks"]["PreToolUse"] if g["matcher"] == "Bash"
                  for h in g["hooks"]]  # fmt: skip
    assert command_form(command) == IN_PROCESS and fallback_mode(command) == "closed"
    assert "/nonexistent" not in settings.read_text()
