"""The environment one decision reads: the process's own, or, in the resident server, the variables
the call's client forwarded (`serve.thin_client.FORWARDED_ENV`), for the thread answering it.

The server answers calls of several clients at once, one thread each, so it cannot set
`os.environ` for a call: `use(view)` makes `view` (name -> value, None for unset) what this thread
reads for the names it holds until `use(None)`; every other name, and every thread without a view
(the in-process hook, the CLI), reads `os.environ`. Every read on the decision path of a variable a
client may forward goes through `get`, `expand_user` or `values` here, never through `os.environ`,
`os.getenv` or `os.path.expanduser` (which reads `$HOME`): a test holds the decision path to it.

Standard library only, no `threading` (the hook's cold path): the views are kept by thread id.
"""

from __future__ import annotations

import os
from _thread import get_ident

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

#: thread id -> the forwarded variables that thread's decision reads (None: unset)
_views: dict[int, Mapping[str, str | None]] = {}


def use(view: Mapping[str, str | None] | None) -> None:
    """From now on this thread reads the names of `view` from it (None: `os.environ` again)."""
    if view is None:
        _views.pop(get_ident(), None)
    else:
        _views[get_ident()] = view


def forwarded_view(env: Mapping[str, str], names: tuple[str, ...]) -> dict[str, str | None]:
    """The view of a client's forwarded `env` over `names`: an empty or missing value is unset (as
    a variable the client does not have)."""
    return {name: env.get(name) or None for name in names}


def get(name: str, default: str | None = None) -> str | None:
    """`os.environ.get(name, default)` for the decision under way (see the module docstring)."""
    if _views:
        view = _views.get(get_ident())
        if view is not None and name in view:
            value = view[name]
            return default if value is None else value
    return os.environ.get(name, default)


def values(names: tuple[str, ...]) -> tuple[str, ...]:
    """`get(name, "")` of each of `names`."""
    return tuple(get(name) or "" for name in names)


def expand_user(path: str) -> str:
    """`os.path.expanduser(path)` with this decision's `$HOME` (`~user` reads the password
    database, as there)."""
    if not path.startswith("~"):
        return path
    end = path.find("/", 1)
    end = len(path) if end < 0 else end
    if end != 1 or not _views:
        return os.path.expanduser(path)
    folder = get("HOME")
    if folder is None:
        import pwd

        try:
            folder = pwd.getpwuid(os.getuid()).pw_dir
        except KeyError:  # no entry for this user: left as it is, as there
            return path
    return (folder.rstrip("/") + path[end:]) or "/"


def subprocess_env() -> dict[str, str] | None:
    """The environment a child process of this decision gets: None (inherit the process's) when
    this thread has no view, else `os.environ` with the view's names replaced."""
    view = _views.get(get_ident()) if _views else None
    if view is None:
        return None
    env = dict(os.environ)
    for name, value in view.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def current() -> Mapping[str, str | None] | None:
    """This thread's view (None: it reads `os.environ`)."""
    return _views.get(get_ident()) if _views else None
