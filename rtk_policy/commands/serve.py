"""`rtk-policy serve`: run the resident engine (Unix socket, optional loopback http hook)."""

from __future__ import annotations

from typing import IO


def run(
    *,
    idle: float = 900.0,
    http: int | None = None,
    stdin: IO[str] | None = None,
    stdout: IO[str],
    stderr: IO[str],
) -> int:
    """Entry point of `rtk-policy serve`: exit after `idle` idle seconds; `http`, a loopback port
    for http hooks too."""
    from rtk_policy.serve.server import serve

    try:
        code = serve(idle=idle, http_port=http)
    except OSError as error:  # a socket folder that is not ours, a port in use
        stderr.write(f"rtk-policy serve: {error}\n")
        return 2
    if code == 1:
        stderr.write("rtk-policy serve: another server is already running\n")
    return code
