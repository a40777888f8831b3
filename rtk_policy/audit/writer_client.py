"""The hook's side of the audit writer service (`audit/writer.py`): hand the records over, or say
why they could not be. Standard library only (`_socket`, `os`): it is on the hook's cold path.

The managed config names the writer's socket (`[audit] writer`). A writer is trusted only when
the kernel says who it is: the socket's folder must be a real folder (not a symlink) that neither
its group nor others can write, in a parent folder owned by root or by the folder's owner and not
writable by others; the process at the other end (SO_PEERCRED) must run as the folder's owner; and
that owner must not be the hook's own user (a writer of the agent's own uid keeps nothing from
the agent). Anything else is a problem: the caller keeps the record itself (`audit/log.py`).

The exchange, over one Unix stream connection: the records, one JSON object a line, then the end
of the sending side; the writer answers `ok COUNT HEAD` (the records it wrote and the chain's
head) or `error WHY`, one line each.
"""

import _socket
import os
import stat

#: seconds the connect, the send and the answer may each take
TIMEOUT = 1.0
#: the longest answer read
_ANSWER_BYTES = 4096
#: tests only: accept a writer that runs as the hook's own user
SAME_USER_OK = False


def hand_over(socket_path, lines):
    """Send `lines` (JSON records, no newlines) to the writer at `socket_path`; "" when it wrote
    them all, else why not (nothing raised)."""
    try:
        folder_owner = _folder_owner(socket_path)
        sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    except OSError as error:
        return str(error.strerror and f"{socket_path}: {error.strerror}" or error)
    try:
        sock.settimeout(TIMEOUT)
        sock.connect(socket_path)
        problem = _peer_problem(sock, folder_owner)
        if problem:
            return problem
        sock.sendall(("\n".join(lines) + "\n").encode("utf-8"))
        sock.shutdown(_socket.SHUT_WR)
        return _answer_problem(_read_answer(sock), len(lines))
    except OSError as error:
        return str(error.strerror or error)
    finally:
        sock.close()


def _folder_owner(socket_path):
    """The uid owning the socket's folder; OSError when the folder or its parent could be changed
    by someone else."""
    folder = os.path.dirname(socket_path) or "."
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode):
        raise OSError(f"{folder} is not a folder")
    if info.st_mode & 0o022:
        raise OSError(f"{folder} is writable by its group or others")
    parent = os.lstat(os.path.dirname(folder) or "/")
    if parent.st_uid not in (0, info.st_uid) or parent.st_mode & 0o022:
        raise OSError(f"the folder above {folder} is not root's or the writer's own")
    return info.st_uid


def _peer_problem(sock, folder_owner):
    """Why the process at the other end is not the writer the folder belongs to (None if it is)."""
    from rtk_policy.serve.runtime import peer_uid

    uid = peer_uid(sock)
    if uid is None:
        return "the writer's uid cannot be checked on this platform"
    if uid != folder_owner:
        return f"the writer runs as uid {uid}, not as its folder's owner (uid {folder_owner})"
    if uid == os.getuid() and not SAME_USER_OK:
        return f"the writer runs as this user (uid {uid}): it cannot keep the log from it"
    return None


def _read_answer(sock):
    data = b""
    while not data.endswith(b"\n") and len(data) < _ANSWER_BYTES:
        chunk = sock.recv(_ANSWER_BYTES)
        if not chunk:
            break
        data += chunk
    return data.decode("utf-8", "replace").strip()


def _answer_problem(answer, sent):
    """Empty when `answer` says the writer wrote all `sent` records, else what it said."""
    words = answer.split()
    if len(words) == 3 and words[0] == "ok" and words[1] == str(sent):
        return ""
    if not answer:
        return "the writer closed the connection without an answer"
    return f"the writer answered {answer[:200]!r}"
