"""Codex's hook trust (issue 16 point 3): the hash `rtk_policy.settings.codex_trust` computes is the
one Codex computes, `init` says when a change needs a new review, and `doctor` reads the state.

The hash is checked against the real Codex 0.169 (`codex app-server`, `hooks/list`) when it is
installed (tests/e2e/install_clis.sh puts it in ~/.cache/rtk-policy-e2e); that test skips otherwise.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest
from test_init import stop_server

from rtk_policy.commands import doctor, init
from rtk_policy.settings import codex_trust
from rtk_policy.settings.targets import thin_client_unavailable

CLIS = Path(
    os.environ.get("RTK_E2E_CLIS")
    or os.environ.get("RTK_E2E_CACHE")
    or Path.home() / ".cache" / "rtk-policy-e2e"
)
CODEX = CLIS / "codex" / "node_modules" / ".bin" / "codex"


@pytest.fixture()
def codex_home(tmp_path, monkeypatch):
    """A private HOME and CODEX_HOME."""
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CODEX_HOME", str(home / ".codex"))
    monkeypatch.chdir(tmp_path)
    return home / ".codex"


def trust(codex: Path, statuses: dict[str, tuple[str, str]]) -> None:
    """Record every hook of `statuses` as reviewed, the way Codex's `/hooks` stores it."""
    hooks = json.loads((codex / "hooks.json").read_text())
    lines = []
    for group, index, matcher, handler in codex_trust.handlers_of(hooks, "PreToolUse"):
        key = codex_trust.hook_key(codex / "hooks.json", "PreToolUse", group, index)
        digest = codex_trust.handler_hash("PreToolUse", matcher, handler)
        lines.append(f'[hooks.state.{json.dumps(key)}]\ntrusted_hash = "{digest}"\n')
    (codex / "config.toml").write_text("\n".join(lines))


def test_event_labels_and_keys() -> None:
    """Codex's snake-case event names and positional keys."""
    assert codex_trust.event_label("PreToolUse") == "pre_tool_use"
    assert codex_trust.event_label("UserPromptSubmit") == "user_prompt_submit"
    assert codex_trust.hook_key("/h/hooks.json", "PreToolUse", 1, 0) == (
        "/h/hooks.json:pre_tool_use:1:0"
    )


def test_the_hash_covers_command_matcher_timeout_and_async() -> None:
    """Each of them changes the hash; an absent timeout is the default 600 s; key order does not."""
    base = {"type": "command", "command": "x", "timeout": 30}
    digest = codex_trust.handler_hash("PreToolUse", "Bash", base)
    assert digest.startswith("sha256:") and len(digest) == 7 + 64
    for changed in ({"command": "y"}, {"timeout": 31}, {"async": True}, {"statusMessage": "m"}):
        assert codex_trust.handler_hash("PreToolUse", "Bash", {**base, **changed}) != digest
    assert codex_trust.handler_hash("PreToolUse", None, base) != digest
    assert codex_trust.handler_hash("PreToolUse", "Bash", dict(reversed(base.items()))) == digest
    bare = {"type": "command", "command": "x"}
    assert codex_trust.handler_hash("PreToolUse", "Bash", bare) == codex_trust.handler_hash(
        "PreToolUse", "Bash", {**bare, "timeout": 600}
    )


@pytest.mark.parametrize(
    ("state", "status"),
    [
        (None, "untrusted"),
        ({"trusted_hash": "sha256:old"}, "modified"),
        ({"trusted_hash": "sha256:now"}, "trusted"),
        ({"trusted_hash": "sha256:now", "enabled": False}, "disabled"),
    ],
)
def test_trust_status(state, status) -> None:
    """No stored hash, another one, the same one, or switched off."""
    assert codex_trust.trust_status(state, "sha256:now") == status


def hooks_list(env: dict[str, str], cwd: Path) -> list[dict]:
    """The hooks `codex app-server` reports (JSON-RPC over stdio: initialize, hooks/list)."""
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"clientInfo": {"name": "rtk-policy-test", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {}},
    ]  # fmt: skip
    with subprocess.Popen(
        [str(CODEX), "app-server"], cwd=cwd, env=env, text=True,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    ) as server:  # fmt: skip
        timer = threading.Timer(60, server.kill)
        timer.start()
        try:
            server.stdin.write("".join(json.dumps(r) + "\n" for r in requests))
            server.stdin.flush()
            for line in server.stdout:
                message = json.loads(line)
                if message.get("id") == 2:
                    return [h for entry in message["result"]["data"] for h in entry["hooks"]]
        finally:
            timer.cancel()
            server.kill()
    raise AssertionError("codex app-server closed without answering hooks/list")


