"""RTK walker facts: whole-input refusals (§3.1–§3.2), per-line refusals (§3.3) and `rewritable`.

RTK rewrites each logical line independently. `refusal` says when RTK passes the whole input
through; `line_of` maps an offset to its logical line so that a refusal found on one line (an
extglob word, a group in a pipeline, `coproc`) only affects the commands of that line.
"""

from __future__ import annotations

from _bisect import bisect_right  # `bisect`'s own C functions, without its module
from collections.abc import Sequence

from rtk_policy.shell.draft import Draft
from rtk_policy.shell.scan import Scan
from rtk_policy.util.lazy_re import lazy

_CONTINUATION = lazy(globals(), "_CONTINUATION", r"[ \t\v\f]*\\\r?\n[ \t\v\f]*")
_BLOCK_START = lazy(
    globals(),
    "_BLOCK_START",
    r"(for|if|while|until|case|fi|done|esac)(?![^\s;&|()<>])|\(\(|\[\[|\]\]|[{}()]",
)
_CONT_OPS = ("&&", "||", "|&", "|")
_EXTGLOB = lazy(globals(), "_EXTGLOB", r"(?<![\\$])[@+*?!]\(")
_EMPTY_STAGE = lazy(globals(), "_EMPTY_STAGE", r"\|(?:&[ \t]*|[ \t]+)\|(?!\|)")


def join_continuations(text: str) -> str:
    """Collapse every backslash-newline (with blanks around it) into one space, as RTK does."""
    return _CONTINUATION.sub(" ", text) if "\\" in text else text


def physical_lines(text: str, sc: Scan) -> list[tuple[int, int]]:
    """The (start, end) offsets of each physical line (split at unquoted newlines)."""
    out, start = [], 0
    for b in sc.breaks:
        out.append((start, b))
        start = b + 1
    out.append((start, len(text)))
    return out


def whole_refusal(text: str, sc: Scan, parse_error: bool) -> str:
    """Why RTK passes the whole input through unchanged: `refusal`, else `malformed_pipeline`
    (continuations joined once for both)."""
    joined = join_continuations(text)
    return refusal(text, sc, joined) or malformed_pipeline(joined, parse_error)


def refusal(text: str, sc: Scan, joined: str) -> str:
    """Why RTK passes the whole input through unchanged ("" when it walks it); `joined` is
    `join_continuations(text)`."""
    if sc.heredoc:
        return "heredoc"
    if "$((" in joined:
        return "arithmetic $(("
    if not joined.strip(" \t\n"):
        return "empty"
    if sc.open_quote:
        return "unbalanced quote"
    if sc.breaks and _content_lines(text, sc) > 1:
        return _multiline_refusal(text, sc)
    return ""


def malformed_pipeline(joined: str, parse_error: bool) -> str:
    """`| grep X`, `cargo test |`, `cargo test | | grep X` (RTK passes these through); `joined`
    is the input with its continuations joined."""
    body = _strip_comment(joined.strip(" \t\n"))[0].strip(" \t\n")
    if body.startswith("|") or body.endswith(("|", "|&")) and not body.endswith("||"):
        return "malformed pipeline"
    if parse_error and _EMPTY_STAGE.search(body):
        return "malformed pipeline"
    return ""


def _content_lines(text: str, sc: Scan) -> int:
    """Number of physical lines with something besides blanks."""
    return sum(1 for s, e in physical_lines(text, sc) if text[s:e].strip())


def _strip_comment(line: str) -> tuple[str, bool]:
    """Cut an unquoted comment off a line (quotes were balanced by the caller's scan)."""
    if "#" not in line:
        return line, False
    quote = ""
    for k, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (k == 0 or line[k - 1] in " \t;&|()"):
            return line[:k], True
    return line, False


