"""The guard's own state: every file and folder whose change could switch rtk-policy off or weaken
it.

One list, computed once per environment (`guarded`), feeds the CEL functions `guarded_path(p)` and
`guarded_what(p)` (`functions_guard.py`) that the shipped `guard-self` pack asks with. Each entry
is a `Guarded` path with what it is, for the message. An absolute entry names one place (the
managed folder, the user's config, state, cache and runtime folders, the installed package, the
agents' user and machine-wide settings); a relative entry (`.rtk-policy`, `.claude/settings.json`)
names that tail anywhere, since every project has its own.

The layer, state and cache folders come from `config/paths.py` (each one the loaders use, and its
default, since the hook's environment may differ from the shell's), the machine-wide ones from
`config/managed.py` (every platform's), the runtime folders from `serve/runtime.py`: one source of
truth for where rtk-policy keeps its files.
"""

from __future__ import annotations

import os
import posixpath
import sys
from _thread import _local

from rtk_policy.config import managed
from rtk_policy.config import paths as config_paths
from rtk_policy.policy import paths
from rtk_policy.serve import runtime
from rtk_policy.util import environ, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

#: macOS keeps machine-wide settings here, Linux under /etc
MAC_SUPPORT = "/Library/Application Support"


@record.frozen
class Guarded:
    """One guarded place: an absolute path, or a relative tail guarded wherever it occurs."""

    path: str
    what: str


def _every_platform(places: dict[str, str]) -> list[str]:
    """A `config/managed.py` table's place on every platform, as absolute paths."""
    return [posixpath.join("/", place) for place in dict.fromkeys(places.values())]


def layer_folders() -> Iterator[Guarded]:
    """The policy and config folders of the managed and user layers (`config/paths.py`)."""
    for folder in _every_platform(managed.MANAGED):
        yield Guarded(folder, "rtk-policy's managed policy and config folder")
    for folder in config_paths.user_config_dirs():
        yield Guarded(folder, "rtk-policy's user policy and config folder")


def state_folders() -> Iterator[Guarded]:
    """The state folder (audit log, its anchor, trust records), the compiled-policy caches and the
    audit writer's folders and service file (`config/paths.py`, `config/managed.py`)."""
    for folder in config_paths.state_dirs():
        yield Guarded(folder, "rtk-policy's state folder (audit log, anchor, trust records)")
    for folder in config_paths.cache_dirs() + _every_platform(managed.CACHE):
        yield Guarded(folder, "rtk-policy's compiled-policy cache")
    writer = (managed.WRITER_RUN, managed.WRITER_LOGS, managed.WRITER_SERVICE)
    for folder in (place for places in writer for place in _every_platform(places)):
        yield Guarded(folder, "rtk-policy's audit writer service (its socket, log or unit)")
    for path in _configured:  # a moved log, its anchor and rotations (`audit/anchor.py`), its key
        base = path[: -len(".jsonl")] if path.endswith(".jsonl") else path
        for place in dict.fromkeys((path, f"{base}.anchor", f"{path}.anchor",
                                    *(f"{path}.{n}" for n in range(1, 10)))):  # fmt: skip
            yield Guarded(place, "rtk-policy's audit log")


def runtime_folders() -> Iterator[Guarded]:
    """The runtime folder the thin client uses (`serve/runtime.runtime_dir`: the resident engine's
    socket and lock), and only that one: with `$XDG_RUNTIME_DIR` set, `/tmp` holds none of it."""
    what = "rtk-policy's runtime folder (the resident engine's socket)"
    yield Guarded(runtime.runtime_dir(), what)


