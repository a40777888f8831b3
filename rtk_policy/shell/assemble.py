"""Put the stage together: walk the input, derive the `CommandLine` facts, freeze the segments."""

from __future__ import annotations

import gc
from collections.abc import Callable, Sequence

from rtk_policy.shell.draft import Ctx, Draft, stage_programs, to_segment
from rtk_policy.shell.model import CommandLine, Redirect
from rtk_policy.shell.plainpath import PlainCommand, commands, single_words
from rtk_policy.shell.simple import runs_code
from rtk_policy.shell.source import Source
from rtk_policy.shell.walk import (
    draft_line_refusal,
    draft_refusal,
    line_of,
    logical_line_starts,
    physical_lines,
    whole_refusal,
)
from rtk_policy.shell.words import Word, spelt_otherwise
from rtk_policy.shell.wrappers import peel, prefix_words
from rtk_policy.util import record
from rtk_policy.util.lazy_import import lazy_function

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rtk_policy.shell.expressions import coproc_body_end, mark_expressions
    from rtk_policy.shell.functions import mark_uncalled
    from rtk_policy.shell.parser import Walker
    from rtk_policy.shell.scan import Scan, plain_scan, scan
else:  # the parts of the stage a single plain command never needs (`_single`): on first use
    Walker = lazy_function(globals(), "Walker", "rtk_policy.shell.parser")  # the tree walker
    coproc_body_end = lazy_function(globals(), "coproc_body_end", "rtk_policy.shell.expressions")
    mark_expressions = lazy_function(globals(), "mark_expressions", "rtk_policy.shell.expressions")
    mark_uncalled = lazy_function(globals(), "mark_uncalled", "rtk_policy.shell.functions")
    plain_scan = lazy_function(globals(), "plain_scan", "rtk_policy.shell.scan")
    scan = lazy_function(globals(), "scan", "rtk_policy.shell.scan")


def parse_command_line(text: str, transparent_prefixes: Sequence[str] = ()) -> CommandLine:
    """Parse bash `text` into a `CommandLine`; never raises. The stage's entry point: the tree
    walker (`parser.Walker` and its parts) is imported when an input first needs it, never for a
    single plain command (`_single`), the commonest input."""
    return assemble(text, tuple(transparent_prefixes or ()), Walker)


def assemble(
    text: str, transparent: tuple[str, ...], walker_cls: Callable[..., Any]
) -> CommandLine:
    """Build the `CommandLine` for `text`; an internal failure is a parse error, not a raise."""
    if not isinstance(text, str):
        text = str(text)
    analysed = analysed_length(text)
    if analysed < len(text):
        return _too_large(text, analysed, transparent, walker_cls)
    gc_was_enabled = gc.isenabled()
    gc.disable()  # the walk allocates many short-lived objects and no cycles worth collecting
    try:
        return _assemble(text, transparent, walker_cls)
    except Exception as exc:  # noqa: BLE001 - the stage must never raise
        return _recovered(text, transparent, walker_cls, f"internal error: {type(exc).__name__}")
    finally:
        if gc_was_enabled:
            gc.enable()


#: Inputs longer than this are analysed only up to it, so the time per command stays bounded.
MAX_ANALYSED = 256 * 1024
#: At most this many `|` are analysed: tree-sitter-bash's error recovery in a long pipeline costs
#: time
#: and memory quadratic in its length (4,000 stages ending in `|`: 0.4 s and 235 MB; 65,536: > 24
#: GB).
MAX_PIPES = 1000


def analysed_length(text: str) -> int:
    """How much of `text` the parser is given: all of it, unless it is too long or too piped."""
    limit = min(len(text), MAX_ANALYSED)
    if text.count("|", 0, limit) < MAX_PIPES:
        return limit
    at = -1
    for _ in range(MAX_PIPES):
        at = text.find("|", at + 1, limit)
        if at < 0:
            return limit
    return at


def _too_large(
    text: str, analysed: int, transparent: tuple[str, ...], walker_cls: Callable[..., Any]
) -> CommandLine:
    """A best-effort `CommandLine` for an oversized input: its first `analysed` characters are
    parsed (their segments keep their offsets), and the whole is a parse error that nothing may
    allow or rewrite, so policies still see every command in that part and the rest is asked
    about."""
    head = assemble(text[:analysed], transparent, walker_cls)
    return record.evolve(
        head,
        text=text,
        parse_error=True,
        unattestable=True,
        rewrite_refused=True,
        error=f"input of {len(text)} characters is too large to analyse: "
        f"only the first {analysed} were (at most {MAX_ANALYSED} characters and {MAX_PIPES} pipes)",
    )


