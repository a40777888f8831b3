"""When the deny re-check of a rewrite cannot change the decision, so it is not run.

`Engine.evaluate` re-checks a rewritten command: it parses the rewrite and runs the enforce-mode
deny rules on it, and a deny there denies the command (`decision.decide`); nothing else of the
re-check is used. `recheck_needed` is False only where that re-check provably finds no deny:

1. **The command is denied already.** `decide` ignores the re-check then.
2. **The rewrite only puts `rtk ` before programs**, and the deny rules cannot see it. The command
   parsed without a syntax error (the parser's recovery from one is not stable), every
   replaced segment's new text is its own with `rtk ` inserted before the program word
   (`prefix + "rtk " + rest`, where `rest` does not start with `-`, which `rtk` would take as its
   option, and `prefix` is empty or ends in a blank), each such segment is nested in no other
   (`parent == -1`: its words are no other segment's words), RTK's normalisation changed nothing
   (the rewrite is the plain splice), and no transparent prefix of the context holds the word
   `rtk`. The shell stage peels `rtk` as a plain wrapper, so parsing the rewrite gives the same
   segments, in the same order, with the same facts, except `VARYING`: the replaced segments'
   text, offsets, wrappers, prefix, match text and rewritability (a wrapper's operand `rtk`
   refuses it), the later segments' offsets, and the command's text (`tests/test_recheck.py`
   checks exactly this on every input of the corpus, the tests and RTK's cases, and on generated
   ones). `tool` counts as changed too: the paths a shell segment writes are read with the
   command's text (`policy/shell_paths.py`). If no enforce-mode deny rule tried on any segment's
   program reads one of those facts under the context (`PolicySet.deny_blind_to`), each
   re-checked segment gets the deny results its original got, and the original evaluation found
   none (else 1.).

Explain (`trace`) always runs the re-check: it is the reference the tests compare with.
"""

from __future__ import annotations

from rtk_policy.engine.rewrite import spliced
from rtk_policy.policy.functions_rtk import rtk_norm_begins_with

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rtk_policy.engine.rewrite import Replacements
    from rtk_policy.policy.model import Context, Evaluation
    from rtk_policy.policy.policyset import PolicySet
    from rtk_policy.shell.model import CommandLine

#: the segment fields that differ between a segment and the same segment with `rtk ` inserted
VARYING_FIELDS = (
    "text", "start", "end", "wrappers", "prefix", "match_text", "rewritable", "rewrite_refusal",
)  # fmt: skip
#: the read paths (`guards/reads.py`) that can see an `rtk ` insertion
VARYING = frozenset(
    {"segment", "segments", "command", "command.segments", "command.text", "tool"}
    | {f"segment.{name}" for name in VARYING_FIELDS}
    | {f"segments.{name}" for name in VARYING_FIELDS}
)


def recheck_needed(
    command_line: CommandLine,
    evaluation: Evaluation,
    changed: Replacements,
    rewrite: str,
    context: Context,
    policies: PolicySet,
) -> bool:
    """Whether the re-check of `rewrite` (made of the `changed` replacements) could deny."""
    if _denied(evaluation):
        return False
    if not _only_rtk_inserted(command_line, changed, rewrite, context):
        return True
    blind = policies.deny_blind_to
    planned = {
        (segment.program, not rtk_norm_begins_with(segment.command, segment.program))
        for segment in command_line.segments
    }  # each program as its segments are planned (`PolicySet.evaluate`)
    return not all(blind(VARYING, program, context, exact) for program, exact in planned)


def _denied(evaluation: Evaluation) -> bool:
    """An enforce-mode deny rule matched: the verdict is deny whatever the re-check finds."""
    for result in evaluation.results:
        for hit in result.permission_hits:
            if hit.rule.decision == "deny" and hit.rule.mode == "enforce":
                return True
    return False


def _only_rtk_inserted(
    command_line: CommandLine, changed: Replacements, rewrite: str, context: Context
) -> bool:
    """Every replacement is its segment with `rtk ` before the program word (see 2. above)."""
    if command_line.parse_error or any(
        "rtk" in prefix.split() for prefix in context.transparent_prefixes
    ):
        return False
    for segment, new in changed:
        prefix = segment.prefix
        rest = segment.text[len(prefix) :]
        if (
            segment.parent != -1
            or not segment.text.startswith(prefix)
            or (prefix and prefix[-1] not in " \t")
            or not rest
            or rest.startswith("-")
            or new != f"{prefix}rtk {rest}"
        ):
            return False
    return spliced(command_line.text, changed) == rewrite