def package_paths() -> Iterator[Guarded]:
    """The installed package, its metadata, its console script and, for a virtual environment, the
    environment whose Python runs the hook."""
    what = "the installed rtk-policy package"
    import rtk_policy

    package = posixpath.dirname(posixpath.abspath(rtk_policy.__file__))
    yield Guarded(package, what)
    yield Guarded(
        posixpath.join(posixpath.dirname(package), "policies"), "rtk-policy's shipped packs"
    )
    if sys.prefix != sys.base_prefix:
        yield Guarded(sys.prefix, "the Python environment rtk-policy runs in")
    for name in ("rtk-policy", "rtk-policy.exe"):
        yield Guarded(posixpath.join(posixpath.dirname(sys.executable), name), what)
    for folder in {p for p in sys.path if p.endswith(("site-packages", "dist-packages"))}:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if "rtk_policy" in name.replace("-", "_"):  # metadata, .pth, editable finder
                yield Guarded(posixpath.join(folder, name), what)


def agent_settings() -> Iterator[Guarded]:
    """The agents' user and machine-wide files that hold (or can switch off) our hook."""
    home = paths.home()
    claude = paths.expand_user(environ.get("CLAUDE_CONFIG_DIR") or "~/.claude")
    codex = paths.expand_user(environ.get("CODEX_HOME") or "~/.codex")
    copilot = paths.expand_user(environ.get("COPILOT_HOME") or "~/.copilot")
    files = {
        "Claude Code's settings (they hold the hook)": (
            f"{claude}/settings.json", f"{claude}/settings.local.json", f"{claude}/hooks",
            f"{home}/.claude.json", "/etc/claude-code", f"{MAC_SUPPORT}/ClaudeCode",
        ),
        "Codex's hooks and config": (f"{codex}/hooks.json", f"{codex}/config.toml", "/etc/codex"),
        "Gemini CLI's settings": (
            f"{home}/.gemini/settings.json", "/etc/gemini-cli", f"{MAC_SUPPORT}/GeminiCli",
        ),
        "Copilot's hooks and settings": (
            f"{copilot}/hooks", f"{copilot}/settings.json", f"{copilot}/config.json",
            "/etc/github-copilot",
        ),
        "Cursor's hooks": (f"{home}/.cursor/hooks.json", "/etc/cursor", f"{MAC_SUPPORT}/Cursor"),
    }  # fmt: skip
    for what, places in files.items():
        for place in places:
            yield Guarded(place, what)


#: tails guarded wherever they occur (a project's own files), with what they are
ANYWHERE = (
    Guarded(".rtk-policy", "a project's rtk-policy folder"),
    Guarded("rtk-policy/config.toml", "an rtk-policy config file"),
    Guarded("rtk-policy/policies", "an rtk-policy policy folder"),
    Guarded("rtk_policy/packs", "rtk-policy's shipped packs"),
    Guarded(".claude/settings.json", "Claude Code's project settings (they hold or stop hooks)"),
    Guarded(".claude/settings.local.json", "Claude Code's local settings (they can disable hooks)"),
    Guarded(".claude/hooks", "Claude Code's hook scripts"),
    Guarded(".claude.json", "Claude Code's state file"),
    Guarded("managed-settings.json", "Claude Code's managed settings"),
    Guarded(".codex/hooks.json", "Codex's project hooks"),
    Guarded(".codex/config.toml", "Codex's project config"),
    Guarded(".gemini/settings.json", "Gemini CLI's project settings"),
    Guarded(".cursor/hooks.json", "Cursor's project hooks"),
    Guarded(".github/hooks", "Copilot's repository hooks"),
    Guarded(".github/copilot/settings.json", "Copilot's repository settings"),
    Guarded(".github/copilot/settings.local.json", "Copilot's local repository settings"),
)  # fmt: skip

#: the sources of absolute entries, in order
SOURCES: tuple[Callable[[], Iterator[Guarded]], ...] = (
    layer_folders, state_folders, runtime_folders, package_paths, agent_settings,
)  # fmt: skip

#: paths the loaded config names (the audit log when moved), added by `remember_configured`
_configured: tuple[str, ...] = ()
#: per list and environment: spelling → what, holding folder → what, the spellings sorted
_Table = tuple[dict[str, str], dict[str, str], list[str]]
_tables: dict[tuple[str | None, ...], _Table] = {}
_ENV = ("HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR", "TMPDIR",
        "CLAUDE_CONFIG_DIR", "CODEX_HOME", "COPILOT_HOME",
        "ZDOTDIR", "BASH_ENV", "ENV")  # fmt: skip


