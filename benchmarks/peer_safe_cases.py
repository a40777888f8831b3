"""Write the commands the peers' public test suites label safe, read from their repositories, to a
folder outside this project (their cases are theirs: never commit the output).

    python benchmarks/peer_safe_cases.py OUT [--dcg GITDIR] [--safety-net GITDIR] [--dippy GITDIR]

Each GITDIR is a bare or full git directory of the peer (its HEAD is read with `git archive`):
- dcg (Dicklesworthstone/destructive_command_guard): every `[[case]]` of `tests/corpus/**/*.toml`
  whose `expected` / `expected_decision` is `allow` (input kind command), except the cases dcg marks
  as waiting for a pack it has not written yet (a file named `future_*.toml`, or a description
  with `(future: …)`): those are allowed only because dcg does not cover them, not labelled safe;
- cc-safety-net (kenryu42/cc-safety-net): the literal first argument of every `assertAllowed(` in
  `tests/**/*.ts` (template literals with `${…}` are skipped), except those whose enclosing
  `test(…)` / `it(…)` body changes cc-safety-net's setup: it sets the process environment with
  `withEnv(` (where its modes live: SAFETY_NET_WORKTREE, _STRICT, _PARANOID…) or writes a custom
  config or rules fixture (a `write…Config(` call). Only the default setup's labels count;
- Dippy (ldayton/Dippy): every `("command", True)` pair in `tests/**/*.py` (approved commands),
  duplicates dropped.

Writes OUT/dcg.json, safety-net.json, dippy.json (JSON arrays of commands), the input of
`benchmarks/safe_asks.py`.
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import tomllib

_FUTURE = re.compile(r"\(future:")
_SETUP_CHANGE = re.compile(r"\bwithEnv\(|\bwrite\w*Config\(")
_TEST_CALL = re.compile(r"\b(?:test|it)(?:\.\w+)?\(")
_ALLOWED = re.compile(
    r"assertAllowed\(\s*('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|`(?:[^`\\]|\\.)*`)\s*[,)]", re.S
)


def files(gitdir: str, prefix: str, suffix: str) -> dict[str, str]:
    """The text of every file under `prefix` ending in `suffix` at the repository's HEAD."""
    done = subprocess.run(["git", "--git-dir", gitdir, "archive", "HEAD", prefix],
                          capture_output=True, check=True)  # fmt: skip
    out = {}
    with tarfile.open(fileobj=io.BytesIO(done.stdout)) as tar:
        for member in tar.getmembers():
            if member.isfile() and member.name.endswith(suffix):
                out[member.name] = tar.extractfile(member).read().decode("utf-8", "replace")
    return out


def dcg_cases(gitdir: str) -> list[str]:
    """dcg's corpus cases expected to be allowed (future packs' cases left out)."""
    found = []
    for name, text in files(gitdir, "tests/corpus", ".toml").items():
        if os.path.basename(name).startswith("future_"):
            continue
        for case in tomllib.loads(text).get("case", []):
            expected = case.get("expected") or case.get("expected_decision")
            command_kind = case.get("input_kind", "command") == "command"
            future = _FUTURE.search(case.get("description", ""))
            if expected == "allow" and command_kind and not future:
                found.append(case["command"])
    return found


def call_end(text: str, open_paren: int) -> int:
    """The index of the bracket closing the one at `open_paren` (string literals and line comments
    skipped; a rough TypeScript reader, enough for test files)."""
    depth, i = 0, open_paren
    while i < len(text):
        char = text[i]
        if char in "'\"`":
            i += 1
            while i < len(text) and text[i] != char:
                i += 2 if text[i] == "\\" else 1
        elif text.startswith("//", i):
            i = text.find("\n", i)
            if i < 0:
                return len(text)
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return len(text)


def changes_setup(text: str, tests: list[tuple[int, int]], at: int) -> bool:
    """Whether the innermost test body around offset `at` changes cc-safety-net's setup."""
    around = [span for span in tests if span[0] <= at <= span[1]]
    if not around:
        return False
    start, end = max(around)
    return bool(_SETUP_CHANGE.search(text, start, end))


def safety_net_cases(gitdir: str) -> list[str]:
    """cc-safety-net's commands asserted allowed in its default setup (literal strings only)."""
    found = []
    for text in files(gitdir, "tests", ".ts").values():
        tests = [(m.start(), call_end(text, m.end() - 1)) for m in _TEST_CALL.finditer(text)]
        for match in _ALLOWED.finditer(text):
            literal = match.group(1)
            if literal.startswith("`") and "${" in literal:
                continue
            if changes_setup(text, tests, match.start()):
                continue
            body = literal[1:-1]
            found.append(body.encode().decode("unicode_escape") if "\\" in body else body)
    return found


def dippy_cases(gitdir: str) -> list[str]:
    """Dippy's approved commands, each once."""
    found: dict[str, None] = {}
    for text in files(gitdir, "tests", ".py").values():
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Tuple) and len(node.elts) == 2:
                first, second = node.elts
                if (isinstance(first, ast.Constant) and isinstance(first.value, str)
                        and isinstance(second, ast.Constant) and second.value is True):  # fmt: skip
                    found[first.value] = None
    return list(found)


def main(argv: list[str] | None = None) -> int:
    """Extract and write; prints the count per peer."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--dcg")
    parser.add_argument("--safety-net")
    parser.add_argument("--dippy")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    for name, gitdir, read in (("dcg", args.dcg, dcg_cases),
                               ("safety-net", args.safety_net, safety_net_cases),
                               ("dippy", args.dippy, dippy_cases)):  # fmt: skip
        if not gitdir:
            continue
        cases = read(gitdir)
        with open(os.path.join(args.out, f"{name}.json"), "w", encoding="utf-8") as handle:
            json.dump(cases, handle)
        print(f"{name}: {len(cases)} safe cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
