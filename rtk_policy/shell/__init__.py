"""The shell stage: bash text → `CommandLine` of `Segment`s (tree-sitter-bash). Knows nothing of
CEL."""

from rtk_policy.shell.model import CommandLine, Redirect, Segment

__all__ = ["CommandLine", "Redirect", "Segment", "parse"]


def parse(text: str, transparent_prefixes: tuple[str, ...] = ()) -> CommandLine:
    """Parse bash `text` into a `CommandLine`; never raises (problems set `parse_error`).

    `transparent_prefixes` are the user's extra wrappers (reference §3.5), e.g. "direnv exec .".
    """
    from rtk_policy.shell.parser import parse_command_line

    return parse_command_line(text, transparent_prefixes)
