"""`util.environ`: the environment one decision reads, per thread (the resident server's calls),
and the decision path reading the variables a client forwards only through it."""

from __future__ import annotations

import os
import pwd
import re
import threading
from pathlib import Path

import pytest

from rtk_policy.serve.thin_client import FORWARDED_ENV
from rtk_policy.util import environ

PACKAGE = Path(environ.__file__).resolve().parent.parent


@pytest.fixture()
def view():
    """This thread reads a client's view: HOME and PATH set, XDG_CONFIG_HOME unset."""
    env = {"HOME": "/home/client", "PATH": "/client/bin", "XDG_CONFIG_HOME": ""}
    environ.use(environ.forwarded_view(env, ("HOME", "PATH", "XDG_CONFIG_HOME")))
    yield
    environ.use(None)


def test_without_a_view_the_process_environment_is_read(monkeypatch):
    monkeypatch.setenv("HOME", "/home/process")
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    assert environ.current() is None
    assert environ.get("HOME") == "/home/process"
    assert environ.get("XDG_CONFIG_HOME", "d") == "d"
    assert environ.expand_user("~/x") == os.path.expanduser("~/x") == "/home/process/x"
    assert environ.subprocess_env() is None


def test_a_view_replaces_the_names_it_holds_and_only_those(view, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", "/process/config")
    monkeypatch.setenv("TMPDIR", "/process/tmp")
    assert environ.get("HOME") == "/home/client"
    assert environ.get("XDG_CONFIG_HOME") is None  # the client has none: not the process's
    assert environ.get("XDG_CONFIG_HOME", "d") == "d"
    assert environ.get("TMPDIR") == "/process/tmp"  # not forwarded: the process's own
    assert environ.values(("HOME", "XDG_CONFIG_HOME")) == ("/home/client", "")
    child = environ.subprocess_env()
    assert child is not None and child["PATH"] == "/client/bin" and "XDG_CONFIG_HOME" not in child
    assert child["TMPDIR"] == "/process/tmp"


@pytest.mark.parametrize(
    ("path", "expanded"),
    [("~", "/home/client"), ("~/a/b", "/home/client/a/b"), ("a/~", "a/~"), ("", ""), ("/x", "/x")],
)
def test_expand_user_uses_the_views_home(view, path, expanded):
    assert environ.expand_user(path) == expanded


def test_expand_user_without_home_in_the_view_asks_the_password_database():
    environ.use(environ.forwarded_view({}, ("HOME",)))
    try:
        assert environ.expand_user("~/x") == pwd.getpwuid(os.getuid()).pw_dir.rstrip("/") + "/x"
        root = pwd.getpwnam("root").pw_dir
        assert environ.expand_user("~root/y") == root.rstrip("/") + "/y"
    finally:
        environ.use(None)


def test_a_view_is_its_threads_alone(view):
    seen = []
    other = threading.Thread(target=lambda: seen.append(environ.get("HOME")))
    other.start()
    other.join()
    assert seen == [os.environ.get("HOME")]
    assert environ.get("HOME") == "/home/client"


#: modules that read the process environment directly, and why that is right for them
DIRECT_READS = {
    "util/environ.py": "the view itself",
    "util/term.py": "NO_COLOR and TERM, for the CLI's own terminal",
    "agents/hook_input.py": "RTK_POLICY_STDIN_TIMEOUT, reading the in-process hook's own stdin",
    "serve/thin_client.py": "the client: what it forwards and the server it starts",
    "serve/runtime.py": "the runtime folder (XDG_RUNTIME_DIR, TMPDIR: not forwarded; the client)",
    "serve/memo.py": "env_values: os.environ's fast path when the thread has no view",
    "serve/resident.py": "RTK_POLICY_SERVE_MAX_RSS_MB, the server's own limit",
    "commands/rewrite.py": "RTK_REWRITE_HOST, the CLI's caller",
    "replay/sources.py": "replay (CLI): the user's own transcripts",
    "settings/sandbox.py": "the doctor's sandbox: a child process's whole environment",
    "settings/targets.py": "install/uninstall (CLI): where the agents' settings are",
    "settings/writer_removal.py": "uninstall (CLI) of the audit writer",
    "settings/writer_service.py": "install (CLI) of the audit writer",
}
_DIRECT = re.compile(r"os\.environ|os\.getenv|\bgetenv\(|expanduser|Path\.home\(|shutil\.which\(")


def test_only_the_listed_modules_read_the_process_environment_directly():
    found = {
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if _DIRECT.search(path.read_text(encoding="utf-8"))
    }
    assert found == set(DIRECT_READS)  # a new read on the decision path goes through environ


def test_the_forwarded_names_are_what_the_view_is_made_of():
    view = environ.forwarded_view({"HOME": "/h", "PATH": ""}, FORWARDED_ENV)
    assert set(view) == set(FORWARDED_ENV)
    assert view["HOME"] == "/h" and view["PATH"] is None  # empty: unset, as the client sent it
