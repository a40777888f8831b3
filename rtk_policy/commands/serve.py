"""`rtk-policy serve`: run the resident engine (Unix socket, optional loopback http hook)."""

from __future__ import annotations

from typing import IO


def run(args: object, stdin: IO[str], stdout: IO[str], stderr: IO[str]) -> int:
    """Entry point of `rtk-policy serve`; returns when the server has been idle long enough."""
    from rtk_policy.serve.server import serve

    try:
        code = serve(idle=args.idle, http_port=args.http)  # type: ignore[attr-defined]
    except OSError as error:  # a socket folder that is not ours, a port in use
        stderr.write(f"rtk-policy serve: {error}\n")
        return 2
    if code == 1:
        stderr.write("rtk-policy serve: another server is already running\n")
    return code
