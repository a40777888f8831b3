"""Simple commands: their words and redirects, wrappers peeled, and the code they run themselves.

`CommandsMixin` is the half of the tree walker (`parser.Walker`) that turns one simple command into
a `Draft` and walks what it runs: `$( )` in its words, `bash -c` scripts, `eval` text, here-strings
fed to a shell, `env -S`, and the commands of `xargs` and `find -exec`.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import accumulate

from rtk_policy.shell import git_code, launchers, nested, scripts
from rtk_policy.shell.draft import GRAMMAR_WORDS, Ctx, Draft
from rtk_policy.shell.launch_walk import LAUNCHERS
from rtk_policy.shell.redirects import REDIRECT_TYPES, RedirectNode, read_redirects
from rtk_policy.shell.source import Source
from rtk_policy.shell.words import (
    SPELT_OTHERWISE,
    Word,
    make_word,
    spelt_otherwise,
)
from rtk_policy.shell.wrappers import peel
from rtk_policy.util.lazy_import import lazy_function
from rtk_policy.util.lazy_re import lazy

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rtk_policy.shell.known_output import known_output
    from rtk_policy.shell.redirects import ReadRedirect
else:  # on first use: only a process substitution needs it
    known_output = lazy_function(globals(), "known_output", "rtk_policy.shell.known_output")

_SUB_RE = lazy(globals(), "_SUB_RE", r"\$\(|`|[<>]\(")
_KEYWORD_TOKENS = frozenset(
    {
        "export",
        "declare",
        "local",
        "readonly",
        "typeset",
        "unset",
        "unsetenv",
        "{",
        "}",
        "!",
        "(",
        ")",
    }
)
SKIP_TYPES = frozenset({"comment", "heredoc_body", "heredoc_start", "heredoc_end"})
SUBST = {"command_substitution": "substitution", "process_substitution": "process_substitution"}
_PLAIN_MIN = 32  #: commands with fewer syntax nodes take the ordinary walk
_PLAIN = lazy(globals(), "_PLAIN", r"[A-Za-z0-9_./:,+@%=-]+(?:[ \t]+[A-Za-z0-9_./:,+@%=-]+)*")
_PLAIN_WORD = lazy(globals(), "_PLAIN_WORD", r"[^ \t]+")
_new_tuple = tuple.__new__
_GLUED = frozenset({"concatenation", "command_name"})  #: nodes tree-sitter may glue words in
_BODIES = {
    "subshell": "subshell",
    "compound_statement": "group",
}  #: code tree-sitter puts in a word


class CommandsMixin:
    """Simple-command handling for the walker (expects the attributes `parser.Walker` sets)."""

    drafts: list[Draft]
    errors: list[str]
    transparent: tuple[tuple[str, ...], ...]
    coproc_at: list[int]
    _group_first: bool
    positional: list[tuple[str, ...] | None]
    cwd: str  #: `Segment.cwd` of the next command (`values_walk`)
    scope: tuple[int, ...]  #: `Draft.scope` of the next command (`functions`)
    enter_scope: Any  #: `functions.FunctionsMixin.enter_scope`
    after_emit: Any  #: `values_walk.ValuesMixin.after_emit`
    state: Any  #: `values_walk.ValuesMixin.state`
    restore: Any  #: `values_walk.ValuesMixin.restore`
    runs_code: bool  #: a command runs nested code

    def walk_source(  # pragma: no cover - see parser.Walker
        self, src: Source, ctx: Ctx, not_plain: bool = False, plain: Any = None
    ) -> None:
        """Parse and walk nested source (implemented by the walker)."""
        raise NotImplementedError

    def statement(self, src: Source, node: Any, ctx: Ctx) -> None:  # pragma: no cover - Walker
        """Dispatch one statement (implemented by the walker)."""
        raise NotImplementedError

    def sequence(self, src: Source, children: Sequence[Any], ctx: Ctx) -> None:  # pragma: no cover
        """Walk a list of statements (implemented by the walker)."""
        raise NotImplementedError

    if TYPE_CHECKING:  # the methods of `launch_walk.LaunchMixin` this mixin calls

        def launched(
            self, d: Draft, name: str, cmd: list[Word], redirs: Sequence[ReadRedirect],
            inner: Ctx, run_ctx: Ctx,
        ) -> bool:  # fmt: skip
            """`launch_walk.LaunchMixin.launched`."""

        def interpreted(
            self, d: Draft, lang: str, cmd: list[Word], redirs: Sequence[ReadRedirect], inner: Ctx
        ) -> None:
            """`launch_walk.LaunchMixin.interpreted`."""

        def xargs_replaced(
            self, d: Draft, sub: list[Word], options: Sequence[str],
            redirs: Sequence[ReadRedirect], run_ctx: Ctx,
        ) -> None:  # fmt: skip
            """`launch_walk.LaunchMixin.xargs_replaced`."""

    def simple(self, src: Source, kids: Sequence[Any], span: Any, ctx: Ctx) -> None:
        """Collect the words and redirects of one simple command and emit it."""
        words: list[Word] = []
        redirs: list[RedirectNode] = []
        sub_nodes: list[Any] = []
        text, char = src.text, src.char
        ascii_only = src.is_ascii  # byte offsets are str offsets: no mapping per word
        for c in kids:
            t = c.type
            if t in REDIRECT_TYPES:
                for rn in read_redirects(src, c):
                    redirs.append(rn)
                    words.extend(rn.extra_words)
                sub_nodes.append(c)
                continue
            b0, b1 = c.start_byte, c.end_byte
            if t in SKIP_TYPES or b0 == b1:
                continue
            if c.is_named or t in _KEYWORD_TOKENS:
                s0, s1 = (b0, b1) if ascii_only else (char(b0), char(b1))
                raw = text[s0:s1]
                pieces = _glued_words(c) if "``" in raw and t in _GLUED else ()
                if len(pieces) > 1:  # tree-sitter glued words across an empty `` ``
                    for p0, p1 in pieces:
                        p0, p1 = (p0, p1) if ascii_only else (char(p0), char(p1))
                        if text[p0:p1] != "``":  # an empty substitution alone: no word at all
                            words.append(make_word(text[p0:p1], p0))
                else:
                    words.append(make_word(raw, s0))
                if t in _BODIES or ("$" in raw or "`" in raw or "(" in raw) and _SUB_RE.search(raw):
                    sub_nodes.append(c)
        self._emit_words(src, words, redirs, sub_nodes, span, ctx)
        for rn in redirs:  # commands tree-sitter nested in a heredoc redirect still run
            for op, node in rn.statements:
                self.statement(
                    src,
                    node,
                    ctx._replace(
                        op_before=op, pipe_id=-1, pipe_index=0, pipe_size=1, pipe_stderr=False
                    ),
                )

    def plain(self, src: Source, node: Any, ctx: Ctx) -> bool:
        """A long command of plain words only: cut its words with a regex; False when it is not.

        Same words as the tree walk, without a Python object per syntax node (a 1 MiB command).
        """
        if node.child_count < _PLAIN_MIN or not src.is_ascii:
            return False
        text, b0, b1 = src.text, node.start_byte, node.end_byte
        if _PLAIN.fullmatch(text, b0, b1) is None:
            return False
        self._emit_words(src, plain_words(text[b0:b1], b0), [], [], node, ctx)
        return True

    def _emit_words(
        self,
        src: Source,
        words: list[Word],
        redirs: list[RedirectNode],
        sub_nodes: list[Any],
        span: Any,
        ctx: Ctx,
    ) -> None:
        """Emit the draft(s) of one simple command and walk the code in its words."""
        if not words and not redirs:
            return
        _glued_fds(words, redirs)
        if src.has_cr and words:
            words[:] = _absorb_cr(src.text, words)
        if span is not None:
            start, end = src.span(span)
        else:
            start, end = words[0].start, words[-1].end
        if words and words[-1].end > end:
            end = words[-1].end
        chunks = [words]
        if src.has_newline and len(words) > 1 and "\n" in src.text[words[0].end : words[-1].start]:
            chunks = _newline_chunks(src.text, words, redirs)
        emitted: list[tuple[int, int]] = []  # (start offset, draft index) per chunk
        c_redirs: list[ReadRedirect]
        for k, chunk in enumerate(chunks):
            sub_ctx, c_start, c_end, c_redirs = ctx, start, end, list(redirs)
            if len(chunks) > 1:  # tree-sitter glued commands of two lines into one
                sub_ctx, c_start, c_end, c_redirs = _chunk_part(ctx, chunks, k, redirs, start, end)
            idx = self.emit(src, chunk, c_redirs, c_start, c_end, sub_ctx)
            if idx >= 0:
                emitted.append((c_start, idx))
        if not emitted:
            return
        for c in sub_nodes:
            at = src.char(c.start_byte)
            idx = next((i for s0, i in reversed(emitted) if s0 <= at), emitted[0][1])
            if c.type in _BODIES:  # tree-sitter's misreading of `! ! ( … )`: the body still runs
                inner = nest(ctx._replace(parent=idx), _BODIES[c.type], "body read as a word")
                self.sequence(src, c.children, inner)
            else:
                self.substitutions(src, c, ctx._replace(parent=idx))

    def emit(
        self,
        src: Source,
        words: list[Word],
        redirs: Sequence[ReadRedirect],
        start: int,
        end: int,
        ctx: Ctx,
    ) -> int:
        """Append a draft for these words (peeling wrappers) and walk the code it runs itself."""
        lead: list[Word] = []
        while words and words[0].raw in GRAMMAR_WORDS:
            lead.append(words.pop(0))
        no_rewrite = ctx.no_rewrite
        if self._group_first or (lead and lead[0].raw == "{"):
            no_rewrite = no_rewrite or "first command of a { group"
        self._group_first = False
        if not words and not redirs:
            return -1
        p = peel(words, self.transparent, pipeline_start=ctx.pipe_index == 0)
        i = p.program_index
        prog = words[i] if i < len(words) else None
        if prog is not None and spelt_otherwise(prog.value, p.program):
            no_rewrite = no_rewrite or SPELT_OTHERWISE  # judged as the program it runs, kept
        d = Draft(
            src,
            start,
            end,
            words,
            [(r.redirect, r.start, r.end) for r in redirs] if redirs else [],
            ctx,
            p,
            lead,
            bool(prog and prog.dynamic),
            no_rewrite,
            len(self.drafts),
        )
        self.drafts.append(d)
        d.cwd = self.cwd
        d.scope = self.scope
        if words and words[0].value == "coproc" and src.base >= 0:
            self.coproc_at.append(src.absolute(start))
        nested_code = prog is not None and (
            runs_code(p.program, words[i:], p.env)
            or (bool(redirs) and bool(scripts.language(p.program)))  # a script on stdin
        )
        if p.split_string is not None or nested_code:
            self.runs_code = True
            inner = Ctx(
                depth=ctx.depth + 1, parent=d.index, no_rewrite="nested code", guess=ctx.guess
            )
            if p.split_string is not None:
                self._script(p.split_string, inner, "shell_c", d)
            if nested_code:
                self._nested(d, words[i:], redirs, inner, ctx)
        self.after_emit(d, redirs, ctx)
        return d.index

    def _nested(
        self, d: Draft, cmd: list[Word], redirs: Sequence[ReadRedirect], inner: Ctx, ctx: Ctx
    ) -> None:
        """Walk what a command runs itself: shell scripts, eval and trap text, what `source` reads
        from stdin, xargs/find -exec commands, the commands of tool runners, ssh's remote
        command."""
        name = d.peel.program  # the program of `cmd`, the command from `d`'s program word on
        if name in nested.SHELLS:
            script, operand = nested.shell_script(cmd)
            if script is not None:
                at = next((k for k, w in enumerate(cmd) if w.end >= script.end), len(cmd))
                self.positional.append(tuple(w.value for w in cmd[at + 1 :]) or (name,))
                try:  # `bash -c 'rm -rf "$0"' /`: $0 is "/"
                    self._script(script, inner, "shell_c", d)
                finally:
                    self.positional.pop()
            elif operand is None or operand.value in ("-", *nested.STDIN_FILES):
                self._walk_stdin(redirs, inner, d)
            elif operand.raw.startswith(("<(", "/dev/fd/")):
                self._walk_made(operand.raw, d, inner)
        elif name in nested.DASH_C_RUNNERS:
            script = nested.dash_c_script(name, cmd)
            if script is not None:
                self._script(script, inner, "shell_c", d)
        elif name == "watch":
            for k, watched in enumerate(nested.watch_command(cmd)):
                self._walk_text(watched, inner._replace(origin="shell_c"), quiet=k > 0)
        elif name == "eval":
            text, dynamic = nested.eval_script(cmd[1:])
            d.dynamic = d.dynamic or dynamic
            if text is not None:
                self._walk_text(text, inner._replace(origin="eval"))
        elif name in ("source", "."):
            operand = cmd[1] if len(cmd) > 1 else None
            if operand is not None and operand.value in nested.STDIN_FILES:
                self._walk_stdin(redirs, inner, d)
            elif operand is not None and operand.raw.startswith(("<(", "/dev/fd/")):
                d.dynamic = True  # `. <(curl …)`: code made at run time, never attested
        elif name == "trap":
            action = nested.trap_action(cmd[1:])
            if action is not None:
                self._script(action, inner, "eval", d)
        elif name == "xargs":
            sub = list(nested.xargs_command(cmd))
            if sub:
                self.emit(d.src, sub, [], sub[0].start, sub[-1].end, _exec_ctx(ctx, d))
                options = [w.value for w in cmd[1 : len(cmd) - len(sub)]]
                self.xargs_replaced(d, sub, options, redirs, _exec_ctx(ctx, d))
        elif name == "find":
            for found in nested.find_exec_commands(cmd):
                sub = list(found)
                self.emit(d.src, sub, [], sub[0].start, sub[-1].end, _exec_ctx(ctx, d))
        elif name == "ssh":
            text = nested.ssh_command(cmd)
            if text is not None:  # run by the remote host's shell
                self._walk_text(text, inner._replace(origin="shell_c"))
        elif name in LAUNCHERS and self.launched(d, name, cmd, redirs, inner, _exec_ctx(ctx, d)):
            return
        elif scripts.language(name):
            self.interpreted(d, scripts.language(name), cmd, redirs, inner)
        elif name in nested.RUNNERS:
            script = nested.runner_script(cmd)
            if script is not None:
                self._script(script, inner, "shell_c", d)
            sub = list(nested.runner_command(cmd))
            if sub:
                self.emit(d.src, sub, [], sub[0].start, sub[-1].end, _exec_ctx(ctx, d))

    def _walk_stdin(self, redirs: Sequence[ReadRedirect], inner: Ctx, d: Draft) -> None:
        """Walk the script a shell (or `source /dev/stdin`) reads from a here-string or heredoc, or
        from a process substitution (`bash < <(…)`, `_walk_made`)."""
        text = nested.here_input([r.redirect for r in redirs], [r.body for r in redirs if r.body])
        if text is not None:
            self._walk_text(text, inner._replace(origin="shell_c"))
            return
        made = [r.redirect.target for r in redirs if r.redirect.op == "<"]
        if made and made[-1].startswith("<("):
            self._walk_made(made[-1], d, inner)

    def _walk_made(self, raw: str, d: Draft, inner: Ctx) -> None:
        """The script a shell reads from a process substitution (`bash <(…)`) or an open file
        descriptor: the substitution's output walked as code when it is known (`known_output`),
        else code made at run time, which makes the command dynamic (as `. <(…)` is)."""
        text = known_output("$" + raw[1:]) if raw.startswith("<(") else None
        if text is None:
            d.dynamic = True
        else:
            self._walk_text(text, inner._replace(origin="shell_c"))

    def _script(self, word: Word, inner: Ctx, origin: str, d: Draft) -> None:
        """Walk the script of `bash -c` / `env -S`; a dynamic script makes the program dynamic."""
        if word.dynamic:
            d.dynamic = True
        self._walk_text(word.value, inner._replace(origin=origin))

    def _walk_text(self, text: str, ctx: Ctx, quiet: bool = False) -> None:
        """Walk nested code that does not lie verbatim in the input (a `cd` or an assignment in a
        script that another shell or an interpreter runs does not change this one); `quiet`: a
        syntax error in it is not the input's."""
        saved, errors = self.state(), list(self.errors)
        child = ctx.origin in ("shell_c", "interpreter")
        scope = self.enter_scope(child=True) if child else self.scope
        self.walk_source(Source(text, -1), ctx)
        self.scope = scope
        if child:
            self.restore(saved)
        if quiet:  # a second reading of the same words: what it cannot parse is no error
            self.errors[:] = errors

    def substitutions(self, src: Source, node: Any, ctx: Ctx) -> None:
        """Walk every $( ), backtick and <( ) >( ) below `node`, in source order."""
        stack = [node]
        found: list[Any] = []
        while stack:
            n = stack.pop()
            if n.type in SUBST:
                found.append(n)
                continue
            stack.extend(reversed(n.children))
        saved = self.state()  # a substitution runs in a subshell: its cd and variables stay there
        for n in found:
            self.sequence(src, n.children, nest(ctx, SUBST[n.type], "substitution"))
            self.restore(saved)


