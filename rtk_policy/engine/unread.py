"""A command the shell stage failed on without recovering any segment (`shell.assemble._recovered`
after an internal error): no rule can judge it, so its decision comes from the fail mode instead of
being "no opinion" by accident — at least an ask saying why (a deny under `fail_mode = "deny"`),
never a rewrite."""

from __future__ import annotations

from rtk_policy.decision import Decision
from rtk_policy.shell.model import CommandLine
from rtk_policy.util import record


def unread(command_line: CommandLine) -> bool:
    """Whether the shell stage failed on `command_line` and kept no segment of its text."""
    return (
        command_line.parse_error
        and not command_line.segments
        and command_line.error.startswith("internal error")
        and bool(command_line.text.strip())
    )


def unread_decision(decision: Decision, command_line: CommandLine, fail_mode: str) -> Decision:
    """The decision on an `unread` command: ask (deny under the deny fail mode), saying why."""
    reason = (
        f"rtk-policy could not read this command ({command_line.error}), so no rule could judge "
        "it and the user must confirm it. Rewrite it in plain bash, or report the error."
    )
    verdict = "deny" if fail_mode == "deny" else "ask"
    return record.evolve(
        decision, verdict=verdict, reasons=(reason,), rewritten=None, gate="unattestable"
    )