def _assemble(
    text: str, transparent: tuple[str, ...], walker_cls: Callable[..., Any]
) -> CommandLine:
    words = single_words(text)
    if words is not None:
        single = _single(text, words, transparent)
        if single is not None:
            return single
        cmds: list[PlainCommand] | None = [(words, [], "", "")]  # what `commands(text)` gives
    else:
        cmds = commands(text, not_single=True) if text.isascii() else None  # (a Source's is_ascii)
    walker = walker_cls(transparent)
    walker.walk_source(Source(text, 0), _TOP, cmds is None, cmds)
    if cmds is not None:
        plain = _plain(text, walker)
        if plain is not None:
            return plain
    sc = scan(text)
    mark_uncalled(walker, text)
    drafts: list[Draft] = walker.drafts
    errors = walker.errors
    refused = whole_refusal(text, sc, bool(errors))
    starts = logical_line_starts(text, sc)
    bad_lines, coproc_lines = _line_refusals(text, starts, walker)
    if len(starts) == 1 and bad_lines:
        refused = refused or next(iter(bad_lines.values()))
    pipes = stage_programs(drafts) if walker.pipe_ids else {}
    segments = tuple(
        [
            to_segment(d, pipes, _refusal(d, refused, starts, bad_lines, coproc_lines))
            for d in drafts
        ]
    )
    redirects = _verbatim_redirects(drafts, walker.compound_redirects)
    return _new_command_line(
        text,
        segments,
        bool(errors),
        sc.command_sub or sc.process_sub,
        *_redirect_facts(sc, redirects),
        bool(sc.breaks)
        and sum(1 for s, e in physical_lines(text, sc) if _has_command(text[s:e])) > 1,
        bool(refused),
        "; ".join(errors) if errors else "",
    )


_TOP = Ctx()  #: the context of the input's own commands


def _single(text: str, words: list[Word], transparent: tuple[str, ...]) -> CommandLine | None:
    """The `CommandLine` of the commonest input, one command of plain words (`words =
    single_words(text)`) that runs no nested code, built without the walk: its one draft is the
    one `Walker.emit` makes, and the scan and line analysis find nothing in such a text (no quote,
    expansion, operator, redirect, comment or line break), so no refusal but its own; None when it
    runs code."""
    p = peel(words, prefix_words(transparent))
    i = p.program_index
    program = p.program
    if p.split_string is not None or (
        program
        and (spelt_otherwise(words[i].value, program) or runs_code(program, words[i:], p.env))
    ):
        return None  # bash -c, eval, xargs …, `RM`: the walker walks what it runs
    d = Draft(Source(text, 0), words[0].start, words[-1].end, words, [], _TOP, p, [], False, "", 0)
    segment = to_segment(d, {}, _refusal(d, "", (0,), {}, {}))
    return _new_command_line(
        text, (segment,), False, False, False, False, False, False, False, False, ""
    )


_ONE_LINE = (0,)  #: `logical_line_starts` of a source without line breaks


def _plain(text: str, walker: Any) -> CommandLine | None:
    """The `CommandLine` of a plain source (`plainpath.commands(text)`: quoted words, `&&`, `||`,
    `;`, `|`, `2>&1`) that `walker` has walked (its drafts those of `plain_sequence`) when none of
    its commands runs code, without the rest of the stage: such a text scans as `plain_scan()`, is
    one line, has no syntax error and no file redirect, so only the whole-input and line refusals
    are left to find; None when a command runs code (or the walk found a problem): the rest of
    the stage then runs."""
    drafts: list[Draft] = walker.drafts
    if walker.runs_code or walker.errors or not drafts:
        return None
    refused = whole_refusal(text, plain_scan(), False)
    bad_lines, coproc_lines = _line_refusals(text, _ONE_LINE, walker)
    if bad_lines:
        refused = refused or next(iter(bad_lines.values()))
    pipes = stage_programs(drafts) if walker.pipe_ids else {}
    segments = tuple(
        [
            to_segment(d, pipes, _refusal(d, refused, _ONE_LINE, bad_lines, coproc_lines))
            for d in drafts
        ]
    )
    return _new_command_line(
        text, segments, False, False, False, False, False, False, False, bool(refused), ""
    )


