"""The shell stage: bash text → `CommandLine` of `Segment`s (tree-sitter-bash). Knows nothing of
CEL."""

from __future__ import annotations

from rtk_policy.shell.model import CommandLine, Redirect, Segment

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["CommandLine", "Redirect", "Segment", "parse"]


def parse(text: str, transparent_prefixes: tuple[str, ...] = ()) -> CommandLine:
    """Parse bash `text` into a `CommandLine`; never raises (problems set `parse_error`).

    `transparent_prefixes` are the user's extra wrappers (reference §3.5), e.g. "direnv exec .".
    """
    global _parse_command_line
    if _parse_command_line is None:  # imported on first use: the models alone import nothing more
        from rtk_policy.shell.assemble import parse_command_line

        _parse_command_line = parse_command_line
    return _parse_command_line(text, transparent_prefixes)


_parse_command_line: Callable[[str, tuple[str, ...]], CommandLine] | None = None
