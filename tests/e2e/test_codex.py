"""Codex specifics: the hook trust step (issue 16 point 3) and how Codex classifies each answer.

Codex runs a user hook only after the user trusted it in `/hooks`, which stores a hash of the
hook's definition in config.toml (`codex_trust` explains the key and the hash). `codex exec`
does not report hook runs, so the answers are checked through `codex app-server`, whose
`hook/completed` notification says whether Codex took our answer (`completed`, `blocked`) or
rejected it (`failed`, with the reason in `entries`).
"""

from __future__ import annotations

import json
import re

import pytest

from . import codex_trust
from .codex_app import AppServer
from .conftest import make_world
from .drivers import PROMPT
from .fake_model import FakeModel
from .sandbox import prose


@pytest.fixture(scope="module")
def untrusted(tmp_path_factory, policy_cache):
    """Codex with our hook installed by `init` and not (yet) trusted by the user."""
    world = make_world(
        tmp_path_factory.mktemp("codex-fresh"),
        policy_cache,
        "codex",
        "in-process",
        user_steps=False,
    )
    yield world
    world.sandbox.stop_servers()


def app_server(world, work, model=None) -> AppServer:
    """`codex app-server` of `world`, pointed at `model` (default: no model)."""
    args = ()
    if model is not None:
        args = ("-c", f"model_providers.fake.base_url={json.dumps(model.url + '/v1')}")
    env = world.agent.run_env(world.sandbox, model or FakeModel("responses", "true"))
    return AppServer(world.agent.executable(world.clis), env, work, args)


def test_untrusted_hook_does_not_run(untrusted):
    """Right after `init` Codex does not run our hook: nothing judged, the rewrite not applied."""
    work = untrusted.sandbox.repo("untrusted")
    run = untrusted.run(work, "git status")
    assert untrusted.sandbox.audit(cwd=work) == [], run.describe()
    assert untrusted.sandbox.rtk_calls() == [], run.describe()
    with app_server(untrusted, work) as server:
        statuses = [h["trustStatus"] for h in server.hooks_list()]
    # init installs two entries: the Bash hook and the file-tools (apply_patch) hook
    assert statuses == ["untrusted"] * 2


def test_init_tells_about_trust(tmp_path_factory, policy_cache):
    """`init --agent codex` tells the user to trust the hook in `/hooks`."""
    world = make_world(
        tmp_path_factory.mktemp("codex-init"), policy_cache, "codex", "thin", user_steps=False
    )
    output = world.sandbox.init("codex")
    # `/hooks` as a word of its own (prose() drops every word holding a `/`, paths and this too)
    assert re.search(r"(^|[\s`])/hooks\b", output) and "trust" in prose(output).lower(), output


def test_doctor_reports_untrusted_hook(untrusted):
    """`doctor` says the installed Codex hook is not trusted yet."""
    output = prose(untrusted.sandbox.doctor())
    assert "trust" in output.lower(), output


@pytest.mark.parametrize("world", [("codex", "thin")], indirect=True, ids=["codex-thin"])
def test_trust_hash_is_codex_hash(world):
    """The key and hash the package computes (`rtk_policy.settings.codex_trust`) are the ones
    Codex reports, and trusted."""
    work = world.sandbox.repo("trust-hash")
    expected = codex_trust.hook_states(world.agent.codex_home(world.sandbox) / "hooks.json")
    with app_server(world, work) as server:
        hooks = server.hooks_list()
    assert {h["key"]: h["currentHash"] for h in hooks} == expected
    assert [h["trustStatus"] for h in hooks] == ["trusted"] * len(expected) and len(expected) == 2


def test_reinit_says_it_untrusts(tmp_path_factory, policy_cache):
    """Switching a trusted hook's command with `init` warns that Codex must trust it again."""
    world = make_world(tmp_path_factory.mktemp("codex-reinit"), policy_cache, "codex", "thin")
    output = world.sandbox.init("codex", in_process=True)
    work = world.sandbox.repo("reinit")
    with app_server(world, work) as server:
        assert {h["trustStatus"] for h in server.hooks_list()} == {"modified"}
    assert "trust" in prose(output).lower(), output


#: command -> what our hook answers for it (the baseline, the e2e user policy).
ANSWERS = {
    "rewrite": "git status",
    "allow": "touch allowed.marker",
    "deny": "touch ran.marker && git push --force origin main",
    "ask": "touch ran.marker && git reset --hard",
    "none": "touch ran.marker",
}
#: answer -> what the hook run's status must be once Codex took the answer as meant.
ACCEPTED = {
    "rewrite": "completed",
    "allow": "completed",
    "deny": "blocked",
    "ask": "blocked",
    "none": "completed",
}
#: Empty since a plain allow is answered with no output and an ask with a deny (agents/codex.py).
REJECTED_TODAY: dict[str, str] = {}


@pytest.mark.parametrize("world", [("codex", "thin")], indirect=True, ids=["codex-thin"])
@pytest.mark.parametrize(
    "answer",
    [
        pytest.param(
            a,
            marks=[pytest.mark.xfail(strict=True, reason=REJECTED_TODAY[a])]
            if a in REJECTED_TODAY
            else [],
        )
        for a in ANSWERS
    ],
)
def test_codex_takes_our_answer(world, answer):
    """Codex takes each of our answers as meant: the hook run is not marked failed and holds no
    error entry (a deny's reason comes back as a `feedback` entry)."""
    work = world.sandbox.repo(f"answer-{answer}")
    with FakeModel("responses", ANSWERS[answer]) as model, app_server(world, work, model) as server:
        runs = server.turn(work, PROMPT)
    assert len(runs) == 1, runs
    errors = [e for e in runs[0]["entries"] if e.get("kind") == "error"]
    assert (runs[0]["status"], errors) == (ACCEPTED[answer], []), runs
