"""The rules a context leaves out of an evaluation (`PolicySet.evaluate`).

Always those the config disables and those an untrusted layer's loosening suppressed. For a
context that many evaluations share (a batch's: `AFTER` of them with the very same frozen
context), also the rules that cannot match under it whatever the command: their guard gives
`false` from the context's values alone (no `segment`, no `command`, no `tool`: those read as
unknown, so that `false` holds for every command, as a guard's `false` is CEL's; the argument
`deny_reads.py` makes for the re-check). With no Claude Code deny, ask or allow pattern,
`claude-deny`, `claude-ask`, `claude-allow` and their kin are such rules, tried on every segment
otherwise. A cold hook or a server, whose contexts differ from request to request, never works
them out.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from rtk_policy.policy.model import Context

#: evaluations with one context before the rules it cannot match are worked out
AFTER = 64


def configured_out(context: Context) -> frozenset[str]:
    """The ids of the rules disabled by the config, or suppressed (an untrusted layer's
    loosening)."""
    return frozenset(context.disabled_rules + context.suppressed_rules)


class LeftOut:
    """The rules left out under a context, those that cannot match worked out for a context used
    `AFTER` times in a row."""

    def __init__(self, rule_ids: tuple[str, ...], guards: Callable[[], Any]) -> None:
        """`rule_ids`: of the compiled rules, in order; `guards()`: (rule index, guard or None)
        of each of them, unspecialised (asked for once, when first needed)."""
        self._rule_ids = rule_ids
        self._guards = guards
        #: (the context, how often it came in a row, the ids found for it or None), replaced
        #: as a whole and read once: the resident server's threads share it
        self._state: tuple[Context | None, int, frozenset[str] | None] = (None, 0, None)

    def __call__(self, context: Context, values: dict[str, Any]) -> frozenset[str]:
        """The ids of the rules not tried under `context`, whose CEL maps are `values`."""
        last, uses, found = self._state
        if last is not context:
            uses, found = 0, None
        if found is not None:
            return found
        uses += 1
        if uses < AFTER:
            self._state = (context, uses, None)
            return configured_out(context)
        found = configured_out(context) | self._cannot_match(values)
        self._state = (context, uses, found)
        return found

    def _cannot_match(self, values: dict[str, Any]) -> frozenset[str]:
        """The ids all of whose rules have a guard `false` on `values` alone."""
        dead: set[str] = set()
        alive: set[str] = set()
        for index, guard in self._guards():
            rule_id = self._rule_ids[index]
            # a fresh copy each time: a comprehension binds its variable in the map it is given
            if guard is not None and guard(dict(values)) is False:
                dead.add(rule_id)
            else:
                alive.add(rule_id)
        return frozenset(dead - alive)