#: `.state`, per thread: the evaluation memo `_evaluation` last kept state for, the `_generation`
#: then, the variables then, and its answers
_current = _local()
_generation = 0  #: how many times `remember_configured` changed the configured paths


def remember_configured(*configured: str) -> None:
    """Guard paths the loaded config chose (the audit log's `path`) besides the defaults."""
    global _configured, _generation
    chosen = tuple(paths.expand_user(p) for p in configured if p)
    if chosen != _configured:
        _configured = chosen
        _tables.clear()
        _generation += 1


def guarded() -> tuple[Guarded, ...]:
    """Every absolute guarded entry for the current environment, then the `ANYWHERE` tails."""
    return (*(entry for source in SOURCES for entry in source()), *ANYWHERE)


def shared_temp() -> frozenset[str]:
    """The shared temporary folders (`/tmp`, `/var/tmp`, `$TMPDIR`), each spelling: a tree written
    there as a whole (`tar -x -C /tmp`) is everyday work, so it never counts as holding a guarded
    place below it (naming that place still does)."""
    folders = {"/tmp", "/var/tmp", environ.get("TMPDIR") or "/tmp"}
    return frozenset(s.rstrip("/") or "/" for f in folders for s in paths.spellings(f))


def _evaluation() -> tuple[tuple[str | None, ...], dict[tuple[str, str], str] | None]:
    """The variables the tables depend on (`_ENV`) and the answers given so far by (path, list),
    kept for this thread's evaluation of one command under way (`paths.evaluation_memo`: the
    environment and the file system are taken as fixed in it); outside one, the variables and no
    answers."""
    memo = paths.current_memo()
    if memo is None:
        return tuple(map(environ.get, _ENV)), None
    state = getattr(_current, "state", None)
    if state is None or state[0] is not memo or state[1] != _generation:
        state = (memo, _generation, tuple(map(environ.get, _ENV)), {})
        _current.state = state
    return state[2], state[3]


def _table(entries: Callable[[], Iterable[Guarded]], variables: tuple[str | None, ...]) -> _Table:
    """The spellings of every absolute entry of `entries()` → what it is, every folder holding one
    → what it holds, but the shared temporary folders, and the spellings sorted (remembered per
    list and the `variables` of the environment)."""
    key = (entries.__qualname__, *variables)
    found = _tables.get(key)
    if found is None:
        table: dict[str, str] = {}
        holders: dict[str, str] = {}
        temp = shared_temp()
        for entry in entries():
            if not entry.path.startswith("/"):
                continue
            for spelling in paths.spellings(entry.path):
                spelling = spelling.rstrip("/") or "/"
                table.setdefault(spelling, entry.what)
                while spelling != "/":
                    spelling = posixpath.dirname(spelling)
                    if spelling not in temp:
                        holders.setdefault(spelling, entry.what)
        if len(_tables) > 16:
            _tables.clear()
        found = _tables[key] = (table, holders, sorted(table))
    return found


def guarded_what(path: str) -> str:
    """What guarded thing writing `path` changes, as a phrase naming `path` ("PATH, WHAT" or, for a
    tree holding it, "PATH, which holds WHAT"); "" when none. `path` ends in `/` for a tree."""
    return place_what(path, guarded, tails=True)


def guarded_path(path: str) -> bool:
    """Whether writing `path` (a tree when it ends in `/`) changes the guard's own state."""
    return bool(guarded_what(path))


def place_what(path: str, entries: Callable[[], Iterable[Guarded]], tails: bool = False) -> str:
    """What absolute entry of `entries()` (with `tails`, or `ANYWHERE` tail) writing `path`
    changes, as `guarded_what` says it ("" when none): another list of places looked up the way
    the guard's own are (`startup.py`). Remembered for the evaluation under way."""
    variables, answers = _evaluation()
    key = (path, entries.__qualname__ + "+tails" * tails)
    found = answers.get(key) if answers is not None else None
    if found is None:
        found = _place_what(path, _table(entries, variables), tails)
        if answers is not None:
            answers[key] = found
    return found


