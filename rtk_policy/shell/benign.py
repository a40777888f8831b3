"""Valid bash that tree-sitter-bash reports as a syntax error, recognised so it is not one.

tree-sitter-bash (0.2x) has no rule for some valid forms and marks them with ERROR / MISSING nodes:

* `cmd 3<> rw`, `cmd <> rw`: the read-write operator is lexed as `<` plus an ERROR `>` inside the
  file redirect (`redirects.RedirectNode` joins the two into `<>`);
* `cat > .env <<< "KEY=value"`: a here-string after a trailing redirect is lexed as an ERROR `<<`
  followed by a file redirect `< "KEY=value"` (`here_string_head` tells the redirect reader);
* `x=1 >f`, `>f x=1`: assignments and redirects with no command get a MISSING command name.

`only_benign_errors` is True when every error in a tree has one of these shapes.
"""

from __future__ import annotations

from rtk_policy.shell.source import Source

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_NO_PROGRAM_PARTS = frozenset({"variable_assignment", "file_redirect", "herestring_redirect"})
MAX_NODES = 10_000  #: a tree with more error-carrying nodes than this is not checked


def only_benign_errors(src: Source, root: Any) -> bool:
    """True when every ERROR / MISSING node below `root` is one of the known valid-bash shapes."""
    stack, seen = [root], 0
    while stack:
        node = stack.pop()
        seen += 1
        if seen > MAX_NODES:
            return False
        if node.is_missing:
            if not _missing_program(node):
                return False
        elif node.type == "ERROR":
            if not (_read_write_op(src, node) or here_string_head(src, node)):
                return False
        else:
            stack.extend(c for c in node.children if c.has_error or c.is_missing)
    return True


def here_string_head(src: Source, node: Any) -> bool:
    """True for the ERROR `<<` tree-sitter leaves before `< word` in `cmd >f <<< word`."""
    nxt = node.next_sibling
    return (
        node.type == "ERROR"
        and src.parse_data[node.start_byte : node.end_byte] == b"<<"
        and nxt is not None
        and nxt.type == "file_redirect"
        and nxt.start_byte == node.end_byte
        and nxt.child_count > 1
        and nxt.children[0].type == "<"
        and not nxt.has_error
    )


def _read_write_op(src: Source, node: Any) -> bool:
    """The ERROR `>` of `<>` inside a file redirect (`cmd 3<> rw`)."""
    prev = node.prev_sibling
    return (
        node.parent is not None
        and node.parent.type == "file_redirect"
        and src.parse_data[node.start_byte : node.end_byte] == b">"
        and prev is not None
        and prev.type == "<"
        and prev.end_byte == node.start_byte
        and node.next_sibling is not None
        and node.next_sibling.is_named
        and not node.next_sibling.has_error
    )


def _missing_program(node: Any) -> bool:
    """The MISSING command name of a command that is only assignments and redirects (`x=1 >f`)."""
    name = node.parent
    if node.type != "word" or name is None or name.type != "command_name":
        return False
    cmd = name.parent
    if cmd is None or cmd.type != "command" or cmd.children[-1] != name:
        return False
    parts = cmd.children[:-1]
    return bool(parts) and all(c.type in _NO_PROGRAM_PARTS and not c.has_error for c in parts)
