"""`rtk-policy hook [AGENT]`: answer one PreToolUse call (JSON on stdin, at most one JSON line on
stdout) through the hook service (`rtk_policy.hook.service`). Always exits 0."""

from __future__ import annotations

from rtk_policy.hook.service import HookOptions, answer_stream

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~4 ms on a cold hook)
if TYPE_CHECKING:
    from typing import IO, Any


def run(
    options: HookOptions,
    stdin: IO[Any],
    stdout: IO[str],
    stderr: IO[str],
    engine: Any = None,
    decoded: Any = None,
) -> int:
    """Answer one hook call (see `answer_stream`); returns the exit code, always 0."""
    answer_stream(options, stdin, stdout, stderr, engine, decoded)
    return 0
