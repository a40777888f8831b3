"""`AgentProtocol`: the interface every agent module offers (`agents/common.py` says what each part
does). A type for checkers only: modules import it under `TYPE_CHECKING`, never at run time (it
imports typing). `agents.agent_module` returns each module as one, so mypy checks every agent
module against it.
"""

from __future__ import annotations

from typing import Any, Protocol

from rtk_policy.agents.common import HookRequest
from rtk_policy.decision import Decision


class AgentProtocol(Protocol):
    """One agent's hook protocol: its wire JSON in, its answer out."""

    #: the agent's name, one of `agents.AGENTS`
    NAME: str
    #: what the agent's CLI does with each answer (`common.notes`, for `explain --agent`)
    NOTES: dict[str, str]

    def parse_request(self, payload: dict[str, Any]) -> HookRequest | None:
        """The request in `payload`; None: nothing to judge; raises `common.BadRequest`."""

    def render(self, decision: Decision, request: HookRequest) -> str | None:
        """The answer line for `decision`, or None for no output."""

    def pass_through(self, payload: dict[str, Any]) -> str | None:
        """The answer for a tool we do not judge."""

    def fail_answer(
        self, mode: str, message: str, request: HookRequest | None = None
    ) -> str | None:
        """The answer when something went wrong, for the fail mode `mode`."""
