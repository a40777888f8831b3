"""Test factory for the policy tests: `Segment`/`CommandLine` objects built directly, no parser needed."""

from __future__ import annotations

from pathlib import Path

from rtk_policy.util import record

from rtk_policy.shell.model import CommandLine, Redirect, Segment


def seg(text: str, **fields: object) -> Segment:
    """A top-level, rewritable segment for `text` split on spaces; `fields` override anything."""
    words = text.split()
    argv = tuple(words)
    args = argv[1:]
    flags = tuple(a for a in args if a.startswith("-"))
    subcommand = next((a for a in args if not a.startswith("-")), "")
    base = Segment(
        index=0, text=text, start=0, end=len(text), program=argv[0].rsplit("/", 1)[-1] if argv else "",
        program_path=argv[0] if argv else "", argv=argv, args=args, raw_words=argv, subcommand=subcommand,
        flags=flags, env=(), wrappers=(), prefix="", command=text, suffix="", redirects=(), match_text=text,
        pipeline_index=0, pipeline_size=1, pipeline_before=(), pipeline_after=(), pipe_stderr=False,
        operator_before="", operator_after="", background=False, negated=False, depth=0, origin="top",
        parent=-1, dynamic_program=False, rewritable=True,
    )  # fmt: skip
    return record.evolve(base, **fields)


def line(*segments: Segment, **fields: object) -> CommandLine:
    """A command line of `segments` (re-indexed), joined by " && " unless `text` is given."""
    indexed = tuple(record.evolve(s, index=i) for i, s in enumerate(segments))
    base = CommandLine(
        text=" && ".join(s.text for s in segments), segments=indexed, parse_error=False,
        has_substitution=False, has_heredoc=False, has_here_string=False, has_file_redirect=False,
        unattestable=False, multiline=False, rewrite_refused=False, error="",
    )  # fmt: skip
    return record.evolve(base, **fields)


def redirect(op: str, target: str, fd: int = -1, is_file: bool = True) -> Redirect:
    """A redirect value."""
    return Redirect(op=op, fd=fd, target=target, is_file=is_file)


def write(folder: Path, name: str, text: str) -> str:
    """Write a policy file and return its path as a string."""
    path = folder / name
    path.write_text(text)
    return str(path)
