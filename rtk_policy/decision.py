"""Combining per-segment rule results into one `Decision` (DESIGN §6). A pure function, table-tested."""

from __future__ import annotations

import attrs

#: Verdicts of a whole command. "none" means no opinion: the host's own rules decide.
VERDICT_ALLOW, VERDICT_ASK, VERDICT_DENY, VERDICT_NONE = "allow", "ask", "deny", "none"


@attrs.frozen
class Decision:
    """What rtk-policy answers for one command."""

    verdict: str  #: "allow" | "ask" | "deny" | "none"
    command: str  #: the command as given
    rewrite: str | None  #: the rewrite the policies selected, before any gating (None: none selected)
    rewritten: str | None  #: the command the host should run instead (None: run it unchanged)
    reasons: tuple[str, ...]  #: messages of the deciding rules (deny or ask), for the agent or user
    rule_ids: tuple[str, ...]  #: ids of the enforce-mode rules that fired (permission and rewrite)
    warnings: tuple[str, ...]  #: messages of warn-mode rules that matched
    audit_rule_ids: tuple[str, ...]  #: ids of audit- and warn-mode rules that matched
    gate: str  #: why a selected rewrite was not applied: "", "unattestable", "refused", "identity", "deny"
    error: str = ""  #: an internal error that forced the fail mode, "" when none
