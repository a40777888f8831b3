"""`rtk-policy hook [AGENT]`: answer one PreToolUse call (JSON on stdin, at most one JSON line on
stdout) through the hook service (`rtk_policy.hook.service`). Always exits 0."""

from __future__ import annotations

from rtk_policy.hook.service import HookOptions, answer_stream

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Any

    from rtk_policy.hook.interfaces import HookEngine
    from rtk_policy.hook.service import Decoded


def run(
    options: HookOptions,
    stdin: IO[Any],
    stdout: IO[str],
    stderr: IO[str],
    engine: HookEngine | None = None,
    decoded: Decoded | None = None,
) -> int:
    """Answer one hook call (see `answer_stream`); returns the exit code, always 0."""
    answer_stream(options, stdin, stdout, stderr, engine, decoded)
    return 0
