"""Reading past commands for `rtk-policy replay`: Claude Code transcripts and rtk-policy audit logs.

Both are JSON lines, read as a stream: memory holds only the Bash calls still waiting for their
result.

- A **transcript** (`~/.claude/projects/<project>/<session>.jsonl`): `assistant` lines whose
  `message.content` holds `{"type": "tool_use", "name": "Bash", "id": …, "input": {"command": …}}`,
  and `user` lines whose content holds the matching `{"type": "tool_result", "tool_use_id": …,
  "is_error": …}`. A result marks the call `ran` (errors included: the command ran and failed) or,
  when it is an error saying the call was rejected or denied (by the user, a permission rule or a
  hook), `blocked`. A call with no result in its file is `unknown` (the session ended or was
  interrupted). Unknown lines are skipped.
- An **audit log**: records with `command`, `verdict` and `rewrite.after`, which are the baseline.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

from rtk_policy.util import record

RAN, BLOCKED, UNKNOWN, AUDITED = "ran", "blocked", "unknown", "audited"
#: Texts of a tool_result error that mean the command never ran.
_BLOCKED_MARKERS = (
    "doesn't want to proceed",
    "was rejected",
    "has been denied",
    "denied this tool",
    "blocked by",
    "PreToolUse",
)


@record.frozen
class ReplayItem:
    """One past command and what is known of it."""

    command: str
    location: str  #: `file:line` of the tool call or audit record
    cwd: str = ""
    happened: str = UNKNOWN  #: RAN | BLOCKED | UNKNOWN for transcripts, AUDITED for audit records
    verdict: str | None = None  #: the recorded verdict (audit logs), None when not recorded
    rewrite: str | None = None  #: the recorded rewrite (audit logs)
    permission_mode: str = ""


def default_inputs() -> list[str]:
    """Claude Code's transcript folders that exist (`~/.claude/projects`,
    `~/.config/claude/projects`)."""
    home = Path(os.path.expanduser("~"))
    base = os.environ.get("CLAUDE_CONFIG_DIR")
    candidates = [Path(base) / "projects"] if base else []
    candidates += [home / ".claude" / "projects", home / ".config" / "claude" / "projects"]
    return [str(path) for path in candidates if path.is_dir()]


def input_files(paths: list[str]) -> list[str]:
    """The `.jsonl` files that `paths` name: files as given, folders searched recursively,
    sorted."""
    files: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            files.extend(sorted(str(p) for p in Path(path).rglob("*.jsonl") if p.is_file()))
        elif os.path.isfile(path):
            files.append(path)
        else:
            raise FileNotFoundError(f"{path}: no such file or folder")
    return files


def read_file(path: str, progress: list[int] | None = None) -> Iterator[ReplayItem]:
    """Every command of one transcript or audit log; `progress[0]` counts the bytes read so far."""
    with open(path, "rb") as handle:
        kind = ""
        pending: dict[str, tuple[str, int, str, str]] = {}
        for number, line in enumerate(handle, 1):
            if progress is not None:
                progress[0] += len(line)
            if not kind:
                kind = _kind(line)
                if not kind:
                    continue
            if kind == "audit":
                item = _audit_item(line, path, number)
                if item is not None:
                    yield item
            elif b"tool_use" in line:  # fast path: most transcript lines hold no tool call
                yield from _transcript_line(line, path, number, pending)
        for command, number, cwd, mode in pending.values():
            yield ReplayItem(command, f"{path}:{number}", cwd, UNKNOWN, permission_mode=mode)


def _load(line: bytes) -> dict | None:
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _kind(line: bytes) -> str:
    """"audit" or "transcript" from the first JSON object of a file ("" for a line that says
    nothing)."""
    value = _load(line)
    if value is None:
        return ""
    if "decision_id" in value or ("verdict" in value and "command" in value):
        return "audit"
    return "transcript"


def _audit_item(line: bytes, path: str, number: int) -> ReplayItem | None:
    record = _load(line)
    if record is None or not isinstance(record.get("command"), str) or not record["command"]:
        return None
    rewrite = record.get("rewrite")
    after = rewrite.get("after") if isinstance(rewrite, dict) else None
    verdict = record.get("verdict")
    return ReplayItem(
        command=record["command"],
        location=f"{path}:{number}",
        cwd=str(record.get("cwd") or ""),
        happened=AUDITED,
        verdict=verdict if isinstance(verdict, str) else None,
        rewrite=after if isinstance(after, str) else None,
    )


def _transcript_line(
    line: bytes, path: str, number: int, pending: dict[str, tuple[str, int, str, str]]
) -> Iterator[ReplayItem]:
    entry = _load(line)
    if entry is None:
        return
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return
    for part in content:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "tool_use" and part.get("name") == "Bash":
            tool_input = part.get("input")
            command = tool_input.get("command") if isinstance(tool_input, dict) else None
            if isinstance(command, str) and command:
                cwd, mode = str(entry.get("cwd") or ""), str(entry.get("permissionMode") or "")
                pending[str(part.get("id") or f"line{number}")] = (command, number, cwd, mode)
        elif kind == "tool_result":
            call = pending.pop(str(part.get("tool_use_id")), None)
            if call is not None:
                command, at, cwd, mode = call
                yield ReplayItem(
                    command, f"{path}:{at}", cwd, _happened(part), permission_mode=mode
                )


def _happened(result: dict) -> str:
    """RAN, or BLOCKED when the result is an error saying the call was rejected or denied."""
    if not result.get("is_error"):
        return RAN
    content = result.get("content")
    if isinstance(content, list):
        content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    text = str(content or "")
    return BLOCKED if any(marker in text for marker in _BLOCKED_MARKERS) else RAN
