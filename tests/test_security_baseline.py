"""The security-baseline pack itself: it loads, its examples hold, it is on by default, every rule can be
switched off by id, a project can tighten it, and its messages tell the agent what to do instead."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from rtk_policy.config.load import Config, load_config
from rtk_policy.engine.pipeline import Engine
from rtk_policy.policy import load_policy_set, policy_search_path
from rtk_policy.policytest.examples import run_examples

ROOT = Path(__file__).resolve().parents[1]
PACK = ROOT / "policies" / "security-baseline.yaml"
ISSUE_RULES = {  # the rules issue #6 item 1 asks for, by id
    "rm-recursive-root", "block-device-redirect", "block-device-write", "chmod-recursive-system",
    "chmod-world-writable-system", "fork-bomb", "git-push-force", "git-push-force-with-lease", "git-reset-hard",
    "git-clean-force", "git-discard-changes", "git-branch-force-delete", "pipe-download-to-shell",
    "process-substitution-download", "substitution-download-exec", "credential-read", "keychain-read",
    "credential-send", "credential-pipe-send", "unattestable-parse-error", "unattestable-dynamic-program",
    "unattestable-eval",
}  # fmt: skip
REVIEW_RULES = {  # the rules the golden-corpus review asked for (destructive gaps, exfiltration, shells)
    "rm-recursive-project", "rm-recursive-from-list", "find-mass-delete", "git-history-destroy",
    "kill-all-processes", "system-power", "system-log-truncate", "crontab-remove", "shell-history-wipe",
    "firewall-flush", "kubernetes-delete", "terraform-destroy", "docker-data-remove", "cloud-resource-delete",
    "database-drop", "interpreter-delete", "chmod-open-credentials", "system-file-send",
    "sensitive-file-upload", "reverse-shell",
}  # fmt: skip


def _engine(backend: str | None = None, **config: object) -> Engine:
    policies = load_policy_set([str(PACK)], backend=backend)
    return Engine(policies=policies, config=Config(audit_enabled=False, **config))  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def engine() -> Engine:
    """The baseline alone on the primary backend."""
    return _engine()


#: deny rules that match only a guessed copy (`segment.guessed`), whose denies are asks
GUESSED_ONLY = frozenset({"delete-under-unknown-folder"})


def _first(rule, positive: bool):
    wanted = (rule.decision,) if positive else ("none",)
    return next((e for e in rule.examples if e.expect in wanted and not e.overrides), None)


def test_pack_has_the_issue_rules_and_each_is_documented(engine):
    rules = engine.policies.rules
    ids = [rule.id for rule in rules]
    assert len(ids) == len(set(ids))
    assert ISSUE_RULES | REVIEW_RULES <= set(ids)
    for rule in rules:
        assert rule.kind == "permission" and rule.mode == "enforce", rule.id
        assert rule.decision in ("deny", "ask"), rule.id
        assert rule.description.strip(), rule.id
        if rule.id in GUESSED_ONLY:  # it matches only guessed copies: it fires as an ask
            assert any(e.expect == "ask" for e in rule.examples), f"{rule.id}: none fires"
        elif (
            rule.id != "unattestable-too-large"
        ):  # its example would be 257 commands: see the test below
            assert _first(rule, positive=True) is not None, f"{rule.id}: no example that fires"
        assert _first(rule, positive=False) is not None, f"{rule.id}: no example that must not fire"


def test_every_example_holds(engine):
    results = run_examples(engine)
    assert len(results) >= 2 * len(engine.policies.rules)
    failures = [(r.location, r.example.command, r.detail) for r in results if r.status != "pass"]
    assert failures == []


def test_oversized_input_asks_and_keeps_single_command_denies(engine):
    big = "; ".join(["true"] * 300)
    decision = engine.decide(big, engine.context())
    assert decision.verdict == "ask" and "unattestable-too-large" in decision.rule_ids
    assert engine.decide(big + "; rm -rf /", engine.context()).verdict == "deny"
    assert engine.decide("; ".join(["true"] * 256), engine.context()).verdict == "none"


def test_messages_are_rendered_and_say_what_to_do(engine):
    for rule in engine.policies.rules:
        example = _first(rule, positive=True)
        if example is None:
            continue
        outcome = engine.evaluate(example.command, engine.context())
        assert outcome.evaluation.errors == (), rule.id
        hits = [
            h for r in outcome.evaluation.results for h in r.permission_hits if h.rule.id == rule.id
        ]
        assert hits, f"{rule.id} does not fire on its own example {example.command!r}"
        message = hits[0].message
        assert f"(rule {rule.id})" not in message and len(message) > 40, (rule.id, message)
        if rule.decision == "deny":
            assert message.startswith("Refused:"), (rule.id, message)


@pytest.mark.parametrize(
    "rule_id",
    sorted(ISSUE_RULES | REVIEW_RULES | {"rm-recursive-after-cd", "find-delete-root", "mv-root"}),
)
def test_each_rule_can_be_switched_off_by_id(engine, rule_id):
    rule = next(r for r in engine.policies.rules if r.id == rule_id)
    command = _first(rule, positive=True).command
    assert rule_id in engine.decide(command, engine.context()).rule_ids
    off = _engine(disabled_rules=(rule_id,))
    decision = off.decide(command, off.context())
    assert rule_id not in decision.rule_ids
    assert all(
        rule_id != r.rule.id
        for s in off.evaluate(command, off.context()).evaluation.results
        for r in s.tried
    )


def test_switching_off_through_config_toml(tmp_path):
    """The README recipe: `disabled_rules` in .rtk-policy/config.toml turns a rule off, the rest stays."""
    (tmp_path / ".rtk-policy").mkdir()
    (tmp_path / ".rtk-policy" / "config.toml").write_text(
        'disabled_rules = ["git-push-force"]\n[audit]\nenabled = false\n', encoding="utf-8"
    )
    config = load_config(config_path=str(tmp_path / ".rtk-policy" / "config.toml"))
    engine = Engine(policies=load_policy_set([str(PACK)]), config=config)
    assert engine.decide("git push --force", engine.context()).verdict == "none"
    assert engine.decide("rm -rf /", engine.context()).verdict == "deny"


def test_a_project_pack_can_tighten_an_ask_into_a_deny(tmp_path):
    """The README recipe: a project policy adds a deny; the baseline's ask is not weakened by it."""
    local = tmp_path / "strict.yaml"
    local.write_text(
        "name: strict\nkind: permission\nrules:\n"
        "  - id: no-hard-reset\n    decision: deny\n    programs: [git]\n"
        "    match: segment.subcommand == 'reset' && segment.flags.exists(f, f == '--hard')\n"
        "    message: '\"Refused: use git stash instead of git reset --hard\"'\n",
        encoding="utf-8",
    )
    engine = Engine(
        policies=load_policy_set([str(PACK), str(local)]), config=Config(audit_enabled=False)
    )
    assert engine.decide("git reset --hard", engine.context()).verdict == "deny"
    assert engine.decide("git clean -fdx", engine.context()).verdict == "ask"


