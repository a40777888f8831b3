"""Fakes shared by the decision and policy-test tests: a rule value and the two command-line
attributes `decide` reads (no parser, no engine)."""

from __future__ import annotations

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
