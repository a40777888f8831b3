"""Colour for people at a terminal: only when the stream is a TTY, never with `NO_COLOR` set
(no-color.org) or `TERM=dumb`. Used by the reporting commands, never by the hook."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~4 ms on a cold hook)
if TYPE_CHECKING:
    from typing import IO

#: SGR codes by meaning
STYLES = {"deny": "31", "ask": "33", "allow": "32", "none": "2", "bold": "1", "dim": "2"}


def wants_colour(stream: IO[str]) -> bool:
    """True when `stream` is a terminal and the environment does not ask for plain text."""
    if "NO_COLOR" in os.environ or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def paint(text: str, style: str, enabled: bool) -> str:
    """`text` in the colour `style` names (a key of `STYLES`), or unchanged when not `enabled`."""
    code = STYLES.get(style)
    if not enabled or code is None:
        return text
    return f"\x1b[{code}m{text}\x1b[0m"