def _line_refusals(
    text: str, starts: Sequence[int], walker: Any
) -> tuple[dict[int, str], dict[int, tuple[int, int]]]:
    """Per logical line: why RTK refuses it ({line: reason}) and the span of the body of its
    first `coproc` ({line: (start, end)}), whose commands are left as written."""
    bad: dict[int, str] = {}
    for off, why in walker.line_refusals:
        bad[line_of(starts, off)] = why
    coproc: dict[int, tuple[int, int]] = {}  #: line → (start, end) of its first coprocess body
    for off in walker.coproc_at:
        ln = line_of(starts, off)
        if ln not in coproc or off < coproc[ln][0]:
            coproc[ln] = (off, coproc_body_end(text, off))
    if "(" in text or "${" in text:  # else no verbatim draft can hold what draft_line_refusal seeks
        for d in walker.drafts:
            why = draft_line_refusal(d) if d.src.base >= 0 else ""
            if why:
                bad.setdefault(line_of(starts, d.src.absolute(d.start)), why)
    if "[[" in text or "((" in text or "for" in text or "select" in text:
        mark_expressions(text, starts, walker.drafts, bad)
    return bad, coproc



#: The `CommandLine` fields in the order `_assemble` passes them positionally (faster than
#: keywords); if the model's fields ever differ, `_new_command_line` takes keywords instead.
_FIELDS = (
    "text", "segments", "parse_error", "has_substitution", "has_heredoc", "has_here_string",
    "has_file_redirect", "unattestable", "multiline", "rewrite_refused", "error",
)  # fmt: skip
_POSITIONAL = tuple(f.name for f in record.fields(CommandLine)) == _FIELDS


def _command_line_by_keywords(*values: Any) -> CommandLine:
    """A `CommandLine` from its field values in `_FIELDS` order, passed as keywords."""
    return CommandLine(**dict(zip(_FIELDS, values, strict=True)))


_new_command_line = CommandLine if _POSITIONAL else _command_line_by_keywords


def _refusal(
    d: Draft,
    whole: str,
    starts: Sequence[int],
    bad: dict[int, str],
    coproc: dict[int, tuple[int, int]],
) -> str:
    """Why this segment is not rewritable ("" when it is): whole input, own rules, then its line."""
    if whole:
        return whole
    own = draft_refusal(d)
    if own or not (bad or coproc):
        return own or d.peel.inner_refused
    off = d.src.absolute(d.start)
    ln = line_of(starts, off)
    if ln in bad:
        return bad[ln]
    if ln in coproc and coproc[ln][0] <= off < coproc[ln][1]:
        return "in a coprocess"
    return d.peel.inner_refused


def _verbatim_redirects(
    drafts: Sequence[Draft], compound: Sequence[tuple[Redirect, int]]
) -> list[Redirect]:
    """Redirects typed in the input itself (not inside bash -c / eval text)."""
    out: list[Redirect] = []
    for d in drafts:
        if d.redirects and d.src.base >= 0:
            out.extend([r for r, _, _ in d.redirects])
    if compound:
        out.extend(r for r, _ in compound)
    return out


def _redirect_facts(sc: Scan, redirects: Sequence[Redirect]) -> tuple[bool, bool, bool, bool]:
    """`has_heredoc`, `has_here_string`, `has_file_redirect` and `unattestable` (RTK's
    contains_unattestable_construct, reference §4.6) of the input.

    A heredoc is a parsed << or <<- redirect, or an unquoted "<<" that no here-string explains.
    """
    unattestable = sc.command_sub or sc.arith or sc.process_sub or sc.ansi_c_divergence
    if not redirects:
        return sc.heredoc, False, False, unattestable
    ops = {r.op for r in redirects}
    heredoc = "<<" in ops or "<<-" in ops
    here_string = "<<<" in ops
    is_file = any(r.is_file for r in redirects)
    return (
        heredoc or (sc.heredoc and not here_string),
        here_string,
        is_file,
        unattestable or is_file or heredoc or here_string,
    )


def _has_command(line: str) -> bool:
    """A physical line with something other than blanks and a comment."""
    stripped = line.strip(" \t\r\v\f")
    return bool(stripped) and not stripped.startswith("#")


def _recovered(
    text: str, transparent: tuple[str, ...], walker_cls: Callable[..., Any], error: str
) -> CommandLine:
    """After an internal failure: the recovery lexer's segments alone, or none at all."""
    try:
        walker = walker_cls(transparent)
        walker.recover(Source(text, 0), Ctx(no_rewrite=error), 0)
        pipes = stage_programs(walker.drafts)
        segments = tuple(to_segment(d, pipes, error) for d in walker.drafts)
    except Exception:  # noqa: BLE001 - the stage must never raise
        segments = ()
    return record.evolve(_failed(text, error), segments=segments)


def _failed(text: str, error: str) -> CommandLine:
    """The CommandLine reported when the stage itself failed."""
    return CommandLine(
        text=text,
        segments=(),
        parse_error=True,
        has_substitution=False,
        has_heredoc=False,
        has_here_string=False,
        has_file_redirect=False,
        unattestable=True,
        multiline=False,
        rewrite_refused=True,
        error=error,
    )