def _multiline_refusal(text: str, sc: Scan) -> str:
    """The §3.2 pass-through rules for input with several lines."""
    if sc.ansi_c_multiline_escape:
        return "ANSI-C string with an escaped quote spans lines"
    pending = False
    for s, e in physical_lines(text, sc):
        raw = text[s:e]
        body, had_comment = _strip_comment(raw)
        stripped = body.strip(" \t\r\v\f")
        if not stripped:
            if had_comment and pending:
                return "comment inside a continuation"
            continue
        if _BLOCK_START.match(stripped):
            return "block construct spans lines"
        if stripped[0] in "&|;":
            return "line starts with an operator"
        if _unbalanced(stripped):
            return "unbalanced brackets"
        pending = stripped.endswith(_CONT_OPS)
        if pending and had_comment:
            return "continuation operator followed by a comment"
    return ""


def _unbalanced(line: str) -> bool:
    """True when ( ) or { } do not balance on the line (outside quotes)."""
    paren = brace = 0
    quote = ""
    for ch in line:
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "(":
            paren += 1
        elif ch == ")":
            paren -= 1
        elif ch == "{":
            brace += 1
        elif ch == "}":
            brace -= 1
    return paren != 0 or brace != 0


def logical_line_starts(text: str, sc: Scan) -> list[int]:
    """Start offsets of logical lines: a line ending in && || | |& continues on the next one."""
    if not sc.breaks:
        return [0]  # one physical line
    starts: list[int] = []
    joining = False
    for s, e in physical_lines(text, sc):
        body = _strip_comment(text[s:e])[0].rstrip(" \t\r\v\f")
        if not joining:
            starts.append(s)
        if body:
            joining = body.endswith(_CONT_OPS)
    return starts


def line_of(starts: Sequence[int], offset: int) -> int:
    """Index of the logical line holding `offset`."""
    return max(0, bisect_right(starts, offset) - 1)


#: the characters that start an extglob group when a `(` follows: `@(a|b)`, `!(x)`
_EXTGLOB_HEADS = frozenset({"@", "+", "*", "?", "!"})


def draft_line_refusal(d: Draft) -> str:
    """Word text RTK's walker cannot place: an extglob, or ${x:-a b} in a pipeline (§3.3)."""
    span = d.src.text[d.start : d.end]
    last = d.words[-1] if d.words else None
    if last is not None and last.raw in _EXTGLOB_HEADS:
        if d.src.text[last.end : last.end + 1] == "(":  # `ls @(a|b)`: the command ends at `@`
            return "extglob word"
    if (
        "(" not in span
        and "${" not in span
        and (not d.lead_grammar or all("(" not in w.raw for w in d.lead_grammar))
    ):
        return ""  # neither check below can fire (a 1 MiB command costs no loop)
    words = d.lead_grammar + d.words
    for k, w in enumerate(words):
        if not w.quoted and "(" in w.raw and _EXTGLOB.search(w.raw):
            return "extglob word"
        if w.raw in _EXTGLOB_HEADS and k + 1 < len(words):
            nxt = words[k + 1]
            if nxt.start == w.end and nxt.raw.startswith("("):
                return "extglob word"
        if d.ctx.pipe_size > 1 and "${" in w.raw and any(ch in w.raw for ch in " \t"):
            return "expansion with blanks in a pipeline"
    return ""


def draft_refusal(d: Draft) -> str:
    """Why RTK's walker would not hand this command to the simple-command rewrite ("" if it would).

    Line and whole-input refusals are applied by the caller.
    """
    if d.src.base < 0:
        return "nested code"
    if d.no_rewrite:
        return d.no_rewrite
    if d.ctx.origin not in ("top", "subshell", "group"):
        return d.ctx.origin
    if d.peel.refused:
        return d.peel.refused
    words, i = d.words, d.peel.program_index
    if i >= len(words):
        return "no program"
    prog = words[i]
    if i and d.redirects and any(words[0].start < s < prog.start for _, s, _ in d.redirects):
        return "redirect inside the wrapper prefix"
    return ""