#: The programs `_nested` looks into (their scripts, eval text, xargs / find -exec commands, the
#: commands of tool runners and container `exec`, the remote command of ssh).
RUNS_CODE = (
    nested.SHELLS
    | nested.DASH_C_RUNNERS
    | {"watch", "eval", "trap", "source", ".", "xargs", "find", "ssh"}
    | frozenset(nested.RUNNERS)
    | LAUNCHERS
)


def runs_code(name: str, command: Sequence[Word], env: Sequence[tuple[str, str]] = ()) -> bool:
    """Whether `_nested` has code to walk in `command` (a tool runner only in a form that runs
    something: `npm test` stays a plain command; git only with settings or an environment that
    run code); `env` holds the command's prefix assignments."""
    if name not in RUNS_CODE:
        return scripts.runs_code(name, command)
    if name == "git":
        return git_code.runs_code(command) or any(
            k in git_code.CODE_ENV or k in git_code.CONFIG_ENV for k, _ in env
        )
    if name == "ssh":
        return nested.ssh_command(command) is not None
    if name in launchers.CONTAINER_CLIS and launchers.container_run_command(command):
        return True
    if name not in nested.RUNNERS:
        return True
    return bool(nested.runner_command(command)) or nested.runner_script(command) is not None


def nest(ctx: Ctx, origin: str, no_rewrite: str = "") -> Ctx:
    """The context one nesting level down, keeping the parent; list/pipe facts start afresh."""
    return Ctx(
        depth=ctx.depth + 1,
        origin=origin,
        parent=ctx.parent,
        background=ctx.background,
        pipe_id=ctx.pipe_id,
        pipe_index=ctx.pipe_index,
        pipe_size=ctx.pipe_size,
        pipe_stderr=ctx.pipe_stderr,
        no_rewrite=ctx.no_rewrite or no_rewrite,
        guess=ctx.guess,
    )


