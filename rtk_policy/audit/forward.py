"""Forwarding each audit record to syslog as it is written (RFC 5424), so that a copy leaves the
agent's reach: rsyslog or journald on the machine ships it to the team's collector.

Configured in the trusted layers only (`[audit.syslog] target`, `facility`):

- `unix:/dev/log` — the local socket (a Unix datagram socket), one message per datagram;
- `udp://127.0.0.1:514` — one message per datagram (`[::1]` for IPv6);
- `tcp://127.0.0.1:601` — octet-counting framing (RFC 6587 §3.4.1: `LEN SP MSG`), one connection
  per append.

Addresses are IP literals: no name is looked up on the hook's path. A message is
`<PRI>1 TIME HOST rtk-policy PID decision [rtk-policy@32473 seq="N" verdict="…" unsent="K"] JSON`:
the record's own time, its number in the chain (`seq`, what the anchor counts), how many records
could not be forwarded before it (`unsent`), and the log line itself as MSG (ASCII JSON, hash and
prev included, so the collector can check the chain). The severity follows the verdict: deny →
warning, ask → notice, others → info, a record with errors → err. 32473 is the enterprise number
RFC 5612 reserves for examples.

Sending never blocks the hook for long: datagrams go out on non-blocking sockets, a TCP connection
and its send get `TIMEOUT` seconds. A failure is returned (the anchor counts it), written to stderr,
and never raised.
"""

from __future__ import annotations

import _socket
import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~4 ms on a cold hook)
if TYPE_CHECKING:
    from typing import Any

APP_NAME = "rtk-policy"
SD_ID = "rtk-policy@32473"
MSGID = "decision"
TIMEOUT = 0.05  #: seconds a TCP connect, and then its send, may take
DEFAULT_PORTS = {"udp": 514, "tcp": 601}
FACILITIES = {
    "kern": 0, "user": 1, "mail": 2, "daemon": 3, "auth": 4, "syslog": 5, "lpr": 6, "news": 7,
    "uucp": 8, "cron": 9, "authpriv": 10, "ftp": 11,
    **{f"local{n}": 16 + n for n in range(8)},
}  # fmt: skip
_SEVERITIES = {"deny": 4, "ask": 5}
_INFO, _ERROR = 6, 3


def parse_target(target: str) -> tuple[str, Any]:
    """("unix", path), ("udp", (host, port)) or ("tcp", (host, port)) for a target; ValueError
    (saying what is accepted) for anything else."""
    if target.startswith("unix:"):
        path = target[len("unix:") :]
        if not path.startswith("/"):
            raise ValueError(f"syslog target {target!r}: unix: needs an absolute socket path")
        return "unix", path
    scheme, sep, rest = target.partition("://")
    if not sep or scheme not in DEFAULT_PORTS:
        raise ValueError(
            f"syslog target {target!r}: use unix:/dev/log, udp://IP:PORT or tcp://IP:PORT"
        )
    host, port = _host_port(rest, DEFAULT_PORTS[scheme], target)
    return scheme, (host, port)


def _host_port(text: str, default: int, target: str) -> tuple[str, int]:
    """(IP literal, port) of `HOST[:PORT]` or `[V6][:PORT]`."""
    if text.startswith("["):
        host, _, tail = text[1:].partition("]")
        port_text = tail[1:] if tail.startswith(":") else tail
    else:
        host, _, port_text = text.partition(":")
    try:
        port = int(port_text) if port_text else default
        _socket.inet_pton(_family(host), host)
    except (ValueError, OSError):
        raise ValueError(f"syslog target {target!r}: the host must be an IP address") from None
    if not 0 < port < 65536:
        raise ValueError(f"syslog target {target!r}: bad port {port}")
    return host, port


def _family(host: str) -> int:
    return _socket.AF_INET6 if ":" in host else _socket.AF_INET


def facility_code(name: str) -> int:
    """The number of a facility name (`user` when empty); ValueError for an unknown name."""
    code = FACILITIES.get(name or "user")
    if code is None:
        raise ValueError(f"syslog facility {name!r}: one of {', '.join(FACILITIES)}")
    return code


def sink(target: str, facility: str, events: list[dict[str, Any]]) -> Any:
    """The store's sink for `events` (about to be appended): `forward(text, anchor)` sends their
    lines, numbered from the anchor's count, and returns "" or why they were not sent."""
    kind, address = parse_target(target)
    code = facility_code(facility)

    def forward(text: str, anchor: dict[str, Any]) -> str:
        from rtk_policy.audit.anchor import unsent

        lines = text.split("\n")
        first = anchor["records"] - len(events) + 1
        waiting = unsent(anchor)
        messages = [
            message(event, line, first + n, waiting, code)
            for n, (event, line) in enumerate(zip(events, lines))  # noqa: B905 - a line each
        ]
        error = send(kind, address, messages)
        if error:
            error = f"{target}: {error}"
            try:
                sys.stderr.write(f"rtk-policy: audit record not forwarded to syslog: {error}\n")
            except Exception:  # noqa: BLE001 - a closed stderr must not break the hook
                pass
        return error

    return forward


def message(event: dict[str, Any], line: str, seq: int, unsent: int, facility: int) -> bytes:
    """The RFC 5424 message of one record (its log `line` as MSG), without transport framing."""
    verdict = str(event.get("verdict") or "none")
    severity = _ERROR if event.get("errors") else _SEVERITIES.get(verdict, _INFO)
    when = event.get("time")
    timestamp = when if isinstance(when, str) and when.endswith("Z") and " " not in when else "-"
    data = f'[{SD_ID} seq="{seq}" verdict="{_sd_value(verdict)}" unsent="{unsent}"]'
    pri = facility * 8 + severity
    head = f"<{pri}>1 {timestamp} {_hostname()} {APP_NAME} {os.getpid()} {MSGID}"
    return f"{head} {data} {line}".encode()


def _sd_value(text: str) -> str:
    """`text` as an SD-PARAM value: `"`, `\\` and `]` escaped (RFC 5424 §6.3.3)."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("]", "\\]")


def _hostname() -> str:
    """This machine's name as a HOSTNAME field (printable ASCII, no space), "-" when unknown."""
    global _host
    if _host is None:
        name = _socket.gethostname()
        _host = name if name and name.isascii() and name.isprintable() and " " not in name else "-"
    return _host[:255]


_host: str | None = None


def send(kind: str, address: Any, messages: list[bytes]) -> str:
    """Send `messages` to the target (`parse_target`'s answer); "" or why they were not sent."""
    try:
        if kind == "tcp":
            _send_stream(address, messages)
        else:
            _send_datagrams(kind, address, messages)
    except OSError as error:
        return error.strerror or str(error) or type(error).__name__
    return ""


def _send_datagrams(kind: str, address: Any, messages: list[bytes]) -> None:
    family = _socket.AF_UNIX if kind == "unix" else _family(address[0])
    sock = _socket.socket(family, _socket.SOCK_DGRAM)
    try:
        sock.setblocking(False)
        for data in messages:
            sock.sendto(data, address)
    finally:
        sock.close()


def _send_stream(address: tuple[str, int], messages: list[bytes]) -> None:
    sock = _socket.socket(_family(address[0]), _socket.SOCK_STREAM)
    try:
        sock.settimeout(TIMEOUT)
        sock.connect(address)
        sock.sendall(b"".join(b"%d %s" % (len(data), data) for data in messages))
    finally:
        sock.close()
