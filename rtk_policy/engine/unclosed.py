"""A command whose last quote is never closed (`echo 'unterminated`): bash reads to the end of the
input looking for the closing quote, reports a syntax error and runs nothing from the line where
the quote opened; the lines before it run as written.

So such a command is judged as the text with that quote closed at the end (`closed_text`): the
lines that run are the same, and what bash would not run becomes one quoted word. A deny the
original text earns (from the parser's best-effort recovery) is kept all the same (`pipeline.py`).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~4 ms on a cold hook)
if TYPE_CHECKING:
    from collections.abc import Callable

    from rtk_policy.shell.model import CommandLine

#: the quotes tried, in order, as the one left open (an open backtick is an unattestable
#: substitution to the parser, and stays asked)
QUOTES = ("'", '"')


def closed_text(
    command_line: CommandLine, parse: Callable[[str], CommandLine]
) -> CommandLine | None:
    """The parse of `command_line`'s text with its one open quote closed at the end, or None when
    the parse error is anything else (an unattestable input: too large, a broken expansion)."""
    text = command_line.text
    if not command_line.parse_error or command_line.unattestable or not text.strip():
        return None
    if "'" not in text and '"' not in text and not text.endswith("\\"):
        return None  # no quote to close: one added at the end would be open itself
    for quote in QUOTES:
        closed = parse(text + quote)
        if not closed.parse_error:
            return closed
    return None
