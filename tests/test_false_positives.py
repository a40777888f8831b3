"""False positives of issue 18 (class 6): temp folders, jq/yq filters, option values read as
subcommands, --help and --dry-run forms, and a heredoc body starting with a backslash."""

from __future__ import annotations

from pathlib import Path

import pytest

from rtk_policy.config.load import Config
from rtk_policy.engine.pipeline import Engine
from rtk_policy.policy import load_policy_set
from rtk_policy.shell import parse

PACK = Path(__file__).resolve().parents[1] / "policies" / "security-baseline.yaml"


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine(policies=load_policy_set([str(PACK)]), config=Config(audit_enabled=False))


@pytest.mark.parametrize(
    "text",
    [
        "rm -rf /var/tmp/*",
        "yq '.key' file.yaml",
        "yq eval '.metadata.name' deploy.yaml",
        "jq '.key' data.json",
        "kubectl -n delete get pods",
        "kubectl --context delete get pods",
        "az --subscription delete vm list",
        "az -o delete vm list",
        "gcloud --project delete compute instances list",
        "git restore --help",
        "git restore -h",
        "helm uninstall myrelease --dry-run",
        "kubectl delete pod web --dry-run=client",
        "kubectl delete --help",
        "terraform destroy --help",
        "aws configure get region",
        "bash <<EOF\n\\ls -la\nEOF",
        "cat <<EOF > notes.tex\n\\section{Intro}\nEOF",
        "bash <<-EOF\n\t\\echo hi\nEOF",
    ],
)
def test_not_asked(engine, text):
    decision = engine.decide(text, engine.context())
    assert decision.verdict in ("none", "allow"), decision.rule_ids


@pytest.mark.parametrize(
    "text",
    [
        "kubectl --context prod delete pod web",
        "kubectl -n prod delete deploy api",
        "helm --kube-context prod uninstall api",
        "az --subscription prod vm delete -n web --yes",
        "gcloud --project prod compute instances delete vm-1",
        "kubectl delete pod web --dry-run=none",
        "jq . .env",
        "aws configure get aws_secret_access_key",
    ],
)
def test_still_asked(engine, text):
    assert engine.decide(text, engine.context()).verdict == "ask"


@pytest.mark.parametrize(
    ("text", "subcommand"),
    [
        ("kubectl --context prod delete pod web", "delete"),
        ("kubectl -n delete get pods", "get"),
        ("az --subscription delete vm list", "vm"),
        ("helm --kube-context prod uninstall api", "uninstall"),
        ("docker -H tcp://h:2375 rm -f web", "rm"),
        ("git --git-dir .git -c a=b push", "push"),
        ("ls build", "build"),
    ],
)
def test_subcommand_skips_global_option_values(text, subcommand):
    assert parse(text).segments[0].subcommand == subcommand


def test_a_heredoc_body_starting_with_a_backslash_parses():
    line = parse("bash <<EOF\n\\rm -rf /\nEOF")
    assert not line.parse_error
    assert [(s.program, s.args) for s in line.segments if s.origin == "shell_c"] == [
        ("rm", ("-rf", "/"))
    ]
