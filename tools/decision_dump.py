"""Every decision of the engine on a large, fixed set of inputs: the behaviour check for a refactor,
a speed-up or a port of a stage (run it at two commits and compare the files byte for byte).

Inputs: the golden corpus (`tests/corpus/commands.txt`), every string constant of the test files
(`tests/*.py`) and, when the file is there, RTK's public cases
(`../shared/reference/rtk_cases_public.json`), taken from the tree given by `--inputs` (default:
this checkout); each in 12 variants (wrappers, `bash -c`, a substitution, a line continuation, a
pipeline, a subshell). Two runs compare only when they read the same inputs: give both the same
`--inputs` tree, for example a checkout of the older commit.

Per input, three lines: the input, the decision (verdict, rewrite, rewritten, reasons, rule ids,
warnings, audit rule ids, gate, error), and per segment the rules tried, the rewrite rule and the
safe-consumer flag, with the evaluation errors. With `--shell`, the parse of each input under three
transparent-prefix settings instead (`repr` of the `CommandLine`).

The engine is the one the interpreter imports: run the tool with each install's Python (or with
`PYTHONPATH` set to each checkout).

`--no-claude-rules` decides without them (where a rewrite's deny re-check is skipped most often);
`--exclude ENTRY` (repeatable) decides under that `exclude_commands` entry.

Usage: python tools/decision_dump.py OUT [--inputs TREE] [--shell] [--no-claude-rules]
       [--exclude ENTRY ...]
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import sys
from collections.abc import Iterator

HERE = os.path.dirname(os.path.abspath(__file__))
#: the Claude permission rules of the decisions' context: each rule kind is exercised
CLAUDE_RULES = {
    "claude_allow": ("Bash(git status)", "Bash(ls:*)", "Bash(npm test:*)"),
    "claude_deny": ("Bash(rm -rf:*)", "Bash(curl:*)"),
    "claude_ask": ("Bash(git push:*)",),
}
#: transparent-prefix settings of the `--shell` dump
PREFIX_SETTINGS = ((), ("direnv exec .",), ("rtk", "noglob"))
LONGEST_CONSTANT = 4000


def _strings(value: object) -> Iterator[str]:
    """Every string inside a JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def base_inputs(tree: str) -> list[str]:
    """The distinct inputs of `tree`, in a stable order: corpus lines, RTK's cases, test strings."""
    seen: dict[str, None] = {}
    with open(os.path.join(tree, "tests", "corpus", "commands.txt"), encoding="utf-8") as handle:
        for line in handle:
            seen.setdefault(line.rstrip("\n"), None)
    cases = os.path.join(tree, "..", "shared", "reference", "rtk_cases_public.json")
    if os.path.exists(cases):
        with open(cases, encoding="utf-8") as handle:
            for text in _strings(json.load(handle)):
                seen.setdefault(text, None)
    tests = os.path.join(tree, "tests")
    for name in sorted(os.listdir(tests)):
        if name.endswith(".py"):
            with open(os.path.join(tests, name), encoding="utf-8") as handle:
                tree_of_file = ast.parse(handle.read())
            for node in ast.walk(tree_of_file):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    if len(node.value) < LONGEST_CONSTANT:
                        seen.setdefault(node.value, None)
    return list(seen)


def variants(text: str) -> Iterator[str]:
    """`text` as typed and in 11 settings a deny must survive."""
    yield text
    yield "sudo " + text
    yield "env A=1 " + text
    yield "timeout 5 " + text
    yield "rtk noglob " + text
    yield "direnv exec . " + text
    yield "bash -c '" + text.replace("'", "'\\''") + "'"
    yield 'echo "$(' + text + ')"'
    yield "x=$(" + text + ") && y"
    yield text.replace(" ", " \\\n  ", 2)
    yield text + " 2>&1 | tail -5"
    yield "( " + text + " ) ; " + text


def decision_records(
    inputs: list[str], claude_rules: bool = True, exclude: tuple[str, ...] = ()
) -> Iterator[str]:
    """The three lines of each input's decision, with the shipped policies of this checkout,
    under `CLAUDE_RULES` (or none: the context where a rewrite's re-check is most often skipped)
    and the `exclude_commands` entries `exclude`."""
    from rtk_policy.engine.pipeline import load_engine

    engine = load_engine(policy_paths=[os.path.join(HERE, "..", "policies")])
    engine.budget_s = None  # the same dump on any machine load (engine/budget.py)
    fields: dict[str, object] = dict(CLAUDE_RULES) if claude_rules else {}
    if exclude:
        fields["exclude_commands"] = list(exclude)
    context = engine.context(agent="claude", **fields)
    for text in inputs:
        outcome = engine.evaluate(text, context)
        d = outcome.decision
        tried = [
            (
                r.segment_index,
                [hit.rule.id for hit in r.tried],
                r.rewrite.rule.id if r.rewrite else None,
                r.safe_consumer,
            )
            for r in outcome.evaluation.results
        ]
        verdict = (d.verdict, d.rewrite, d.rewritten, d.reasons, d.rule_ids, d.warnings)
        yield f"{text!r}\n{(*verdict, d.audit_rule_ids, d.gate, d.error)!r}\n"
        yield f"{(tried, outcome.evaluation.errors)!r}\n"


def parse_records(inputs: list[str]) -> Iterator[str]:
    """The parse of each input under each transparent-prefix setting."""
    from rtk_policy.shell import parse

    for prefixes in PREFIX_SETTINGS:
        for text in inputs:
            yield f"{text!r}\n{parse(text, prefixes)!r}\n"


def main(argv: list[str] | None = None) -> int:
    """Write the dump; print how many inputs it holds."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="the file to write")
    parser.add_argument("--inputs", default=os.path.join(HERE, ".."), help="the tree of inputs")
    parser.add_argument("--shell", action="store_true", help="dump parses instead of decisions")
    parser.add_argument(
        "--no-claude-rules", action="store_true", help="decide without Claude Code rules"
    )
    parser.add_argument(
        "--exclude", action="append", default=[], metavar="ENTRY",
        help="an exclude_commands entry of the context (repeatable)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    inputs = [variant for text in base_inputs(args.inputs) for variant in variants(text)]
    if args.shell:
        records = parse_records(inputs)
    else:
        records = decision_records(inputs, not args.no_claude_rules, tuple(args.exclude))
    with open(args.out, "w", encoding="utf-8", errors="surrogateescape") as out:
        out.writelines(records)
    print(f"{len(inputs)} inputs", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
