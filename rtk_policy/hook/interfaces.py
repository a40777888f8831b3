"""What the hook service asks of its engine: `HookEngine`, met by `engine.pipeline.Engine` and by
the resident server's `serve.memo.MemoEngine`, and the `FolderFacts` the server's engine carries.

Types for checkers only: modules import them under `TYPE_CHECKING`, never at run time (this module
imports typing).
"""

from __future__ import annotations

from typing import IO, Any, Protocol

from rtk_policy.agents.common import HookRequest
from rtk_policy.agents.protocol import AgentProtocol
from rtk_policy.config.load import Config
from rtk_policy.decision import Decision
from rtk_policy.engine.pipeline import Outcome
from rtk_policy.policy.model import Context, ToolCall
from rtk_policy.settings.agent_rules import Rules


class FolderFacts(Protocol):
    """What a hook call would otherwise read from the file system about its cwd."""

    def claude_project_dir(self, cwd: str | None) -> str | None:
        """`settings.claude_rules.claude_project_dir(cwd)`."""

    def agent_rules(self, agent: str, cwd: str | None, stderr: IO[str] | None = None) -> Rules:
        """`settings.agent_rules.load_agent_rules(agent, cwd, stderr)`."""


class AuditedRequest(Protocol):
    """The request fields an audit record names (a `HookRequest`, or the resident server's copy
    with another `tool_use_id`)."""

    @property
    def agent(self) -> str: ...  # noqa: D102
    @property
    def session_id(self) -> str: ...  # noqa: D102
    @property
    def tool_use_id(self) -> str: ...  # noqa: D102
    @property
    def cwd(self) -> str: ...  # noqa: D102
    @property
    def command(self) -> str: ...  # noqa: D102


class HookEngine(Protocol):
    """A loaded policy set and config deciding hook calls."""

    @property
    def config(self) -> Config:
        """The config the engine was loaded with (the fail mode, the audit log)."""

    @property
    def folder_facts(self) -> FolderFacts | None:
        """Remembered facts of the file system to ask instead of it (None: read it)."""

    def context(self, **fields: Any) -> Context:
        """The policy `Context` of a request: the engine's config plus `fields`."""

    def evaluate(self, text: str, context: Context) -> Outcome:
        """The outcome of the shell command `text`."""

    def evaluate_tool(self, call: ToolCall, context: Context) -> Outcome:
        """The outcome of a call of a tool that is not a shell command."""

    def rendered(
        self, module: AgentProtocol, decision: Decision, request: HookRequest
    ) -> str | None:
        """`module.render(decision, request)` (remembered by an engine that remembers)."""
