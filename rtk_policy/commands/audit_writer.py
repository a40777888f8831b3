"""`rtk-policy audit-writer [--config FILE] [--socket PATH] [--user NAME]`: the audit writer service
(`rtk_policy.audit.writer`), run by systemd or launchd as its own user (`init --system`)."""

from __future__ import annotations

from typing import IO


def run(args: object, stdin: IO[str], stdout: IO[str], stderr: IO[str]) -> int:
    """Serve until stopped; exit 2 when the config does not load or the socket cannot be bound."""
    from rtk_policy.audit import writer

    try:
        config = writer.writer_config(getattr(args, "config", None))
        writer.serve(config, getattr(args, "socket", None) or "", getattr(args, "user", None) or "")
    except (OSError, ValueError, KeyError) as error:
        stderr.write(f"rtk-policy audit-writer: {error}\n")
        return 2
    except KeyboardInterrupt:
        return 0
    return 0