def _place_what(path: str, table: _Table, tails: bool) -> str:
    for form in paths.spellings(path):
        what, holds = _absolute_what(form, table)
        if not what and tails:
            what, holds = _anywhere_what(form)
        if what:
            return f"{path}, which holds {what}" if holds else f"{path}, {what}"
    return ""


def _absolute_what(form: str, tables: _Table) -> tuple[str, bool]:
    """What absolute entry of `tables` the spelling `form` overlaps ("" when none), and whether
    `form` is a tree holding it."""
    table, holders, ordered = tables
    if paths.is_pattern(form):
        near = paths.near(form, ordered, table) if paths.specific(form) else ()
        if not near:
            return "", False
        found = (w for p, w in table.items() if p in near and paths.overlaps(form, p))
        return next(found, ""), False
    probe = bare = form.rstrip("/") or "/"
    while True:
        if probe in table:
            return table[probe], False
        if probe == "/":
            break
        probe = posixpath.dirname(probe)
    return (holders.get(bare, ""), True) if form.endswith("/") else ("", False)


def _anywhere_what(form: str) -> tuple[str, bool]:
    """What `ANYWHERE` tail the spelling `form` lies in, or as a tree holds ("" when none), and
    whether it holds it."""
    words = form.strip("/").split("/")
    fold = paths.case_insensitive(form)
    if fold:
        words = [word.casefold() for word in words]
    tree = form.endswith("/")
    if paths.is_pattern(form):
        named = _NAMED_FOLDED if fold else _NAMED
        if not any(w != "*" and (w in named or paths.is_pattern(w)) for w in words):
            return "", False  # no word that could name a part of a tail
        for entry in ANYWHERE:
            wanted = entry.path.casefold().split("/") if fold else entry.path.split("/")
            if _tail_in(words, wanted, tree):
                return entry.what, False
        return "", False
    starts = _STARTS_FOLDED if fold else _STARTS
    for at, word in enumerate(words):
        for wanted, what in starts.get(word, ()):
            rest = words[at : at + len(wanted)]
            if rest == wanted:
                return what, False
            if tree and len(rest) < len(wanted) and wanted[: len(rest)] == rest:
                return what, True
    return "", False


def _by_first_word(folded: bool) -> dict[str, list[tuple[list[str], str]]]:
    found: dict[str, list[tuple[list[str], str]]] = {}
    for entry in ANYWHERE:
        wanted = (entry.path.casefold() if folded else entry.path).split("/")
        found.setdefault(wanted[0], []).append((wanted, entry.what))
    return found


#: the `ANYWHERE` tails by their first word, as written and case-folded
_STARTS, _STARTS_FOLDED = _by_first_word(False), _by_first_word(True)
#: every word of an `ANYWHERE` tail, as written and case-folded
_NAMED = frozenset(word for entry in ANYWHERE for word in entry.path.split("/"))
_NAMED_FOLDED = frozenset(word.casefold() for word in _NAMED)


def _tail_in(words: list[str], wanted: list[str], tree: bool) -> bool:
    """Whether the pattern `words` can hold the `wanted` words in a row or, as a tree, end with a
    proper start of them (`rm -r .cl*` holds `.claude/settings.json`)."""
    size = len(wanted)
    for at in range(len(words) - size + 1):
        chunk = words[at : at + size]
        if all(map(_component_match, chunk, wanted)) and _named(chunk):
            return True
    if tree:
        for cut in range(1, min(size, len(words) + 1)):
            end = words[-cut:]
            if all(map(_component_match, end, wanted)) and _named(end):
                return True
    return False


def _component_match(word: str, wanted: str) -> bool:
    import fnmatch

    return fnmatch.fnmatchcase(wanted, word)


def _named(words: list[str]) -> bool:
    """Whether the matched words name something (not only `*`: an unknown part names nothing)."""
    return any(word != "*" for word in words)
