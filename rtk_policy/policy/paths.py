"""Path spellings: one path as every form the file system may take it in (policy stage, hot path).

A path reaches a policy written in many ways: `~/.claude//settings.json`, `$HOME/.claude/./x/..`,
relative to a folder a `cd` went to, through a symlink, in another case on a case-insensitive file
system, or as a glob. `spellings` gives the absolute forms that name the same file: the lexical one
(`~` and `$HOME` expanded, `.`, `..` and `//` collapsed), the one with symlinks resolved where they
exist, and both case-folded when the file system there ignores case. A glob, or a part the hook
cannot know (an unset variable, a command substitution), stays a pattern with `*` for that part:
`matches_under` and `overlaps` treat a pattern as every path it can match.

A path ending in `/` names a tree: the folder and everything in it (what `rm -r`, `mv`, `tar -x -C`
change). `overlaps(path, folder)` is then also true when the folder lies inside that tree.
"""

from __future__ import annotations

import bisect
import os
import posixpath
from _thread import _local
from stat import S_ISLNK

from rtk_policy.util import environ

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Container, Sequence

WILDCARDS = frozenset("*?[")
#: results of one glob kept (a bound for `rm -rf /tmp/*` in a big folder)
GLOB_LIMIT = 64
_case_insensitive: dict[str, bool] = {}
#: `.memo`: the `spellings` worked out in this thread's evaluation under way (`evaluation_memo`);
#: unset or None outside one
_evaluation = _local()


def is_pattern(path: str) -> bool:
    """Whether `path` holds a glob wildcard (`*`, `?`, `[`)."""
    return not WILDCARDS.isdisjoint(path)


def home() -> str:
    """The home folder (`$HOME`, else the password database's)."""
    return environ.get("HOME") or environ.expand_user("~")


def expand_user(path: str) -> str:
    """`path` with a leading `~`, `~user`, `$HOME` or `${HOME}` expanded."""
    if path.startswith("${HOME}"):
        return home() + path[7:]
    if path.startswith("$HOME") and (len(path) == 5 or path[5] == "/"):
        return home() + path[5:]
    if path == "~" or path.startswith("~/"):
        return home() + path[1:]
    if path.startswith("~"):
        return environ.expand_user(path)
    return path


def collapse(path: str) -> str:
    """`path` with `.`, `..` and repeated `/` collapsed (absolute against `/`), a final `/` kept.
    A `..` after a pattern part stays a pattern (`_up_from_patterns`)."""
    tree = len(path) > 1 and path.endswith("/")
    if ".." in path and is_pattern(path):
        path = _up_from_patterns(path)
    collapsed = posixpath.normpath(path)
    if collapsed.startswith("//"):
        collapsed = "/" + collapsed.lstrip("/")
    return collapsed + "/" if tree and collapsed != "/" else collapsed


def _up_from_patterns(path: str) -> str:
    """`..` after a part that is a pattern (an unknown value, `*`, which may be several folders
    deep) goes up to anywhere at or below the part before it: `/a/*/../b` is `/a*/b` (matching
    `/a/b` and `/a/x/y/b`), `/*/../b` is `/*/b`."""
    out: list[str] = []
    for part in path.split("/"):
        if part == ".." and out and is_pattern(out[-1]):
            out.pop()
            if out and out[-1]:
                out[-1] = out[-1] if out[-1].endswith("*") else out[-1] + "*"
            else:
                out.append("*")
            continue
        out.append(part)
    return "/".join(out)


def absolute(path: str, cwd: str) -> str:
    """`path` (user-expanded) made absolute against `cwd`, then collapsed."""
    path = expand_user(path)
    if not path.startswith("/"):
        path = posixpath.join(cwd or os.getcwd(), path)
    return collapse(path)


def case_insensitive(path: str) -> bool:
    """Whether the file system holding `path` ignores case (probed on its nearest existing folder
    with a cased name: the name with its case swapped names the same file). Remembered per path."""
    found = _case_insensitive.get(path)
    if found is not None:
        return found
    probe = path.rstrip("/") or "/"
    while probe != "/" and not (probe != probe.swapcase() and os.path.lexists(probe)):
        probe = posixpath.dirname(probe)
    found = _case_insensitive.get(probe)
    if found is None:
        found = False
        if probe != "/":
            parent, name = posixpath.split(probe)
            try:
                found = os.path.samefile(probe, posixpath.join(parent, name.swapcase()))
            except (OSError, ValueError):
                pass
    if len(_case_insensitive) > 4096:
        _case_insensitive.clear()
    _case_insensitive[probe] = _case_insensitive[path] = found
    return found


def resolved(path: str) -> str:
    """`path` with the symlinks of its existing part resolved (the tree mark kept)."""
    tree = path.endswith("/") and path != "/"
    try:
        real = realpath(path)
    except (OSError, ValueError):  # a NUL byte, a name too long: the file system cannot hold it
        return path
    return real + "/" if tree and real != "/" else real


def realpath(path: str) -> str:
    """`os.path.realpath(path)`, the usual case the short way: an absolute path without `.` or
    `..` parts none of whose existing prefixes is a symlink is itself, its empty parts dropped
    (each prefix probed with one `lstat`, as `realpath` probes it); any other path goes the
    long way."""
    parts = path.split("/")
    if parts[0] or "." in parts or ".." in parts:  # relative, or parts to collapse
        return os.path.realpath(path)
    current = ""
    for name in parts:
        if not name:
            continue
        current += "/" + name
        try:
            mode = os.lstat(current).st_mode
        except OSError:  # missing or unreadable: not a link, as `realpath` takes it
            continue
        if S_ISLNK(mode):
            return os.path.realpath(path)
    return current or "/"


