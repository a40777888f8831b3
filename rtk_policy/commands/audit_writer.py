"""`rtk-policy audit-writer [--config FILE] [--socket PATH] [--user NAME]`: the audit writer service
(`rtk_policy.audit.writer`), run by systemd or launchd as its own user (`init --system`)."""

from __future__ import annotations

from typing import IO


def run(
    *,
    config: str | None = None,
    socket: str | None = None,
    user: str | None = None,
    stdin: IO[str] | None = None,
    stdout: IO[str],
    stderr: IO[str],
) -> int:
    """Serve until stopped (`config`, `socket`, `user`: the command line's, None for the managed
    config's); exit 2 when the config does not load or the socket cannot be bound."""
    from rtk_policy.audit import writer

    try:
        writer.serve(writer.writer_config(config), socket or "", user or "")
    except (OSError, ValueError, KeyError) as error:
        stderr.write(f"rtk-policy audit-writer: {error}\n")
        return 2
    except KeyboardInterrupt:
        return 0
    return 0
