"""Write the commands the peers' public test suites label safe, read from their repositories, to a
folder outside this project (their cases are theirs: never commit the output).

    python benchmarks/peer_safe_cases.py OUT_DIR [--dcg GITDIR] [--safety-net GITDIR] [--dippy GITDIR]

Each GITDIR is a bare or full git directory of the peer (its HEAD is read with `git archive`):
- dcg (Dicklesworthstone/destructive_command_guard): every `[[case]]` of `tests/corpus/**/*.toml`
  whose `expected` / `expected_decision` is `allow` (input kind command);
- cc-safety-net (kenryu42/cc-safety-net): the literal first argument of every `assertAllowed(` in
  `tests/**/*.ts` (template literals with `${…}` are skipped);
- Dippy (ldayton/Dippy): every `("command", True)` pair in `tests/**/*.py` (approved commands),
  duplicates dropped.

Writes OUT_DIR/dcg.json, safety-net.json, dippy.json (JSON arrays of commands), the input of
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
    """dcg's corpus cases expected to be allowed."""
    found = []
    for text in files(gitdir, "tests/corpus", ".toml").values():
        for case in tomllib.loads(text).get("case", []):
            expected = case.get("expected") or case.get("expected_decision")
            if expected == "allow" and case.get("input_kind", "command") == "command":
                found.append(case["command"])
    return found


def safety_net_cases(gitdir: str) -> list[str]:
    """cc-safety-net's commands asserted allowed (literal strings only)."""
    found = []
    for text in files(gitdir, "tests", ".ts").values():
        for match in _ALLOWED.finditer(text):
            literal = match.group(1)
            if literal.startswith("`") and "${" in literal:
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