def evaluation_memo(
    memo: dict[tuple[str, str], tuple[str, ...]] | None,
) -> dict[tuple[str, str], tuple[str, ...]] | None:
    """Make `memo` the place `spellings` remembers its answers in (None: remember nothing) and
    return the one it replaces. One evaluation of a command sets a fresh dict and restores the old
    value after it: a written path is spelt for the segment's `tool` and again by every guard that
    looks it up (`guarded_path`, `guarded_what`, the shell start-up files), each time with the same
    file system. Nothing is kept from one command to the next, nor seen by another thread."""
    previous = getattr(_evaluation, "memo", None)
    _evaluation.memo = memo
    return previous


def current_memo() -> dict[tuple[str, str], tuple[str, ...]] | None:
    """The memo of this thread's evaluation under way (`evaluation_memo`), None outside one."""
    return getattr(_evaluation, "memo", None)


def spellings(path: str, cwd: str = "") -> tuple[str, ...]:
    """The absolute forms of `path` (see the module docstring), the lexical one first, no repeats.

    A glob is kept as its pattern, followed by the spellings of the files it matches now."""
    memo = getattr(_evaluation, "memo", None)
    if memo is None:
        return _spellings(path, cwd)
    found = memo.get((path, cwd))
    if found is None:
        found = memo[(path, cwd)] = _spellings(path, cwd)
    return found


def _spellings(path: str, cwd: str) -> tuple[str, ...]:
    lexical = absolute(path, cwd)
    found = [lexical]
    if is_pattern(lexical):
        found += _glob(lexical)
    forms: dict[str, None] = {}
    for item in found:
        forms[item] = None
        if not is_pattern(item):
            forms[resolved(item)] = None
    for item in list(forms):
        if case_insensitive(item):
            forms[item.casefold()] = None
    return tuple(forms)


def _glob(pattern: str) -> list[str]:
    """The paths `pattern` matches now (at most `GLOB_LIMIT`), trees kept as trees."""
    import glob
    from itertools import islice

    try:
        matches = list(islice(glob.iglob(pattern.rstrip("/") or "/"), GLOB_LIMIT))
    except (OSError, ValueError, RecursionError):
        return []
    return [m + "/" if pattern.endswith("/") else m for m in matches]


def under(path: str, folder: str) -> bool:
    """Whether `path` is `folder` or inside it (both collapsed, plain strings, no patterns)."""
    path, folder = path.rstrip("/") or "/", folder.rstrip("/") or "/"
    return path == folder or path.startswith(folder if folder == "/" else folder + "/")


def matches_under(pattern: str, folder: str, holding: bool = True) -> bool:
    """Whether some path `pattern` can match is `folder` or inside it (or, when `holding`, holds
    it)."""
    import fnmatch

    pattern = pattern.rstrip("/") or "/"
    literal = literal_start(pattern)
    if under(literal, folder) and literal.rstrip("/") != folder.rstrip("/"):
        return True  # `folder/*.yaml`: every match is inside the folder
    if fnmatch.fnmatchcase(folder, pattern):
        return True
    if holding:
        return fnmatch.fnmatchcase(folder, pattern + "/*")
    parts, wanted = pattern.strip("/").split("/"), folder.strip("/").split("/")
    return len(parts) > len(wanted) and all(map(fnmatch.fnmatchcase, wanted, parts))


def literal_start(pattern: str) -> str:
    """The text every match of `pattern` starts with: all of it up to its first wildcard."""
    pattern = pattern.rstrip("/") or "/"
    cut = min((pattern.index(c) for c in WILDCARDS if c in pattern), default=len(pattern))
    return pattern[:cut]


def near(pattern: str, ordered: Sequence[str], known: Container[str]) -> set[str]:
    """Of the plain paths `known` (`ordered`: the same, sorted), every one `pattern` may overlap:
    those that start with its `literal_start` and the folders above that start (a match of it
    lies inside, or as a tree holds, no other)."""
    start = literal_start(pattern)
    if start.startswith("//"):  # `overlaps` reads a pattern's leading slashes as one
        start = "/" + start.lstrip("/")
    at = bisect.bisect_left(ordered, start)
    found: set[str] = set()
    while at < len(ordered) and ordered[at].startswith(start):
        found.add(ordered[at])
        at += 1
    above = (start[:k] or "/" for k in range(len(start)) if start[k] == "/")
    found.update(folder for folder in above if folder in known)
    return found


def specific(pattern: str) -> bool:
    """Whether a pattern names at least one literal folder or file (`*` and `*/*` do not)."""
    return any(part and is_pattern(part) is False for part in pattern.strip("/").split("/"))


def overlaps(path: str, folder: str) -> bool:
    """Whether writing `path` changes `folder` or something in it: `path` is inside `folder`, or
    `path` is a tree (ends in `/`) holding `folder`. A pattern overlaps when one of its matches
    does, provided it names something literal (`*` alone names nothing in particular)."""
    tree = path.endswith("/")
    if is_pattern(path):
        return specific(path) and matches_under(path, folder, tree)
    return under(path, folder) or (tree and under(folder, path))