def test_on_by_default(tmp_path, monkeypatch):
    """The shipped search path (no --policies) holds the baseline."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    paths = policy_search_path(cwd=str(tmp_path))
    policies = load_policy_set(paths)
    assert any(
        rule.id == "rm-recursive-root" and rule.file.endswith("security-baseline.yaml")
        for rule in policies.rules
    )


def test_backends_agree_on_the_examples(engine):
    """cel-python gives the same verdict as the primary backend on each rule's own examples (a sample: it is slow)."""
    slow = _engine(backend="cel-python")
    for rule in engine.policies.rules:
        for example in (_first(rule, positive=True), _first(rule, positive=False)):
            if example is None:
                continue
            fast_decision = engine.decide(example.command, engine.context())
            slow_decision = slow.decide(example.command, slow.context())
            assert (fast_decision.verdict, fast_decision.command) == (slow_decision.verdict, slow_decision.command), (
                example.command
            )
            assert fast_decision.rule_ids == slow_decision.rule_ids, example.command


def test_env_look_alikes_get_no_verdict_and_real_reads_still_ask(engine):
    """Naming .env as a pattern, a path to untrack or text to append is no read; printing or copying it is."""
    for command in ("git rm --cached .env", 'ls -la | grep ".env"', 'echo ".env" >> .gitignore'):
        assert engine.decide(command, engine.context()).verdict == "none", command
    for command in ("cat .env", "less .env", "grep KEY .env", "cp .env x"):
        decision = engine.decide(command, engine.context())
        assert decision.verdict == "ask", command
        assert {"credential-read", "credential-copy"} & set(decision.rule_ids), command
