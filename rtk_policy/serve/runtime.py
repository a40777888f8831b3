"""The resident engine's runtime folder and the checks that make client and server trust only each
other. Standard library only (the thin client imports it with `python -S -I`, before anything).

The folder is `$XDG_RUNTIME_DIR/rtk-policy`, else `rtk-policy-run-<uid>` in `$TMPDIR` (macOS sets
it to a folder of the user's own) or `/tmp` (sticky: nobody else may rename or remove what this
user made there). It is not the `rtk-policy-<uid>` of older versions, whose folder was made 0755.
It holds the socket (`engine.sock`, 0600) and the server's lock (`engine.lock`). It must be a
folder, not a symlink, owned by this user, with no permission for group or others; anything else
is refused, never repaired: a folder someone else made first, or opened up, may hold their
socket. The socket's peer is checked on both ends (`peer_problem`: SO_PEERCRED on Linux,
LOCAL_PEERCRED on macOS and the BSDs): an engine or a client of another user is never answered or
asked. Where the peer cannot be checked, the client does not use the engine at all.
"""

import _socket
import errno
import os
import sys

#: the socket file and the server's lock file in the runtime folder
SOCKET = "engine.sock"
LOCK = "engine.lock"


class Untrusted(OSError):
    """The runtime folder or the socket's peer is not this user's own: not used (the reason is
    the message)."""


def runtime_dir():
    """The runtime folder's path (nothing is checked or created): what the guard's own rules
    protect, and where the socket and lock live."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    if base:
        return os.path.join(base, "rtk-policy")
    return os.path.join(os.environ.get("TMPDIR") or "/tmp", f"rtk-policy-run-{_uid()}")


def _uid():
    """This process's uid (0 where the platform has none: Windows, where no engine runs)."""
    return os.getuid() if hasattr(os, "getuid") else 0


def socket_path():
    """The resident engine's socket: `runtime_dir()/engine.sock`."""
    return os.path.join(runtime_dir(), SOCKET)


def lock_path():
    """The resident engine's lock file (it holds the server's pid): `runtime_dir()/engine.lock`."""
    return os.path.join(runtime_dir(), LOCK)


def check_private(folder):
    """Raise `Untrusted` unless `folder` is a folder (not a symlink) owned by this user with no
    permission for group or others; `FileNotFoundError` when it does not exist."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as error:
        if error.errno == errno.ENOENT:
            raise
        if error.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            raise Untrusted(f"{folder} is a symlink or not a folder") from None
        raise Untrusted(f"{folder} cannot be opened ({error.strerror})") from None
    try:
        info = os.fstat(fd)
    finally:
        os.close(fd)
    uid = os.getuid()
    if info.st_uid != uid:
        raise Untrusted(f"{folder} belongs to uid {info.st_uid}, not to this user (uid {uid})")
    if info.st_mode & 0o077:
        mode = oct(info.st_mode & 0o777)
        raise Untrusted(f"{folder} is open to other users (mode {mode}, not 0o700)")


def make_private(folder):
    """Create `folder` owner-only (0700), its parents as needed, or check the existing one; raise
    `Untrusted` when it is not this user's private folder. Returns `folder`."""
    parent = os.path.dirname(folder)
    if parent:
        os.makedirs(parent, exist_ok=True)
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass  # someone's: checked below like any other
    check_private(folder)
    return folder


#: getsockopt level and option of the peer's credentials on macOS and the BSDs (sys/un.h), for
#: Pythons whose socket module does not name them
_SOL_LOCAL = 0
_LOCAL_PEERCRED = 1
#: struct xucred: cr_version (u_int), cr_uid (uid_t), cr_ngroups (short), cr_groups[16] (gid_t)
_XUCRED_SIZE = 76


def peer_uid(sock):
    """The uid of the process at the other end of the Unix socket `sock` (a `socket` or
    `_socket.socket`); None when this platform gives no way to know it."""
    found = peer_credentials(sock)
    return None if found is None else found[1]


def peer_credentials(sock):
    """(pid, uid, gid) of the process at the other end of the Unix socket `sock`, as the kernel
    says (pid None where it does not say, gid None on macOS); None when this platform gives no
    way to know them."""
    module = _socket
    if hasattr(module, "SO_PEERCRED"):  # Linux: struct ucred {pid_t pid; uid_t uid; gid_t gid}
        data = sock.getsockopt(module.SOL_SOCKET, module.SO_PEERCRED, 12)
        pid, uid, gid = (int.from_bytes(data[at : at + 4], sys.byteorder) for at in (0, 4, 8))
        return pid, uid, gid
    if sys.platform == "darwin" or "bsd" in sys.platform:
        level = getattr(module, "SOL_LOCAL", _SOL_LOCAL)
        option = getattr(module, "LOCAL_PEERCRED", _LOCAL_PEERCRED)
        data = sock.getsockopt(level, option, _XUCRED_SIZE)
        if int.from_bytes(data[0:4], sys.byteorder) != 0:  # XUCRED_VERSION
            return None
        return None, int.from_bytes(data[4:8], sys.byteorder), None
    return None


def peer_problem(sock):
    """Why the peer of `sock` must not be trusted (another user, or no way to tell); None when it
    runs as this user."""
    try:
        uid = peer_uid(sock)
    except OSError as error:
        return f"the socket's peer cannot be checked ({error.strerror or error})"
    if uid is None:
        return "the socket's peer cannot be checked on this platform"
    if uid != os.getuid():
        return f"the socket's peer runs as uid {uid}, not as this user (uid {os.getuid()})"
    return None
