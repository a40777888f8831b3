"""The walker's half for commands run by launchers (`launchers.py`): GNU parallel, the `-I`
script of xargs, tmux, at/batch, crontab and `docker|podman run`.

Where a launcher fills its command with a value the command itself shows (a `:::` list, `echo /`
piped into it, a here-string), each value is tried; where the value is unknown here (stdin read
from a file, a `::::` list), the command is also tried with "/" in its place, as a guessed segment
(`Segment.guessed`): a deny there is an ask.
"""

from __future__ import annotations

from collections.abc import Sequence

from rtk_policy.shell import git_code, launchers, nested, scripts
from rtk_policy.shell.draft import Ctx, Draft
from rtk_policy.shell.words import Word

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rtk_policy.shell.redirects import ReadRedirect
    from rtk_policy.shell.source import Source

#: the programs `launched` looks into
LAUNCHERS = (
    frozenset({"parallel", "tmux", "at", "batch", "crontab", "git"}) | launchers.CONTAINER_CLIS
)
#: the value an unknown argument is guessed to be: the worst case of the path rules
GUESS = "/"
#: where a script's upload of a file it reads is taken to go (any host but this machine)
_SCRIPT_HOST = "https://remote.invalid/"


class LaunchMixin:
    """Commands run by launchers (expects the attributes and methods of `parser.Walker`)."""

    drafts: list[Draft]

    def emit(  # pragma: no cover - see simple.CommandsMixin
        self, src: Source, words: list[Word], redirs: Sequence[ReadRedirect], start: int,
        end: int, ctx: Ctx,
    ) -> int:  # fmt: skip
        """Emit one command (implemented by the walker)."""
        raise NotImplementedError

    def _walk_text(  # pragma: no cover - CommandsMixin
        self, text: str, ctx: Ctx, quiet: bool = False
    ) -> None:
        """Walk nested code (implemented by the walker)."""
        raise NotImplementedError

    def _script(self, word: Word, inner: Ctx, origin: str, d: Draft) -> None:  # pragma: no cover
        """Walk a script word (implemented by the walker)."""
        raise NotImplementedError

    def launched(
        self,
        d: Draft,
        name: str,
        cmd: list[Word],
        redirs: Sequence[ReadRedirect],
        inner: Ctx,
        run_ctx: Ctx,
    ) -> bool:
        """Walk what a launcher runs; False when `name` is not one (or runs nothing here).
        `run_ctx` is the context of a command it runs, `inner` that of a script it runs."""
        if name == "parallel":
            self._parallel(d, cmd, redirs, inner, run_ctx)
        elif name == "tmux":
            for script in launchers.tmux_scripts(cmd):
                self._script(script, inner, "shell_c", d)
        elif name in ("at", "batch") and launchers.at_reads_stdin(cmd):
            text = self._stdin_text(d, redirs)
            if text is not None:
                self._walk_text(text, inner._replace(origin="shell_c"))
        elif name == "crontab" and launchers.crontab_reads_stdin(cmd):
            text = self._stdin_text(d, redirs)
            for line in launchers.crontab_commands(text or ""):
                self._walk_text(line, inner._replace(origin="shell_c"))
        elif name == "git":
            for code in git_code.scripts(cmd, d.peel.env):
                self._walk_text(code, inner._replace(origin="shell_c"))
            sub = git_code.alias_command(cmd, d.peel.env)
            if sub:
                self.emit(d.src, sub, [], sub[0].start, sub[-1].end, run_ctx)
        elif name in launchers.CONTAINER_CLIS:
            sub = launchers.container_run_command(cmd)
            if not sub:
                return False
            self.emit(d.src, sub, [], sub[0].start, sub[-1].end, run_ctx)
        else:
            return False
        return True

    def interpreted(
        self, d: Draft, lang: str, cmd: list[Word], redirs: Sequence[ReadRedirect], inner: Ctx
    ) -> None:
        """What a script handed to an interpreter does (`scripts.py`): the shell commands and
        argument lists it runs, and its deletions and uploads as the commands that do them (a
        deletion of a path the script computes as `rm -rf /`, guessed); a command it computes
        makes the interpreter's own command dynamic, as `eval "$X"` is."""
        stdin = nested.here_input([r.redirect for r in redirs], [r.body for r in redirs if r.body])
        code = scripts.script_of(lang, cmd, stdin)
        if not code:
            return
        from shlex import quote  # imported on first use: a cold hook seldom reads a script

        found = scripts.actions(lang, code)
        run = inner._replace(origin="interpreter")
        texts = found.shell + [" ".join(map(quote, argv)) for argv in found.argv]
        texts += [f"rm {'-rf' if deep else '-f'} -- {quote(p)}" for p, deep in found.deletes]
        texts += [f"curl --data-binary @{quote(p)} {_SCRIPT_HOST}" for p in found.uploads]
        for text in texts[: launchers.MAX_VALUES]:
            self._walk_text(text, run)
        if found.unknown_delete:
            self._walk_text("rm -rf /", run._replace(guess=True))
        if found.unknown_spawn:
            d.dynamic = True

    def _parallel(
        self,
        d: Draft,
        cmd: list[Word],
        redirs: Sequence[ReadRedirect],
        inner: Ctx,
        run_ctx: Ctx,
    ) -> None:
        """GNU parallel: its command line (its words joined, as parallel hands them to a shell;
        `nested.command_texts`) with each argument, or each argument as a command line."""
        job = launchers.parallel_job(cmd)
        if job is None:
            return
        shell = inner._replace(origin="shell_c")
        if not job.command:  # `parallel ::: 'rm -rf /'`: every argument is a command line
            for value in job.values + (self._fed(d, redirs) or [] if job.unknown else []):
                self._walk_text(value, shell)
            return
        texts = nested.command_texts(job.command)
        for k, text in enumerate(texts):
            self._walk_text(text, shell, quiet=k > 0)  # as typed: rules read what feeds it
        fed: list[str] | None = []
        if job.unknown:
            fed = self._fed(d, redirs)
            if fed is None and not launchers.has_placeholder(job.command, job.replace):
                fed = []  # arguments appended from an unknown stdin: as for xargs, rules judge
        for value, guess in _tagged(job.values, fed):
            for k, text in enumerate(texts):
                filled = launchers.fill(text, value, job.replace)
                self._walk_text(filled, shell._replace(guess=shell.guess or guess), quiet=k > 0)

    def xargs_replaced(self, d: Draft, sub: list[Word], options: Sequence[str],
                       redirs: Sequence[ReadRedirect], run_ctx: Ctx) -> None:  # fmt: skip
        """`xargs -I R CMD`: CMD with R made each line xargs reads (or a guess of it)."""
        replace = launchers.replace_option(options)
        if replace is None or not launchers.has_placeholder(sub, replace):
            return
        for value, guess in _tagged([], self._fed(d, redirs)):
            filled = launchers.substitute(sub, value, replace)
            run = run_ctx._replace(guess=True) if guess else run_ctx
            self.emit(d.src, filled, [], filled[0].start, filled[-1].end, run)

    def _fed(self, d: Draft, redirs: Sequence[ReadRedirect]) -> list[str] | None:
        """The lines a command reads on stdin when the command shows them (a here-string or
        heredoc, `echo`/`printf` of literal words piped into it), else None."""
        text = nested.here_input([r.redirect for r in redirs], [r.body for r in redirs if r.body])
        if text is not None:
            return [line for line in text.splitlines() if line][: launchers.MAX_VALUES]
        stage = self._previous_stage(d)
        return launchers.echoed_lines(stage.words[stage.peel.program_index :]) if stage else None

    def _stdin_text(self, d: Draft, redirs: Sequence[ReadRedirect]) -> str | None:
        """The text a command reads on stdin, when the command shows it."""
        lines = self._fed(d, redirs)
        return "\n".join(lines) if lines is not None else None

    def _previous_stage(self, d: Draft) -> Draft | None:
        """The first command of the pipeline stage before `d`'s (None when `d` is not piped)."""
        ctx = d.ctx
        if ctx.pipe_id < 0 or ctx.pipe_index == 0:
            return None
        for other in reversed(self.drafts[: d.index]):
            if other.ctx.pipe_id == ctx.pipe_id and other.ctx.pipe_index == ctx.pipe_index - 1:
                first = other
                while first.index > 0:
                    prev = self.drafts[first.index - 1]
                    if (
                        prev.ctx.pipe_id != ctx.pipe_id
                        or prev.ctx.pipe_index != first.ctx.pipe_index
                    ):
                        break
                    first = prev
                return first
        return None


def _tagged(known: list[str], fed: list[str] | None) -> list[tuple[str, bool]]:
    """The values to try, each with whether it is a guess: the known ones, the fed lines, and
    "/" when what is fed is unknown."""
    out = [(v, False) for v in known]
    if fed is None:
        out.append((GUESS, True))
    else:
        out.extend((v, False) for v in fed)
    return out