#: why the commands xargs and find -exec run are not rewritten (and how they are told apart)
RUN_BY_EXEC = "run by xargs/find"  # also a tool runner's command (nested.RUNNERS)


def _exec_ctx(ctx: Ctx, d: Draft) -> Ctx:
    """Context of the command run by xargs / find -exec / a tool runner: the runner's origin, one
    level deeper."""
    return Ctx(
        depth=ctx.depth + 1,
        origin=ctx.origin,
        parent=d.index,
        no_rewrite=RUN_BY_EXEC,
        guess=ctx.guess,
    )


def plain_words(text: str, base: int) -> list[Word]:
    """The words of `text`, made only of `_PLAIN` characters and blanks, at offset `base`.

    Plain characters need no dequoting: the value is the word as typed.
    """
    if "\t" in text or "  " in text:
        found = [(m.group(), m.start()) for m in _PLAIN_WORD.finditer(text)]
    else:
        raws = text.split(" ")
        found = list(zip(raws, accumulate((len(r) + 1 for r in raws), initial=0), strict=False))
    return [
        _new_tuple(Word, (raw, raw, base + at, base + at + len(raw), False, False, False))
        for raw, at in found
    ]


def _glued_words(node: Any) -> list[tuple[int, int]]:
    """The byte ranges of the words a concatenation node (or a command name holding one) spells:
    one, unless tree-sitter glued words with blanks between them (it reads `/ `` x` as one
    concatenation; bash, as three words)."""
    if node.type == "command_name" and node.child_count == 1:
        node = node.child(0)
    if node.type != "concatenation":
        return []
    out: list[tuple[int, int]] = []
    for k in range(node.child_count):
        kid = node.child(k)
        if out and out[-1][1] == kid.start_byte:
            out[-1] = (out[-1][0], kid.end_byte)
        else:
            out.append((kid.start_byte, kid.end_byte))
    return out


