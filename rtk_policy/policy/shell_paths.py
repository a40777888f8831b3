"""The paths each segment of a command writes, spelt out (`writes.py` says which words; this module
says which files): variables assigned earlier in the command (also `for NAME in …` lists and
`export`), the folders an earlier `cd` or `pushd` may have moved to, brace lists, then every
spelling of each path (`paths.spellings`). A part the hook cannot know (an unset variable, a
command substitution) becomes `*`, so the path stays a pattern of what it may be.

Over-approximation on purpose: every value a variable was given anywhere earlier counts, and every
folder a `cd` went to, since which branch runs is not known before it runs.
"""

from __future__ import annotations

import os
import time

from rtk_policy.policy import paths
from rtk_policy.policy.writes import segment_writes
from rtk_policy.util import environ
from rtk_policy.util.lazy_re import lazy

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rtk_policy.shell.model import CommandLine, Segment

#: spellings kept per written word (a bound for words with many expansions)
MAX_FORMS = 32
_EXPANSION = lazy(
    globals(),
    "_EXPANSION",
    r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?[-=+?]([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)"
    r"|\$\([^)]*\)?|`[^`]*`?|\$\{[^}]*\}?|\$[0-9@*#?$!-]",
)
_FOR = lazy(
    globals(),
    "_FOR",
    r"\b(?:for|select)\s+([A-Za-z_][A-Za-z0-9_]*)\s+in\s+([^;\n]*?)\s*(?:;|\n)\s*do\b",
)
_BRACE = lazy(globals(), "_BRACE", r"(?<!\$)\{([^{}]*,[^{}]*)\}")
#: mktemp's option letters read here: `-d`, `-q`, `-u` change nothing about where it makes the
#: path, `-t` puts a template in the temp folder
_MKTEMP_FLAGS = lazy(globals(), "_MKTEMP_FLAGS", r"-[dqut]+")
#: what an unset `$TMPDIR` stands for, as in `shell/paths.py` (the deletion rules read it so too)
TEMP_DEFAULT = "/tmp"
_DECLARE = frozenset({"export", "declare", "typeset", "local", "readonly"})
_MOVES = frozenset({"cd", "pushd"})


#: programs whose facts come from the running system (`functions_guard.kills_guard` reads /proc)
_SYSTEM_FACTS = frozenset({"kill", "pkill", "killall", "pgrep", "pidof"})


def depends_on_system(command_line: CommandLine) -> bool:
    """Whether the facts of `command_line` are read from the file system or the processes (a
    write's symlinks and globs, a killed pid): a decision on it must not be remembered."""
    return any(s.program in _SYSTEM_FACTS or segment_writes(s) for s in command_line.segments)


def command_writes(
    command_line: CommandLine,
    cwd: str = "",
    words: list[Any] | None = None,
    deadline: float | None = None,
) -> tuple[tuple[str, ...], ...]:
    """Per segment of `command_line`, the spellings of the paths it writes (trees end in `/`);
    `words` are the segments' `segment_writes` when the caller has them. Past `deadline` (a
    `time.monotonic()` value) every segment left is taken to write the whole tree (`/`)."""
    segments = command_line.segments
    if words is None:
        words = [segment_writes(s) for s in segments]
    if not any(words):
        return ((),) * len(segments)
    variables = _loop_values(command_line.text)
    cwds = [cwd or os.getcwd()]
    found: list[tuple[str, ...]] = []
    for segment, written in zip(segments, words, strict=True):
        if deadline is not None and time.monotonic() > deadline:
            return (*found, *((("/",),) * (len(segments) - len(found))))
        _assignments(segment, variables)
        found.append(_spelt(written, variables, cwds) if written else ())
        if segment.program in _MOVES:
            target = segment.args[-1] if segment.args else "~"
            for word in _expanded(target, variables) if target != "-" else ():
                for base in list(cwds):
                    moved = paths.absolute(word, base)
                    if moved not in cwds:
                        cwds.append(moved)
    return tuple(found)


def _spelt(
    written: list[tuple[str, bool]], variables: dict[str, list[str]], cwds: list[str]
) -> tuple[str, ...]:
    forms: dict[str, None] = {}
    for word, tree in written:
        for expanded in _expanded(word, variables):
            for base in cwds if not expanded.startswith(("/", "~")) else cwds[:1]:
                path = paths.absolute(expanded, base)
                for form in paths.spellings(path + "/" if tree and path != "/" else path):
                    forms[form] = None
                    if len(forms) >= MAX_FORMS:
                        return tuple(forms)
    return tuple(forms)


def _assignments(segment: Segment, variables: dict[str, list[str]]) -> None:
    """Record the values `segment` gives variables: `NAME=value` alone or before a command, and
    `export`/`declare`/`local`/`readonly` arguments."""
    pairs = list(segment.env)
    if segment.program in _DECLARE:
        pairs += [
            (name, value)
            for name, equals, value in (a.partition("=") for a in segment.args)
            if equals and not name.startswith("-")
        ]
    for name, value in pairs:
        values = variables.setdefault(name, [])
        for item in _expanded(value, variables):
            if item not in values:
                values.append(item)


def _loop_values(text: str) -> dict[str, list[str]]:
    """The words `for NAME in WORDS; do` gives NAME, for every loop of `text`."""
    found: dict[str, list[str]] = {}
    if "for " not in text and "select " not in text:
        return found
    for name, words in _FOR.findall(text):
        found.setdefault(name, []).extend(w.strip("'\"") for w in words.split())
    return found


def _expanded(word: str, variables: dict[str, list[str]]) -> list[str]:
    """The forms `word` may take: brace lists opened, variables replaced by each value they were
    given (or the environment's), an unset `$TMPDIR` by `/tmp`, any other unknown expansion by `*`
    (at the start: `/*`, any path)."""
    forms = _braces(word)
    if "$" not in word and "`" not in word:
        return forms
    found: list[str] = []
    for form in forms:
        for item in _substitute(form, variables):
            if item not in found:
                found.append(item)
    return found[:MAX_FORMS]


def _substitute(word: str, variables: dict[str, list[str]]) -> list[str]:
    match = _EXPANSION.search(word)
    if match is None:
        return [word]
    name = match.group(1) or match.group(3)
    values = list(variables.get(name, ())) if name else _made_temp(match.group(0), variables)
    if name and not values:
        known = environ.get(name)
        values = [known] if known is not None else values
    if not values:
        default = match.group(2) or (TEMP_DEFAULT if name == "TMPDIR" else "")
        values = [default] if default else ["/*" if match.start() == 0 else "*"]
    head, tail = word[: match.start()], word[match.end() :]
    found: list[str] = []
    for value in values[:MAX_FORMS]:
        for rest in _substitute(tail, variables):
            found.append(head + value + rest)
    return found[:MAX_FORMS]


def _made_temp(substitution: str, variables: dict[str, list[str]]) -> list[str]:
    """The paths `$(mktemp [-d] [-q] [-u] [-t] [TEMPLATE])` may print (its `X`s as `*`): in
    `$TMPDIR` (what the command set it to, else the environment's, else /tmp) or, for a
    template given without -t, in the current folder. [] for any other substitution (or a
    -p/--tmpdir folder, a template with a folder in it): unknown."""
    words = substitution.strip("$()`").split()
    if not words or words[0] != "mktemp":
        return []
    template, in_temp = "", True
    flags = [w for w in words[1:] if _MKTEMP_FLAGS.fullmatch(w)]
    for word in words[1:]:
        if word in ("--directory", "--quiet", "--dry-run") or word in flags:
            continue
        if word.startswith("-") or template or "/" in word or "$" in word:
            return []
        template, in_temp = word, any("t" in f for f in flags)
    name = (template or "tmp.XXXXXXXXXX").rstrip("X") + "*"
    if not in_temp:
        return [name]
    bases = variables.get("TMPDIR") or [environ.get("TMPDIR") or TEMP_DEFAULT]
    return [f"{base.rstrip('/')}/{name}" for base in bases if base]


def _braces(word: str) -> list[str]:
    """`word` with its `{a,b}` lists opened (innermost first), at most `MAX_FORMS` words."""
    match = _BRACE.search(word)
    if match is None:
        return [word]
    found: list[str] = []
    for choice in match.group(1).split(","):
        found += _braces(word[: match.start()] + choice + word[match.end() :])
        if len(found) >= MAX_FORMS:
            break
    return found[:MAX_FORMS]
