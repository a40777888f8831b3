"""Aliases an input defines itself (`alias r=rm`, `alias del='rm -rf'`).

Bash replaces the first word of a simple command, when it is an alias name typed without quotes,
with the alias's text: on a line read after the `alias` ran, and only with `expand_aliases` on
(off in a plain `bash -c`, on in an interactive shell and in the shell snapshot some agents
source). The walker does not know which holds, so every later command that starts with the name
also runs as the alias's text followed by the rest of its words, walked like `eval`'s text: a
deny of what the alias makes (`alias r=rm⏎r -rf /`) is never lost, and the command is never
rewritten (`rtk ls` would run ls without the alias). `unalias` removes one.
"""

from __future__ import annotations

from rtk_policy.shell.draft import Ctx, Draft
from rtk_policy.shell.words import assignment_name

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class AliasesMixin:
    """The walker's record of the aliases an input defines (expects `_walk_text`)."""

    aliases: dict[str, str]
    runs_code: bool
    _walk_text: Any  #: `simple.CommandsMixin._walk_text`

    def start_aliases(self) -> None:
        """No alias defined yet."""
        self.aliases = {}
        self._expanding: set[str] = set()

    def aliased(self, d: Draft, ctx: Ctx) -> None:
        """Learn the aliases `d` defines or removes, or walk what `d` runs when it starts with
        one (an alias is not expanded inside its own text again, as bash does not)."""
        words = d.words
        k = 0  # the first word that is not an assignment
        if "=" in words[0].raw:
            k = next((k for k, w in enumerate(words) if assignment_name(w.raw) is None), len(words))
        if k == len(words):
            return
        name = words[k].raw
        if name in ("alias", "unalias"):
            self._define(name, [w.value for w in words[k + 1 :]])
        elif name in self.aliases and name not in self._expanding:
            d.no_rewrite = d.no_rewrite or "alias"  # `rtk ls` would run ls without the alias
            self.runs_code = True  # nested code: the plain path's walk is finished as a full one
            text = self.aliases[name] + d.src.text[words[k].end : d.end]
            inner = Ctx(depth=ctx.depth + 1, parent=d.index, no_rewrite="alias", guess=ctx.guess)
            self._expanding.add(name)
            try:
                self._walk_text(text, inner._replace(origin="eval"))
            finally:
                self._expanding.discard(name)

    def _define(self, command: str, args: list[str]) -> None:
        """`alias NAME=VALUE…` sets them; `unalias NAME…` (or `-a`) removes them."""
        for arg in args:
            if command == "unalias":
                if arg == "-a":
                    self.aliases.clear()
                self.aliases.pop(arg, None)
                continue
            alias, eq, value = arg.partition("=")
            if eq and alias and not alias.startswith("-") and not any(c in alias for c in "$`/"):
                self.aliases[alias] = value
