"""The values the shell stage hands to the policy stage: a `CommandLine` made of `Segment`s.

Every field is plain data (str, int, bool, tuples, and one tuple of pairs for `env`) so that the
policy stage can turn a segment into CEL values without knowing anything about bash.
"""

from __future__ import annotations

from rtk_policy.util import record

#: Where a segment's code came from.
ORIGINS = (
    "top",  # a top-level simple command, also inside if/while/for/case bodies
    "subshell",  # ( ... )
    "group",  # { ...; }
    "substitution",  # $( ... ) or backticks
    "process_substitution",  # <( ... ) or >( ... )
    "shell_c",  # bash -c '...', sh -c, zsh -c, and a script fed by a here-string to a shell
    "eval",  # eval '...' of literal text
    "function",  # the body of a function definition
    "interpreter",  # what a script handed to python/node/ruby/perl/php/awk runs or deletes
)


@record.frozen(compile_after=record.PER_COMMAND)
class Redirect:
    """One redirection of a simple command, e.g. ``2>&1`` or ``> out.txt``."""

    op: str  #: the operator as typed: ">", ">>", "<", "&>", ">&", "<<", "<<<", "<>", ">|", ...
    fd: int  #: the file descriptor redirected (-1 when none was written and the default applies)
    target: str  #: the target word, dequoted ("" for a heredoc body); "&1" style dups keep the "&"
    is_file: bool  #: True when the target is a real file (not /dev/null, not an fd dup/close)


@record.frozen(compile_after=record.PER_COMMAND)
class Segment:
    """One simple command, after wrappers and prefixes are peeled.

    Text fields are slices of the source the segment was parsed from. For segments whose code lies
    verbatim in the input (``rewritable`` is True), ``start``/``end`` are offsets into
    `CommandLine.text` such that ``command_line.text[start:end] == text``.
    """

    index: int  #: position in `CommandLine.segments` (depth-first, source order)
    text: str  #: the whole simple command as typed, prefixes and redirects included
    start: int  #: offset of `text` in `CommandLine.text` (-1 if not verbatim, e.g. in bash -c)
    end: int  #: end offset of `text` in `CommandLine.text` (-1 when not verbatim)
    program: str  #: basename after unwrapping, dequoted ("rm" for "/bin/rm", '"rm"', r\m)
    program_path: str  #: the program word dequoted, path kept ("/bin/rm")
    argv: tuple[str, ...]  #: dequoted words from the program on (after wrappers)
    args: tuple[str, ...]  #: argv[1:]
    raw_words: tuple[str, ...]  #: the same words as typed (quotes kept)
    subcommand: str  #: first argument that is neither an option nor the value of one of the
    #: program's global options (`argv.GLOBAL_OPTIONS`: `kubectl -n prod delete` → "delete",
    #: `git -C repo push` → "push"); "" when none
    flags: tuple[str, ...]  #: arguments starting with "-" (up to a "--"), dequoted
    env: tuple[tuple[str, str], ...]  #: prefix NAME=value (also `env NAME=value`), in order
    wrappers: tuple[str, ...]  #: wrapper programs peeled, outermost first ("sudo", "timeout", ...)
    prefix: str  #: verbatim text before the program word: assignments, wrappers and options
    command: str  #: verbatim text from the program word to the last argument (no redirects)
    suffix: str  #: verbatim text after `command` (redirects, with the whitespace before them)
    redirects: tuple[Redirect, ...]  #: every redirection of the command, leading ones included
    match_text: str  #: what Claude Code Bash(...) patterns are matched against (reference §4.3):
    #: prefix words and command words as typed, every redirect (leading ones too) removed, and the
    #: grammar words { } ! ( ) dropped
    pipeline_index: int  #: 0-based stage in its pipeline
    pipeline_size: int  #: number of stages in its pipeline (1 when not piped)
    pipeline_before: tuple[str, ...]  #: programs of the earlier stages
    pipeline_after: tuple[str, ...]  #: programs of the later stages
    pipe_stderr: bool  #: the pipeline uses |& somewhere
    operator_before: str  #: "&&", "||", ";", "&", "|", "|&", "\n" or "" before this list item
    operator_after: str  #: the same, after it
    background: bool  #: the command runs in the background (&)
    negated: bool  #: preceded by "!"
    depth: int  #: 0 at top level; +1 per nesting (subshell, group, $( ), bash -c, eval, function)
    origin: str  #: one of ORIGINS
    parent: int  #: index of the segment this one is nested in (-1 when none, e.g. in a subshell)
    dynamic_program: bool  #: the program word is an expansion ($X, ${X}, $(...)): not attestable
    rewritable: bool  #: RTK's walker would consider this command for a rewrite (see shell/walk.py)
    rewrite_refusal: str = ""  #: why RTK would not rewrite it ("" when it would). Also set while
    #: rewritable stays True for "assignment after uv run": RTK then routes the whole command to
    #: `rtk uv run …` instead of rewriting the inner command
    guessed: bool = False  #: a value the command leaves unknown (what a runner reads from a pipe or
    #: a file, a variable set elsewhere) was taken as "/" in this copy of a command, to see what a
    #: deny rule would say of its worst case: a deny here is an ask, and nothing else counts
    cwd: str = ""  #: the folder the command runs in after the `cd`s before it in this input, from
    #: where the input started ("" unchanged, "..", "build", "/etc", "~"; "?" after a `cd` whose
    #: target is not known)
    operands: tuple[str, ...] = ()  #: the arguments after the subcommand that are not options
    #: (every one after `--`): ("HEAD", "file.txt") for `git checkout HEAD file.txt`
    copy_of: int = -1  #: the index of the command this segment is a copy of, with the values bash
    #: knows in its words (`x=/; rm -rf $x`, a function call's body), -1 for a command as typed
    paths: tuple[str, ...] = ()  #: where its operands (arguments that are not options) land from
    #: where the input started: `cwd` joined, `..` resolved, `$TMPDIR` as /tmp, `$HOME` as ~
    uncalled: bool = False  #: in the body of a function the input defines but never calls where
    #: the definition is visible (`shell/functions.py`): bash runs none of it here, so only a deny
    #: of it counts (a shell that lasts between calls could still run it later)


@record.frozen(compile_after=record.PER_COMMAND)
class CommandLine:
    """A whole bash input: the segments in it and facts about the input as a whole."""

    text: str  #: the input as given
    segments: tuple[Segment, ...]  #: every simple command, nested ones included, depth-first
    parse_error: bool  #: the parser found a syntax error; segments are best effort
    has_substitution: bool  #: $( ), backticks, <( ) or >( ) outside single quotes
    has_heredoc: bool  #: a << or <<- heredoc
    has_here_string: bool  #: a <<< here-string
    has_file_redirect: bool  #: a redirect to or from a real file
    unattestable: bool  #: RTK's contains_unattestable_construct (reference §4.6)
    multiline: bool  #: an unquoted newline separates commands
    rewrite_refused: bool  #: RTK refuses the whole input (heredoc, $((, multi-line constructs, ...)
    error: str  #: a human-readable parse problem, "" when none
