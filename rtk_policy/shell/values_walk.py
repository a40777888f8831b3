"""The walker's half for values bash knows before it runs a command (`values.py`).

While walking in source order the walker learns what the command sets itself: variables
(`x=/`, `export X=/`, `local`, `readonly`, a `for` list, `read` and `unset`), functions (their
bodies' commands) and the positional parameters of `bash -c SCRIPT ARG0 ARG1…`. A command whose
words that knowledge changes (`rm -rf $x`, `$cmd -rf /`, `rm -rf {,/}`, `r\\⏎m`, a call `f /` of
`f(){ rm -rf "$@"; }`) gets a copy of itself with the values bash would give them, right after
it: a known copy is judged like the command, a guessed one (a variable the command does not set,
taken as "/") has its denies made asks (`Segment.guessed`).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import product

from rtk_policy.shell import paths, values
from rtk_policy.shell.draft import Ctx, Draft
from rtk_policy.shell.words import Word, assignment_name, basename, dequote

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rtk_policy.shell.redirects import ReadRedirect
    from rtk_policy.shell.source import Source

#: commands whose guessed copies are not made: they delete nothing and a guessed `cd /` would
#: mislead the rules that read the commands before another
_NO_GUESS = frozenset(
    {"cd", "pushd", "popd", "echo", "printf", "export", "declare", "local", "readonly", "typeset",
     "read", "set", "unset", "test", "[", "[[", "true", "false", ":", "shift", "return", "exit",
     "type", "which", "printenv", "let", "eval", "source", "."}
)  # fmt: skip
_DECLARERS = frozenset({"export", "declare", "local", "readonly", "typeset"})
_LEARNS = frozenset({"read", "unset"})  #: commands that set variables without an `=`
_CDS = frozenset({"cd", "pushd", "popd"})
MAX_COPIES = 256  #: copies made for one input at most
_TOP_POSITIONAL = ("bash",)  #: $0 of the agent's shell; it has no positional parameters
_COPY = "expanded copy"  #: why a copy is never rewritten


class ValuesMixin:
    """Copies of commands with the values bash knows (expects the walker's `emit`)."""

    drafts: list[Draft]
    known: values.Known
    positional: list[tuple[str, ...] | None]
    functions: dict[str, tuple[int, int]]
    copies: int
    copying: bool
    cwd: str
    aliased: Any  #: `aliases.AliasesMixin.aliased`

    def emit(  # pragma: no cover - see simple.CommandsMixin
        self, src: Source, words: list[Word], redirs: Sequence[ReadRedirect], start: int,
        end: int, ctx: Ctx,
    ) -> int:  # fmt: skip
        """Emit one command (implemented by the walker)."""
        raise NotImplementedError

    def start_values(self) -> None:
        """Nothing is known yet."""
        self.known = {}
        self.positional = [_TOP_POSITIONAL]
        self.functions = {}
        self.copies = 0
        self.copying = False
        self.cwd = ""

    def state(self) -> tuple[str, values.Known]:
        """What a subshell, a child shell or a function definition must not change here: the
        folder and the variables (`restore` puts them back)."""
        return self.cwd, dict(self.known)

    def restore(self, saved: tuple[str, values.Known]) -> None:
        """Put back what `state` saved."""
        self.cwd, self.known = saved

    def after_emit(self, d: Draft, redirs: Sequence[ReadRedirect], ctx: Ctx) -> None:
        """Copy the command `d` with the values bash knows, its calls of functions with their
        arguments, then learn what it sets."""
        if self.copying or not d.words:
            return
        self.aliased(d, ctx)
        span = d.src.text[d.start : d.end]
        found: list[tuple[list[Word], bool]] = []
        if "$" in span or "{" in span or "`" in span or "\\\n" in span:
            found = self.alternatives(d.src.text, d.words, self.positional[-1])
            for words, guessed in found:
                self._copy(d, words, redirs, ctx, guessed)
            if d.dynamic and found and self._program_known(d, len(found)):
                d.dynamic = False  # its copies name every program it may run
        program = d.program
        if program in _CDS:
            self._cd(d, found)
        if self.functions and program in self.functions:
            self._call(d)
        if "=" in span or program in _LEARNS:
            self._learn(d, ctx)

    def alternatives(
        self, text: str, words: Sequence[Word], positional: tuple[str, ...] | None
    ) -> list[tuple[list[Word], bool]]:
        """The command's words with the values bash knows, each alternative with whether a guess
        went into it (guesses that cannot start a path, or of a command in `_NO_GUESS`, are
        dropped); empty when nothing changes. A guessed alternative also comes as a known one
        with its guessed words kept as typed (`_typed_guesses`): a deny that matches on the
        words bash knows is not weakened by an unknown word beside them."""
        merged = _continued(text, words)
        slots: list[list[tuple[list[Word], values.Expanded | None, Word]]] = []
        changed = merged is not words
        for w in merged:
            alts = None
            if values.needs_expansion(w.raw) and assignment_name(w.raw) is None:
                alts = values.expand_word(w.raw, self.known, positional)
            if alts is None:
                slots.append([([w], None, w)])
                continue
            changed = True
            slots.append([(_fields(w, a.fields), a, w) for a in alts])
        if not changed:
            return []
        out: list[tuple[list[Word], bool]] = []
        typed = tuple(w.value for w in words)
        seen = {(typed, False), (typed, True)}
        for combo in product(*slots):
            made = [a for _, a, _ in combo if a is not None]
            guessed = any(a.guessed for a in made)
            tries = [([w for ws, _, _ in combo for w in ws], guessed)]
            if guessed:
                tries.append((_typed_guesses(combo), False))
            for new, was_guessed in tries:
                if was_guessed and not any(a.guess_leads for a in made):
                    continue
                if was_guessed and _program(new) in _NO_GUESS:
                    continue
                key = (tuple(w.value for w in new), was_guessed)
                if key not in seen:
                    seen.add(key)
                    out.append((new, was_guessed))
            if len(out) >= values.MAX_ALTERNATIVES:
                break
        return out[: values.MAX_ALTERNATIVES]

    def _copy(
        self,
        d: Draft,
        words: list[Word],
        redirs: Sequence[ReadRedirect],
        ctx: Ctx,
        guessed: bool,
    ) -> None:
        """Emit a copy of `d` with other words, right after it, one level deeper (never
        rewritten)."""
        if self.copies >= MAX_COPIES or not words:
            return
        self.copies += 1
        inner = ctx._replace(  # one level below the command it copies, as nested code is
            depth=ctx.depth + 1, no_rewrite=ctx.no_rewrite or _COPY, guess=ctx.guess or guessed
        )
        self.copying = True
        try:
            at = self.emit(d.src, words, redirs, d.start, d.end, inner)
        finally:
            self.copying = False
        if at >= 0:
            self.drafts[at].copy_of = d.index

    def _program_known(self, d: Draft, copies: int) -> bool:
        """Whether the program word of `d`, an expansion, has only values the command shows
        (`x=ls; $x`, `$(echo ls)`), each in a copy made of `d`."""
        w = d.program_word
        if w is None or not w.dynamic or self.copies >= MAX_COPIES:
            return False
        if self.positional[-1] is _TOP_POSITIONAL and ("$0" in w.raw or "${0" in w.raw):
            return False  # the agent's shell's own $0 is assumed ("bash"), not shown
        alts = values.expand_word(w.raw, self.known, self.positional[-1])
        if not alts or copies >= values.MAX_ALTERNATIVES:
            return False
        return all(a.fields and a.fields[0] and not a.guessed for a in alts)

    def _cd(self, d: Draft, found: list[tuple[list[Word], bool]]) -> None:
        """Follow `cd DIR` / `pushd DIR` (a value the command set counts; `popd`, `cd -` and an
        unknown value make the folder unknown)."""
        words = d.words[d.peel.program_index :]
        known = [ws for ws, guessed in found if not guessed]
        if known and any(w.dynamic for w in words):
            words = known[0][d.peel.program_index :] if len(known[0]) > d.peel.program_index else []
        operands = [w for w in words[1:] if not w.value.startswith("-") or w.value == "-"]
        if basename(words[0].value) == "popd" if words else True:
            target: str | None = None
        elif not operands:
            target = ""
        else:
            target = None if operands[0].dynamic else operands[0].value
        self.cwd = paths.after_cd(self.cwd, target)

    def _call(self, d: Draft) -> None:
        """A call of a function defined earlier: its body's commands with its arguments as
        positional parameters."""
        first, end = self.functions[d.program]
        args = d.words[d.peel.program_index + 1 :]
        calls = [([w.value for w in args], False)]
        for words, guessed in self.alternatives(d.src.text, args, self.positional[-1]):
            calls.append(([w.value for w in words], guessed))
        for params, guessed in calls[: values.MAX_ALTERNATIVES]:
            positional = (d.program, *params)
            for body in self.drafts[first:end]:
                for words, more in self.alternatives(body.src.text, body.words, positional):
                    self._copy(body, words, [], body.ctx, guessed or more)

    def _learn(self, d: Draft, ctx: Ctx) -> None:
        """Learn the variables a command sets: assignments, declarations, `read`, `unset`."""
        words, i = d.words, d.peel.program_index
        conditional = ctx.op_before in ("&&", "||") or ctx.origin != "top" or ctx.depth > 0
        if i >= len(words):
            for w in words:
                self._assign(w.raw, conditional)
            return
        name = basename(words[i].value)
        args = words[i + 1 :]
        if name in _DECLARERS:
            for w in args:
                if not w.value.startswith(("-", "+")):
                    self._assign(w.raw, conditional)
        elif name == "read":
            for w in args:
                if not w.value.startswith("-") and w.value.isidentifier():
                    self._set(w.value, (None,), conditional)
        elif name == "unset":
            for w in args:
                if w.value.isidentifier():
                    self._set(w.value, ("",), conditional)

    def _assign(self, raw: str, conditional: bool) -> None:
        """Learn NAME=VALUE (as typed)."""
        name = assignment_name(raw)
        if name is None or name.endswith("]"):
            return
        value = raw.split("=", 1)[1]
        alts = values.expand_word(value, self.known, self.positional[-1], assignment=True)
        if alts is None and ("$(" in value or "`" in value):
            found: tuple[str | None, ...] = ("/tmp/tmp.x",) if "mktemp" in value else (None,)
        elif alts is None:
            found = (dequote(value)[0],)
        else:
            found = tuple(None if a.guessed else " ".join(a.fields) for a in alts)
        if name.endswith("+"):  # x+=y
            name = name[:-1]
            old = self.known.get(name, ("",))
            found = tuple(None if o is None or f is None else o + f for o in old for f in found)
        self._set(name, found, conditional)

    def _set(self, name: str, found: tuple[str | None, ...], conditional: bool) -> None:
        """Set what a variable may hold: replaced, or added to when the assignment may not run."""
        if conditional and name in self.known:
            found = tuple(dict.fromkeys(self.known[name] + found))
        self.known[name] = found[-values.MAX_ALTERNATIVES :]

    def bind_loop(self, name: str, raws: Sequence[str] | None) -> None:
        """`for NAME in WORDS`: NAME holds each word's value (None: `for NAME` over "$@")."""
        if raws is None:
            params = self.positional[-1]
            found: tuple[str | None, ...] = tuple(params[1:]) if params is not None else (None,)
        else:
            got: list[str | None] = []
            for raw in raws:
                alts = values.expand_word(raw, self.known, self.positional[-1])
                if alts is None:
                    got.append(None if "$(" in raw or "`" in raw else dequote(raw)[0])
                else:
                    got.extend(None if a.guessed else f for a in alts for f in a.fields)
            found = tuple(got)
        self._set(name, found or ("",), True)


def _fields(w: Word, fields: list[str]) -> list[Word]:
    """The words one word becomes (each at the word's offsets; quoted, so no further expansion)."""
    return [Word(f, f, w.start, w.end, False, w.glob, True) for f in fields]


def _typed_guesses(combo: Sequence[tuple[list[Word], values.Expanded | None, Word]]) -> list[Word]:
    """One combination of a command's expanded words, with every word a guess went into kept as
    typed (`$a` stays `$a`, as in the command itself): what the command runs whatever the unknown
    values are, beside words it may add."""
    out: list[Word] = []
    for fields, alt, typed in combo:
        out.extend([typed] if alt is not None and alt.guessed else fields)
    return out


def _program(words: Sequence[Word]) -> str:
    """The first word that is not an assignment, as a basename."""
    for w in words:
        if assignment_name(w.raw) is None:
            return basename(w.value)
    return ""


def _continued(text: str, words: Sequence[Word]) -> Sequence[Word]:
    """Words a backslash-newline split (`r\\⏎m` is the word `rm`) joined; `words` itself when
    there are none."""
    if not words or text.find("\\\n", words[0].start, words[-1].end) < 0:
        return words  # only the words' own span is looked at: a long input is not read per command
    out: list[Word] = []
    joined = False
    for w in words:
        prev = out[-1] if out else None
        if prev is not None and text[prev.end : w.start] == "\\\n":
            raw = prev.raw + w.raw
            out[-1] = Word(raw, prev.value + w.value, prev.start, w.end, prev.dynamic or w.dynamic,
                           prev.glob or w.glob, True)  # fmt: skip
            joined = True
        else:
            out.append(w)
    return out if joined else words
