"""The thin hook client: hand the payload to the resident engine, print its answer.

Installed as the hook command `<python> -S -I <…>/serve/client.py claude`, which runs `main` here
(`client.py` is only the entry point: a script is compiled from source on every run, a module
loads its cached bytecode). It imports almost nothing on the
fast path (no site; of rtk_policy only `serve/runtime.py`, standard library alone): the payload's
bytes go to the server over a Unix socket unparsed, and the server's answer comes back as
`stdout NUL stderr`. When no server answers (none running, or it died mid request), it starts one in
the background and decides this call in-process, so protection never lapses. It asks only a server
of its own user, in a runtime folder of its own (`runtime.py`): a folder or a server that is not is
refused, the call is decided in-process and stderr says why.
"""

import _socket
import gc
import os
import sys

#: the folder holding this install's `rtk_policy` package (this file is rtk_policy/serve/client.py)
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if __name__ == "__main__" and _ROOT not in sys.path:  # run as a script (a broken install's
    sys.path.append(_ROOT)  # fallback from `client.py`): this install's root on the path

try:  # once this install's root is importable
    from rtk_policy.serve import runtime
    from rtk_policy.serve.runtime import socket_path  # noqa: F401 - the name tests use
except ImportError:  # a broken install: `main` answers as the delegate script does
    runtime = None  # type: ignore[assignment]  # the module or None: `main` checks which

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


def header(agent, env=None):
    """The request's first line: the agent, then the forwarded environment variables (of `env`,
    default this process's)."""
    env = os.environ if env is None else env
    fields = [agent] + [name + "=" + env[name] for name in FORWARDED_ENV if name in env]
    return "\0".join(fields).replace("\n", " ").encode("utf-8", "surrogateescape") + b"\n"


def ask_server(agent, payload, path=None, env=None):
    """The server's (stdout, stderr) bytes for `payload`, or None when no server answered in full;
    the variables of `env` (default this process's) are forwarded.

    Raise `runtime.Untrusted` when the socket's folder is not this user's private folder or the
    server does not run as this user: nothing is sent to it."""
    path = path or runtime.socket_path()
    try:
        runtime.check_private(os.path.dirname(path))
    except FileNotFoundError:
        return None  # no folder yet: no server has run
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(_TIMEOUT)
        try:
            sock.connect(path)
        except OSError:
            return None
        problem = runtime.peer_problem(sock)
        if problem is not None:
            raise runtime.Untrusted(problem)
        sock.sendall(header(agent, env) + payload)
        sock.shutdown(_socket.SHUT_WR)
        chunks = []
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    except runtime.Untrusted:
        raise
    except OSError:
        return None
    finally:
        sock.close()
    answer = b"".join(chunks)
    if not answer.endswith(b"\0\n"):  # the server died before it finished: decide here instead
        return None
    out, _, err = answer[:-2].partition(b"\0")
    return out, err


#: the variables the started server keeps of the caller's environment (every other one, an
#: agent's PYTHONPATH or LD_PRELOAD among them, is left out); requests bring `FORWARDED_ENV`
SERVER_ENV = (
    "PATH", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "XDG_RUNTIME_DIR",
    "RTK_POLICY_SERVE_MAX_RSS_MB", *FORWARDED_ENV,
)  # fmt: skip
#: the server's entry point: this install's package first on the path, then `rtk-policy serve`
_SERVE = (
    "import sys; sys.path.insert(0, sys.argv.pop(1)); "
    "from rtk_policy.main import main; sys.exit(main(sys.argv[1:]))"
)


def server_command(idle):
    """The argv of this install's resident engine: its own interpreter, isolated (`-I`: no
    PYTHONPATH, no user site, no current folder on the path, no PYTHON* variable), importing
    this package first. (`-S` would drop the interpreter's site-packages, which hold its CEL
    library.)"""
    return [sys.executable, "-I", "-c", _SERVE, _ROOT, "serve", "--idle", idle]


def start_server():
    """Start a resident engine in the background, detached from this process: `server_command`,
    a minimal environment (`SERVER_ENV`), stdin, stdout and stderr on /dev/null, its own session."""
    env = {name: os.environ[name] for name in SERVER_ENV if name in os.environ}
    idle = os.environ.get("RTK_POLICY_SERVE_IDLE") or "900"
    try:
        devnull = os.open(os.devnull, os.O_RDWR)
        os.posix_spawn(
            sys.executable,
            server_command(idle),
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


def main(argv):
    """Entry point: `client.py [AGENT]`; always exits 0."""
    agent = argv[1] if len(argv) > 1 else ""
    payload = read_stdin()
    refused = b""
    try:
        answer = ask_server(agent, payload) if runtime is not None else None
    except runtime.Untrusted as error:  # not our own: no server is started there either
        answer = None
        why = f"rtk-policy hook: not using the resident engine: {error}; deciding in-process\n"
        refused = why.encode("utf-8", "replace")
    if answer is None:
        if not refused and runtime is not None:
            start_server()
        gc.disable()  # one short decision: the collector's passes over the policies cost ~4 ms
        answer = decide_in_process(agent, payload)
    out, err = answer
    err = refused + err
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