def _absorb_cr(text: str, words: list[Word]) -> list[Word]:
    """Bash keeps a carriage return inside a word (tree-sitter treats it as a blank): put it back.

    `git status\r` ends in the word "status\r"; `status\rrm` is one word.
    """
    out: list[Word] = []
    for w in sorted(words, key=lambda x: x.start):
        end = w.end
        while end < len(text) and text[end] == "\r":
            end += 1
        if out and out[-1].end == w.start and text[w.start - 1] == "\r":
            prev = out.pop()
            out.append(make_word(text[prev.start : end], prev.start))
        elif end != w.end:
            out.append(make_word(text[w.start : end], w.start))
        else:
            out.append(w)
    return out


def _glued_fds(words: list[Word], redirs: Sequence[ReadRedirect]) -> None:
    """Drop a digit word glued to a following redirect (`2>&-0>&1`, `0<&1`): it is that fd."""
    starts = {r.start for r in redirs if r.redirect.fd < 0}
    if starts:
        words[:] = [w for w in words if not (w.raw.isdigit() and w.end in starts)]


def _newline_chunks(
    text: str, words: list[Word], redirs: Sequence[ReadRedirect]
) -> list[list[Word]]:
    """Split words at an unescaped newline between them that no redirect (heredoc) covers."""
    chunks = [words[:1]]
    for prev, w in zip(words, words[1:], strict=False):
        gap_start = prev.end
        nl = text.find("\n", gap_start, w.start)
        cut = False
        while nl >= 0 and not cut:
            escaped = nl > 0 and text[nl - 1] == "\\" or text[max(0, nl - 2) : nl] == "\\\r"
            covered = any(r.start <= nl < r.end for r in redirs)
            cut = not escaped and not covered
            nl = text.find("\n", nl + 1, w.start)
        if cut:
            chunks.append([w])
        else:
            chunks[-1].append(w)
    return chunks


def _chunk_part(
    ctx: Ctx,
    chunks: list[list[Word]],
    k: int,
    redirs: Sequence[ReadRedirect],
    start: int,
    end: int,
) -> tuple[Ctx, int, int, list[ReadRedirect]]:
    """Context, span and redirects of chunk `k` of a command split at newlines."""
    first, last = k == 0, k == len(chunks) - 1
    lo = start if first else chunks[k][0].start
    hi = end if last else chunks[k + 1][0].start
    mine = [r for r in redirs if lo <= r.start < hi]
    c_end = end if last else max([chunks[k][-1].end] + [r.end for r in mine])
    sub = ctx._replace(
        op_before=ctx.op_before if first else "\n",
        op_after=ctx.op_after if last else "\n",
    )
    if not first:
        sub = sub._replace(pipe_id=-1, pipe_index=0, pipe_size=1, pipe_stderr=False)
    return sub, lo, c_end, mine
