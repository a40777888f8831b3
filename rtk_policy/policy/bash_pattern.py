"""Claude Code / RTK `Bash(...)` pattern matching (reference rtk-behaviour.md §4.2), pure Python."""

from __future__ import annotations

from functools import lru_cache

from rtk_policy.util.lazy_re import lazy

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re

_IFS_RUN = lazy(globals(), "_IFS_RUN", r"[ \t\n]+")


def normalise(text: str) -> str:
    """Remove backslash-newlines, squeeze runs of space/tab/newline to one space, trim (CR is
    kept)."""
    return _IFS_RUN.sub(" ", text.replace("\\\n", "")).strip(" ")


@lru_cache(maxsize=512)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    import re  # on first use: a cold hook may need no `re` at all

    glob = pattern.replace(":*", " *").replace("*:", "* ")
    optional_tail = glob.endswith(" *")  # a middle wildcard may end the command (issue #1105)
    if optional_tail:
        glob = glob[:-2]
    body = ".*".join(re.escape(part) for part in glob.split("*"))
    return re.compile(body + ("(?: .*)?" if optional_tail else ""), re.DOTALL)


def bash_rule_matches(pattern: str, text: str) -> bool:
    """True when the Claude Code Bash rule `pattern` (text inside `Bash(...)`) matches command
    `text`."""
    pat = normalise(pattern)
    cmd = normalise(text)
    if pat in ("*", "*:*"):
        return True
    star = pat.find("*")
    if star < 0:
        return cmd == pat or cmd.startswith(pat + " ")
    if star == len(pat) - 1:
        prefix = pat[:-1].rstrip(": ")
        if not prefix:
            return True
        return cmd == prefix or cmd.startswith(prefix + " ")
    return _glob_regex(pat).fullmatch(cmd) is not None
