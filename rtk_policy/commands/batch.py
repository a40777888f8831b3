"""`rtk-policy rewrite --batch FILE`: one JSON object per input line, one JSON answer per line, in order.

Input line: `{"command": "...", "config": {...overrides...}, "claude": {"deny": [], "ask": [], "allow": []}}`
(`config` and `claude` optional; without `claude`, the user's Claude Code rules apply).
Output line: `{"exit": N, "stdout": "...", "verdict": "...", "rewrite": "..."|null, "rules": [...]}`,
or `{"error": "..."}` for a line that cannot be read; the batch goes on.
"""

from __future__ import annotations

import contextlib
import json
import os
from typing import IO

import attrs

from rtk_policy.commands.rewrite import batch_answer, dumps, request_context

_CONFIG_KEYS = {"exclude_commands", "transparent_prefixes", "disabled_rules"}


def run_batch(
    engine: object, source: str, agent: str, stdin: IO[str], stdout: IO[str], stderr: IO[str]
) -> int:
    """Answer every line of `source` ('-' = stdin); returns 0, or 1 when the file cannot be read."""
    try:
        handle = stdin if source == "-" else open(source, encoding="utf-8", errors="surrogateescape")
    except OSError as error:
        stderr.write(f"rtk-policy: cannot read {source}: {error.strerror}\n")
        return 1
    base = request_context(engine, os.getcwd(), agent=agent)
    with contextlib.nullcontext(handle) if handle is stdin else handle:
        for line in handle:
            if not line.strip():
                continue
            stdout.write(dumps(answer_line(engine, base, line)) + "\n")
    stdout.flush()
    return 0


def answer_line(engine: object, base: object, line: str) -> dict[str, object]:
    """The answer object for one input line."""
    try:
        request = json.loads(line)
        context = _line_context(base, request)
        decision = engine.decide(request["command"], context)  # type: ignore[attr-defined]
    except (ValueError, KeyError, TypeError) as error:
        return {"error": _describe(error)}
    except Exception as error:  # noqa: BLE001 - one bad line never stops the batch
        return {"error": f"internal error: {type(error).__name__}: {error}"}
    return batch_answer(decision)


def _line_context(base: object, request: object) -> object:
    if not isinstance(request, dict):
        raise TypeError("a line must be a JSON object")
    command = request.get("command")
    if not isinstance(command, str):
        raise TypeError('"command" must be a string')
    changes: dict[str, tuple[str, ...]] = {}
    config = request.get("config") or {}
    if not isinstance(config, dict):
        raise TypeError('"config" must be an object')
    unknown = sorted(set(config) - _CONFIG_KEYS)
    if unknown:
        raise TypeError(f'unknown config key "{unknown[0]}"')
    for key, value in config.items():
        changes[key] = _strings(value, f"config.{key}")
    claude = request.get("claude")
    if claude is not None:
        if not isinstance(claude, dict):
            raise TypeError('"claude" must be an object')
        for key in ("deny", "ask", "allow"):
            changes[f"claude_{key}"] = _strings(claude.get(key, []), f"claude.{key}")
    return attrs.evolve(base, **changes)  # type: ignore[misc]


def _strings(value: object, name: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TypeError(f"{name} must be a list of strings")
    return tuple(value)


def _describe(error: Exception) -> str:
    if isinstance(error, json.JSONDecodeError):
        return f"invalid JSON: {error.msg} at column {error.colno}"
    if isinstance(error, KeyError):
        return 'missing "command"'
    return str(error)

