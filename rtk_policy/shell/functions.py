"""Which function definitions of an input bash calls, so that a body nobody calls is not judged
as if it ran (`Segment.uncalled`).

The walker emits a function's body where it is written; a call gets copies of it with the call's
arguments (`values_walk`). Bash runs a body only when a command calls the function while the
definition is visible, so a definition is *called* when a later command in its scope names it:

- as its program (`f`, `! f`, `X=1 time f`, `f & …`, and what the parser unwraps, `xargs f`; not
  `time "--" f`, see `_quoted_time_end`), or as an argument of a builtin that runs or binds
  commands (`trap f EXIT`, `mapfile -C f`, `alias`);
- scope: a definition in a subshell `( f(){ …; } )` is gone after it; a child shell (`sh -c f`, an
  interpreter's `system("f")`) does not see an unexported function, unless the input may export
  one (`export`, `declare`, `typeset`, `set -a`), when any mention in it counts;
- order: a later unconditional redefinition in the same scope replaces the function for the
  commands after it (`f(){ A; }; f(){ B; }; f` runs B); a command inside a function body may run
  whenever that function is called, so it counts wherever it is.

In doubt every definition is called: a parse error, a program bash computes (`$x`, `$(…)`), an
`eval` of something unread, or the walker's segment limit. A command named `!f`, or `X=1 ! f`
(after an assignment bash looks for a program called `!`), is no call.
"""

from __future__ import annotations

from rtk_policy.shell.draft import MAX_SEGMENTS, Draft
from rtk_policy.shell.words import assignment_name
from rtk_policy.util import record
from rtk_policy.util.lazy_re import lazy

#: builtins whose arguments name commands bash runs or binds
_RUNNERS = frozenset(
    {"trap", "eval", "mapfile", "readarray", "complete", "compgen", "bind", "alias", "source", "."}
)
_MAY_EXPORT = lazy(globals(), "_MAY_EXPORT", r"\b(?:export|declare|typeset)\b|\bset\s+[-+]")


class Definition(record.NamedTuple):
    """One function definition: its name, the drafts of its body, where it is visible."""

    name: str
    first: int  #: index of the body's first draft
    end: int  #: one past the body's last draft
    scope: tuple[int, ...]  #: `Draft.scope` of the definition
    unconditional: bool  #: a statement of its own, not after `&&`/`||` nor inside a compound


class FunctionsMixin:
    """The walker's record of scopes and function definitions."""

    drafts: list[Draft]
    errors: list[str]
    scope: tuple[int, ...]
    definitions: list[Definition]

    def start_functions(self) -> None:
        """No scope entered, no function defined."""
        self.scope = ()
        self.definitions = []
        self._scopes = 0

    def enter_scope(self, child: bool) -> tuple[int, ...]:
        """Enter a subshell (or, `child`, a child shell); returns the scope to put back."""
        saved = self.scope
        self._scopes += 1
        self.scope = (*saved, -self._scopes if child else self._scopes)
        return saved


def mark_uncalled(walker: FunctionsMixin, text: str) -> None:
    """Set `Draft.uncalled` on the body drafts of every definition no command calls."""
    definitions, drafts = walker.definitions, walker.drafts
    if not definitions or walker.errors or len(drafts) >= MAX_SEGMENTS:
        return
    if any(d.dynamic for d in drafts):
        return
    exported = _MAY_EXPORT.search(text) is not None
    bodies = [(d.first, d.end) for d in definitions]
    for defn in definitions:
        if not _called(defn, definitions, drafts, bodies, exported):
            for d in drafts[defn.first : defn.end]:
                d.uncalled = True


def _called(
    defn: Definition,
    definitions: list[Definition],
    drafts: list[Draft],
    bodies: list[tuple[int, int]],
    exported: bool,
) -> bool:
    """Whether a command may call `defn` while it is the visible definition of its name."""
    for d in drafts:
        if defn.first <= d.index < defn.end or not _names(d, defn.name, exported):
            continue
        in_body = any(first <= d.index < end for first, end in bodies)
        if not in_body and (d.index < defn.end or _replaced(defn, definitions, d.index)):
            continue
        if _sees(d.scope, defn.scope, exported):
            return True
    return False


def _names(d: Draft, name: str, exported: bool) -> bool:
    """Whether command `d` runs `name`: as its program, in a runner builtin's arguments, or (when
    functions may be exported) anywhere in its words."""
    if d.program == name:
        return not (_quoted_time_end(d) or _time_program(d))
    words = d.words[d.peel.program_index + 1 :]
    if not exported and d.program not in _RUNNERS:
        return False
    import re  # only for a command after a shell function definition

    return any(re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w.-])", w.value) for w in words)


def _quoted_time_end(d: Draft) -> bool:
    """`time "--" f`: bash's `time` keyword takes only an unquoted `--`, so it runs a program
    named `--` (and where `time` is a program, as in sh, that runs a program `f`): no function."""
    i = d.peel.program_index
    return i >= 2 and d.words[i - 2].value == "time" and d.words[i - 1].raw in ('"--"', "'--'")


def _time_program(d: Draft) -> bool:
    """`X=1 time f`: after an assignment `time` is no keyword but the program /usr/bin/time, which
    runs a program `f`, never a shell function (checked in bash 5.2)."""
    i = d.peel.program_index
    if i < 2 or d.words[i - 1].value != "time":
        return False
    return assignment_name(d.words[i - 2].raw) is not None


def _replaced(defn: Definition, definitions: list[Definition], at: int) -> bool:
    """Whether an unconditional redefinition in the same scope comes between `defn` and draft
    `at`."""
    return any(
        other.name == defn.name
        and other.unconditional
        and other.scope == defn.scope
        and defn.end <= other.first
        and other.end <= at
        for other in definitions
    )


def _sees(scope: tuple[int, ...], defined: tuple[int, ...], exported: bool) -> bool:
    """Whether a command in `scope` sees a function defined in `defined`: inside it, and (for an
    unexported function) in no child shell started below it."""
    if scope[: len(defined)] != defined:
        return False
    return exported or all(s > 0 for s in scope[len(defined) :])
