"""The thin hook client: hand the payload to the resident engine, print its answer.

Installed as the hook command `<python> -S -I <this file> claude`. It imports almost nothing (no site, no
rtk_policy) on the fast path: the payload's bytes go to the server over a Unix socket unparsed, and the
server's answer comes back as `stdout NUL stderr`. When no server answers (none running, or it died mid
request), it starts one in the background and decides this call in-process, so protection never lapses.
"""

import _socket
import gc
import os
import sys

_LIMIT = 1024 * 1024 + 1  # one byte over the hook's limit, so the server can say "too large"
_TIMEOUT = 10.0
#: Environment variables that change a decision; the client sends them, the server applies them.
FORWARDED_ENV = (
    "PATH",  # where the agent's commands find `rtk` (rewrite = "auto")
    "HOME",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_STATE_HOME",
    "CLAUDE_CONFIG_DIR",
    "CLAUDE_PROJECT_DIR",
    "GEMINI_CLI_HOME",
    "RTK_POLICY_BACKEND",
    "RTK_POLICY_FAIL",
)


def socket_path():
    """The per-user socket of the resident engine (owner-only folder)."""
    base = os.environ.get("XDG_RUNTIME_DIR") or f"/tmp/rtk-policy-{os.getuid()}"
    return os.path.join(base, "rtk-policy", "engine.sock")


def read_stdin(limit=_LIMIT, timeout=None):
    """Up to `limit` bytes of stdin, waiting at most `timeout` seconds (the hook's stdin limit)."""
    import select
    import time

    if timeout is None:
        try:
            value = float(os.environ.get("RTK_POLICY_STDIN_TIMEOUT") or 5.0)
        except ValueError:
            value = 5.0
        # at least 0.5 s, as `hook_input.stdin_timeout`: a shorter wait would cut the payload off
        timeout = max(value, 0.5) if value > 0 else 5.0
    deadline = time.monotonic() + timeout
    chunks, size = [], 0
    while size < limit:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([0], [], [], remaining)[0]:
            break  # never closed: the partial payload is judged (and refused) as it is
        chunk = os.read(0, min(65536, limit - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def header(agent):
    """The request's first line: the agent, then the forwarded environment variables."""
    env = os.environ
    fields = [agent] + [name + "=" + env[name] for name in FORWARDED_ENV if name in env]
    return "\0".join(fields).replace("\n", " ").encode("utf-8", "surrogateescape") + b"\n"


def ask_server(agent, payload, path=None):
    """The server's (stdout, stderr) bytes for `payload`, or None when no server answered in full."""
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(_TIMEOUT)
        sock.connect(path or socket_path())
        sock.sendall(header(agent) + payload)
        sock.shutdown(_socket.SHUT_WR)
        chunks = []
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    except OSError:
        return None
    finally:
        sock.close()
    answer = b"".join(chunks)
    if not answer.endswith(b"\0\n"):  # the server died before it finished: decide here instead
        return None
    out, _, err = answer[:-2].partition(b"\0")
    return out, err


def start_server():
    """Start a resident engine in the background, detached from this process."""
    package_root = _package_root()
    env = dict(os.environ)
    env["PYTHONPATH"] = package_root + os.pathsep + env.get("PYTHONPATH", "")
    idle = env.get("RTK_POLICY_SERVE_IDLE") or "900"
    try:
        devnull = os.open(os.devnull, os.O_RDWR)
        os.posix_spawn(
            sys.executable,
            [sys.executable, "-m", "rtk_policy", "serve", "--idle", idle],
            env,
            file_actions=[
                (os.POSIX_SPAWN_DUP2, devnull, 0),
                (os.POSIX_SPAWN_DUP2, devnull, 1),
                (os.POSIX_SPAWN_DUP2, devnull, 2),
            ],
            setsid=True,
        )
        os.close(devnull)
    except OSError:
        pass


def decide_in_process(agent, payload):
    """Decide this call without the server (the hook command's own code path).

    When even that cannot run (a broken install), one stderr line and no opinion: the host's own
    permission rules decide.
    """
    try:
        if sys.flags.no_site:  # started with -S: make the installed packages importable now
            import site

            site.main()
        package_root = _package_root()
        if package_root not in sys.path:
            sys.path.append(package_root)
        from rtk_policy.hook.service import answer_payload

        answer = answer_payload(payload, agent or None)
        return answer.stdout.encode(), answer.stderr.encode("utf-8", "replace")
    except BaseException as error:  # noqa: BLE001 - the hook answers whatever happens
        why = f"{type(error).__name__}: {error}"
        out = undecided(agent, why)
        message = f"rtk-policy hook: cannot decide ({why}); {_FAIL_ACTIONS[_fail_mode()]}\n"
        return out, message.encode("utf-8", "replace")


_FAIL_ACTIONS = {
    "open": "no opinion",
    "closed": "asking for approval",
    "deny": "blocking the command",
}


def _fail_mode():
    mode = os.environ.get("RTK_POLICY_FAIL", "open")
    return mode if mode in _FAIL_ACTIONS else "open"


def undecided(agent, why):
    """The answer when nothing can decide (a broken install), as the delegate script gives it:
    `RTK_POLICY_FAIL` open (default) is no opinion — empty, or `{}` for Cursor —, closed asks, deny
    blocks, in the agent's own protocol."""
    mode = _fail_mode()
    if mode == "open":
        return b"{}\n" if agent == "cursor" else b""
    import json

    verdict = "ask" if mode == "closed" else "deny"
    reason = f"rtk-policy cannot decide ({why}); {_FAIL_ACTIONS[mode]}"
    if agent == "codex" and verdict == "ask":  # a Codex hook cannot ask (rtk_policy.agents.codex)
        verdict, reason = "deny", f"{reason}: the user must approve or run this command"
    if agent == "copilot":
        answer = {"permissionDecisionReason": reason, "permissionDecision": verdict}
    elif agent == "gemini":
        answer = {"decision": verdict, "reason": reason}
        if verdict == "ask":  # what Gemini shows in its confirmation
            answer["systemMessage"] = reason
    elif agent == "cursor":
        answer = {"continue": True, "permission": verdict, "user_message": reason}
        if verdict == "deny":
            answer["agent_message"] = reason
    else:
        answer = {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecisionReason": reason,
                "permissionDecision": verdict,
            }
        }
    return (json.dumps(answer) + "\n").encode()


def _package_root() -> str:
    """The folder holding the `rtk_policy` package of this install (this file is rtk_policy/serve/)."""
    here = os.path.abspath(__file__)
    return os.path.dirname(os.path.dirname(os.path.dirname(here)))


def main(argv):
    """Entry point: `client.py [AGENT]`; always exits 0."""
    agent = argv[1] if len(argv) > 1 else ""
    payload = read_stdin()
    answer = ask_server(agent, payload)
    if answer is None:
        start_server()
        gc.disable()  # one short decision: the collector's passes over the policies cost ~4 ms
        answer = decide_in_process(agent, payload)
    out, err = answer
    _write_all(2, err)
    _write_all(1, out)
    return 0


def _write_all(fd, data):
    try:
        while data:
            data = data[os.write(fd, data) :]
    except OSError:
        pass


if __name__ == "__main__":
    main(sys.argv)
    # the answer and the audit record are written (os.write): skip the interpreter's teardown, which
    # after an in-process decision frees a whole engine (~8 ms)
    os._exit(0)