@pytest.mark.skipif(not CODEX.exists(), reason=f"Codex CLI not installed in {CLIS}")
@pytest.mark.skipif(bool(thin_client_unavailable()), reason="the thin client needs Unix sockets")
def test_hashes_and_statuses_match_the_real_codex(codex_home, tmp_path) -> None:
    """What init installs: Codex's own currentHash and trustStatus equal ours, before and after
    the state is written; a foreign hook with no timeout and non-ASCII text too."""
    init.run(SimpleNamespace(agent="codex", global_=True), None, io.StringIO(), io.StringIO())
    hooks = json.loads((codex_home / "hooks.json").read_text())
    hooks["hooks"]["PreToolUse"].append(
        {"matcher": "^Bash$", "hooks": [{"type": "command", "command": "echo é >&2"}]}
    )
    (codex_home / "hooks.json").write_text(json.dumps(hooks))
    env = {"HOME": os.environ["HOME"], "CODEX_HOME": str(codex_home), "PATH": "/usr/bin:/bin"}
    for trusted in (False, True):
        if trusted:
            trust(codex_home, {})
        ours = codex_trust.statuses(codex_home / "hooks.json", hooks, "PreToolUse")
        reported = {h["key"]: h for h in hooks_list(env, tmp_path)}
        assert set(reported) == set(ours)
        for key, (status, handler) in ours.items():
            assert reported[key]["trustStatus"] == status, key
            assert reported[key]["command"] == handler["command"]
            assert status == ("trusted" if trusted else "untrusted")
        for group, index, matcher, handler in codex_trust.handlers_of(hooks, "PreToolUse"):
            key = codex_trust.hook_key(codex_home / "hooks.json", "PreToolUse", group, index)
            digest = codex_trust.handler_hash("PreToolUse", matcher, handler)
            assert reported[key]["currentHash"] == digest


@pytest.mark.skipif(bool(thin_client_unavailable()), reason="the thin client needs Unix sockets")
def test_init_tells_about_the_review_and_warns_when_a_trusted_hook_changes(codex_home) -> None:
    """First init: the /hooks note. Trusted, init again with no change: no warning. A change (here
    the fail mode, so the command): a warning that Codex must be told to trust it again."""
    out, err = io.StringIO(), io.StringIO()
    init.run(SimpleNamespace(agent="codex", global_=True), None, out, err)
    assert "/hooks" in out.getvalue() and "warning" not in err.getvalue()
    trust(codex_home, {})
    out, err = io.StringIO(), io.StringIO()
    init.run(SimpleNamespace(agent="codex", global_=True), None, out, err)
    assert "already installed" in out.getvalue() and "Codex trusts this hook" in out.getvalue()
    assert err.getvalue() == ""
    out, err = io.StringIO(), io.StringIO()
    init.run(SimpleNamespace(agent="codex", global_=True, fail="deny"), None, out, err)
    assert "trust it again in `/hooks`" in err.getvalue()
    assert "Codex runs this hook only after you trust it" in out.getvalue()


@pytest.mark.skipif(bool(thin_client_unavailable()), reason="the thin client needs Unix sockets")
def test_doctor_says_whether_codex_trusts_the_hook(codex_home, tmp_path, monkeypatch) -> None:
    """Untrusted after init: a PROBLEM with the fix; trusted: ok."""
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.setenv("RTK_POLICY_SERVE_IDLE", "5")
    init.run(SimpleNamespace(agent="codex", global_=True), None, io.StringIO(), io.StringIO())
    try:
        out = io.StringIO()
        doctor.run(SimpleNamespace(), None, out, io.StringIO())
        assert "PROBLEM Codex does not run this hook until you trust it" in out.getvalue()
        trust(codex_home, {})
        out = io.StringIO()
        doctor.run(SimpleNamespace(), None, out, io.StringIO())
        assert "ok      Codex trusts this hook" in out.getvalue()
    finally:
        stop_server(runtime)  # the one the hook command started
