"""Fakes shared by the decision and policy-test tests: a rule value and the two command-line
attributes `decide` reads (no parser, no engine)."""

from __future__ import annotations

import os
from pathlib import Path

import attrs

from rtk_policy.policy.model import Example, Rule


@attrs.frozen
class FakeSegment:
    """A segment as `decide` sees it: whether its program hides behind a variable, and whether it is
    a guessed copy of a command (`Segment.guessed`)."""

    dynamic_program: bool = False
    guessed: bool = False


@attrs.frozen
class FakeLine:
    """A command line as `decide` sees it: its text, segments and the two attestation flags."""

    text: str
    segments: tuple
    parse_error: bool = False
    unattestable: bool = False


def make_rule(
    rule_id: str,
    decision: str = "deny",
    *,
    policy: str = "p",
    line: int = 1,
    kind: str = "permission",
    mode: str = "enforce",
    examples: tuple[Example, ...] = (),
) -> Rule:
    """A Rule value of `policy` (file `<policy>.yaml`), never compiled."""
    return Rule(
        id=rule_id,
        policy=policy,
        file=f"{policy}.yaml",
        line=line,
        kind=kind,
        decision=decision,
        mode=mode,
        programs=(),
        pipeline="never",
        examples=examples,
    )


def fake_claude(folder: Path) -> Path:
    """An executable named `claude` that stands for Claude Code in a process tree: it runs the words
    after `--` as its child and exits with its status, so the child's parent process has the
    command line `/bin/sh …/claude [OPTIONS…] -- CMD…`, options (`--disallowedTools …`) included,
    as a hook started by Claude Code has."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "claude"
    script.write_text(
        '#!/bin/sh\nwhile [ "$#" -gt 0 ] && [ "$1" != -- ]; do shift; done\nshift\n"$@"\n'
        "status=$?\nexit $status\n",
        encoding="utf-8",
    )
    script.chmod(0o755)
    return script


def under_claude(folder: Path, argv: list[str], *options: str) -> list[str]:
    """`argv` run as a child of a fake Claude Code started with `options`."""
    return [str(fake_claude(folder)), *options, "--", *argv]


def with_path(env: dict[str, str], folder: str) -> dict[str, str]:
    """`env` with `folder` first on PATH."""
    return {**env, "PATH": folder + os.pathsep + env.get("PATH", "")}


def trust_workspace(folder: Path) -> None:
    """Record `folder` as a workspace Claude Code trusts, in its global config (where the trust
    dialog's answer is kept), so its project settings' allow rules count."""
    import json

    from rtk_policy.settings.claude_trust import global_config_path, trust_key

    path = Path(global_config_path())
    data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    data.setdefault("projects", {})[trust_key(str(folder))] = {"hasTrustDialogAccepted": True}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
