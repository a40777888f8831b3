"""The agents' tools that are not shell commands: what kind each is, and which paths a call names.

`TOOL_KINDS` maps every agent's file-tool names to a kind of `policy.model.TOOL_KINDS` (the names do
not collide across agents: Claude Code's `Write`/`Edit`, Gemini CLI's `write_file`/`replace`,
Copilot CLI's `create`/`edit`/`view`, Codex's `apply_patch`, Cursor's `Delete`). `tool_call(name,
tool_input)` reads a call's paths from the input fields those tools use, and from the file headers
of a patch (`*** Update File: PATH`, `+++ b/PATH`).
"""

from __future__ import annotations

from rtk_policy.policy.model import ToolCall

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~4 ms on a cold hook)
if TYPE_CHECKING:
    from typing import Any

#: tool name → kind (a name not listed is "other")
TOOL_KINDS = {
    # Claude Code (also Copilot's Claude-format payloads and Cursor's preToolUse)
    "Write": "write", "Edit": "edit", "MultiEdit": "edit", "NotebookEdit": "edit",
    "Read": "read", "NotebookRead": "read", "Glob": "read", "Grep": "read", "LS": "read",
    "Delete": "write",  # Cursor
    # Gemini CLI
    "write_file": "write", "replace": "edit", "read_file": "read", "read_many_files": "read",
    "list_directory": "read", "glob": "read", "grep_search": "read", "search_file_content": "read",
    # Copilot CLI (and Codex's apply_patch)
    "create": "write", "edit": "edit", "str_replace_editor": "edit", "apply_patch": "edit",
    "view": "read", "grep": "read", "rg": "read",
    # common MCP file servers (`mcp__<server>__<tool>`)
    "write_text_file": "write", "create_file": "write", "edit_file": "edit", "move_file": "write",
    "read_text_file": "read", "read_multiple_files": "read",
}  # fmt: skip
#: input fields holding one path, and those holding a list of paths
PATH_FIELDS = ("file_path", "notebook_path", "path", "filePath", "absolute_path", "dir_path",
               "source", "destination")  # fmt: skip
PATH_LIST_FIELDS = ("paths", "file_paths")
#: input fields that may hold a patch (Codex puts apply_patch's patch in `command`)
PATCH_FIELDS = ("command", "input", "patch")
_PATCH_HEADERS = ("*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: ")


def kind_of(name: str) -> str:
    """The kind of a tool (an MCP tool by its own part of the name)."""
    kind = TOOL_KINDS.get(name)
    if kind is None and name.startswith("mcp__"):
        kind = TOOL_KINDS.get(name.rsplit("__", 1)[-1])
    return kind or "other"


def patch_paths(text: str) -> list[str]:
    """The files a patch changes: `*** Add|Update|Delete File:` and `*** Move to:` headers
    (Codex's patch format), `+++ b/PATH` and `--- a/PATH` (a unified diff)."""
    found: list[str] = []
    for line in text.splitlines():
        for header in _PATCH_HEADERS:
            if line.startswith(header):
                found.append(line[len(header) :].strip())
        if line.startswith(("+++ ", "--- ")):
            path = line[4:].split("\t", 1)[0].strip()
            if path != "/dev/null":
                found.append(path[2:] if path.startswith(("a/", "b/")) else path)
    return list(dict.fromkeys(p for p in found if p))


def input_paths(tool_input: Any) -> list[str]:
    """The paths a tool input names in its path fields (and in a patch it carries)."""
    if not isinstance(tool_input, dict):
        return []
    found = [tool_input[k] for k in PATH_FIELDS if isinstance(tool_input.get(k), str)]
    for key in PATH_LIST_FIELDS:
        items = tool_input.get(key)
        if isinstance(items, list):
            found += [item for item in items if isinstance(item, str)]
    for key in PATCH_FIELDS:
        value = tool_input.get(key)
        if isinstance(value, str) and ("*** " in value or "+++ " in value):
            found += patch_paths(value)
    return list(dict.fromkeys(p for p in found if p))


def tool_call(name: str, tool_input: Any) -> ToolCall:
    """The `ToolCall` of a tool named `name` called with `tool_input`."""
    kind = kind_of(name)
    names = tuple(input_paths(tool_input))
    if kind in ("write", "edit"):
        return ToolCall(name, kind, paths_written=names)
    if kind == "read":
        return ToolCall(name, kind, paths_read=names)
    return ToolCall(name, kind)
