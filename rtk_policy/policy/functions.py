"""Custom CEL functions: pure Python, declared once in a table, registered identically on every
backend.

How to add a function: write a pure-Python implementation taking and returning plain values (str,
int, bool, list, dict) and append a `Function(name, params, result, impl)` to a module-level
`FUNCTIONS` tuple. Functions of this module live in `FUNCTIONS` below; another module (e.g.
`functions_rtk.py`) defines its own `FUNCTIONS` tuple and is listed in `EXTENSION_MODULES`. Type
names are "string", "int", "bool", "dyn", "list<string>", "list<dyn>", "map<string,dyn>".
`member=True` makes it a method (`x.name(args)`, the receiver being the first parameter). Overloads
of one name: several entries with the same name and different arity. Implementations must not raise
for ordinary input; an exception becomes an evaluation error of the rule (it does not match).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from functools import lru_cache

from rtk_policy.policy.regex import re_find, re_matches
from rtk_policy.util import environ, record
from rtk_policy.util.lazy_import import import_module

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from typing import Any

#: Modules holding further `FUNCTIONS` tables, imported when present.
EXTENSION_MODULES: tuple[str, ...] = (
    "rtk_policy.policy.functions_rtk",
    "rtk_policy.policy.functions_rtk_read",
    "rtk_policy.policy.functions_guard",
    "rtk_policy.policy.functions_readonly",
    "rtk_policy.policy.functions_git",
)


@record.frozen
class Function:
    """One overload of a custom CEL function."""

    name: str
    params: tuple[str, ...]  #: parameter type names (receiver first for members)
    result: str  #: result type name
    impl: Callable[..., Any]
    member: bool = False

    @property
    def overload_id(self) -> str:
        """A unique, stable overload id for the backends."""
        kind = "m" if self.member else "f"
        args = "_".join(p.replace("<", "_").replace(">", "").replace(",", "_") for p in self.params)
        return f"rtk_{kind}_{self.name}_{args}"


def expand_home(path: str) -> str:
    """Expand a leading `~` and `$HOME`/`${HOME}` to the home folder."""
    home = environ.get("HOME") or environ.expand_user("~")
    if path.startswith("${HOME}"):
        path = home + path[7:]
    elif path.startswith("$HOME"):
        path = home + path[5:]
    elif path == "~" or path.startswith("~/"):
        path = home + path[1:]
    return path


def path_under(path: str, folder: str) -> bool:
    """True when `path` is `folder` or inside it, after ~/$HOME expansion and normpath (no
    symlinks)."""
    p = posixpath.normpath(expand_home(path))
    d = posixpath.normpath(expand_home(folder))
    if d == "/":
        return p.startswith("/")
    return p == d or p.startswith(d.rstrip("/") + "/")


@lru_cache(maxsize=512)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    import fnmatch  # on first use: most decisions never glob
    import re

    return re.compile(fnmatch.translate(pattern), re.DOTALL)


def glob(pattern: str, text: str) -> bool:
    """fnmatch-style match of the whole `text`: `*` (crossing `/`), `?`, `[...]`; case-sensitive."""
    return _glob_regex(pattern).match(text) is not None


def shell_quote(word: str) -> str:
    """`word` quoted for bash (`shlex.quote`, imported on first use: a cold hook seldom needs
    it)."""
    from shlex import quote

    return quote(word)


def shell_join(words: list[str]) -> str:
    """The words quoted for bash and joined by spaces."""
    from shlex import quote

    return " ".join(quote(str(w)) for w in words)


def dirname(path: str) -> str:
    """The folder part of `path` ("" for a bare name)."""
    return posixpath.dirname(path)


#: find's actions that run a command up to a `;` or `+` argument
_FIND_EXECS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


def find_actions(args: list[str]) -> list[str]:
    """find's arguments without the commands its -exec/-execdir/-ok/-okdir run (each up to its
    `;` or `+`): `find . -exec echo -delete ;` has no `-delete` action of its own."""
    out: list[str] = []
    inside = False
    for arg in args:
        if inside:
            inside = arg not in (";", "+")
        elif arg in _FIND_EXECS:
            inside = True
            out.append(arg)
        else:
            out.append(arg)
    return out


def without_literals(text: str, parts: list[str]) -> str:
    """`text` (code) with each of `parts` taken out where it is a whole string literal, in single
    or double quotes: `os.system("rm -r x")` less "rm -r x" is `os.system()`; a part that is only
    the start of a literal (`"rm -r " + p`) stays."""
    for part in parts:
        if part:
            text = text.replace(f'"{part}"', "").replace(f"'{part}'", "")
    return text


#: each agent's name and how it spells a shell permission rule ({} is the pattern)
_AGENT_RULES = {
    "claude": ("Claude Code", "Bash({})"),
    "gemini": ("Gemini CLI", "run_shell_command({})"),
    "cursor": ("Cursor", "Shell({})"),
    "copilot": ("Copilot CLI", "shell({})"),
    "codex": ("Codex", "prefix_rule for '{}'"),
}


def agent_name(agent: str) -> str:
    """The name users know agent `agent` by (`gemini` -> `Gemini CLI`); Claude Code's for an
    agent we do not know."""
    return _AGENT_RULES.get(agent, _AGENT_RULES["claude"])[0]


def agent_rule(agent: str, kind: str, pattern: str) -> str:
    """A permission rule of `agent` as its user wrote it: `agent_rule("copilot", "deny", "git
    push")` is `Copilot CLI deny rule shell(git push)`."""
    name, form = _AGENT_RULES.get(agent, _AGENT_RULES["claude"])
    return f"{name} {kind} rule {form.format(pattern)}"


_S, _B, _LS = "string", "bool", "list<string>"

def _bash_rule_matches(pattern: str, text: str) -> bool:
    """`bash_pattern.bash_rule_matches`, imported on first use (a hook meets Claude Code `Bash(…)`
    rules only when the user has some)."""
    from rtk_policy.policy.bash_pattern import bash_rule_matches

    return bash_rule_matches(pattern, text)


#: The functions of this module.
FUNCTIONS: tuple[Function, ...] = (
    Function("bash_rule_matches", (_S, _S), _B, _bash_rule_matches),
    Function("glob", (_S, _S), _B, glob),
    Function("shell_quote", (_S,), _S, shell_quote),
    Function("shell_join", (_LS,), _S, shell_join),
    Function("basename", (_S,), _S, posixpath.basename),
    Function("dirname", (_S,), _S, dirname),
    Function("path_under", (_S, _S), _B, path_under),
    Function("expand_home", (_S,), _S, expand_home),
    Function("find_actions", (_LS,), _LS, find_actions),
    Function("without_literals", (_S, _LS), _S, without_literals),
    Function("agent_name", (_S,), _S, agent_name),
    Function("agent_rule", (_S, _S, _S), _S, agent_rule),
    # re_find(pattern, text): the pattern first, as in glob and bash_rule_matches; RE2
    Function("re_find", (_S, _S), _S, re_find),
    # `x.matches(p)` with a cached compiled pattern; the compiler rewrites literal-pattern calls to
    # it
    Function("re_matches", (_S, _S), _B, re_matches),
    # string helpers of cel-go's strings extension that both backends lack
    Function("join", (_LS, _S), _S, lambda items, sep: sep.join(items), member=True),
    Function("split", (_S, _S), _LS, lambda text, sep: text.split(sep), member=True),
    Function("lowerAscii", (_S,), _S, lambda text: text.lower(), member=True),
    Function("upperAscii", (_S,), _S, lambda text: text.upper(), member=True),
    Function("trim", (_S,), _S, lambda text: text.strip(), member=True),
    Function("replace", (_S, _S, _S), _S, lambda text, a, b: text.replace(a, b), member=True),
)


@lru_cache(maxsize=1)
def all_functions() -> tuple[Function, ...]:
    """This module's functions plus those of every importable extension module."""
    found = list(FUNCTIONS)
    for name in EXTENSION_MODULES:
        try:
            module = import_module(name)
        except ModuleNotFoundError as error:
            if error.name != name:
                raise
            continue
        found.extend(getattr(module, "FUNCTIONS", ()))
    return tuple(found)


def function_names() -> frozenset[str]:
    """The names of every custom function."""
    return frozenset(f.name for f in all_functions())


def functions_signature() -> str:
    """A stable text of the function table (part of the compiled-cache key)."""
    return ";".join(sorted(f"{f.overload_id}->{f.result}" for f in all_functions()))
