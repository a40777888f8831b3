"""Distinct commands for an honest throughput figure: seeded variants of the golden corpus.

A throughput run over the same 1,085 corpus commands again and again measures a memo as soon as
there is one. This makes COUNT commands no two alike (and none a corpus line) from the corpus by
varying what an agent varies: the paths, numbers and names of the arguments, an extra argument or
flag of the same program, and now and then a second command joined with `&&` or a pipe. The
program and its subcommand are kept, so the mix of programs, rewrites and denials stays the
corpus's. The same seed gives the same commands on every machine and Python version.

Usage: python benchmarks/unique_commands.py OUT.jsonl [--count 50000] [--seed 20]
(one `{"command": ...}` line each, as `rewrite --batch` reads them)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
#: a plain argument word (after a blank or `=`, not a redirect's fd): a path, a number, a name
_WORD = re.compile(r"(?<=[ =])[A-Za-z0-9_][A-Za-z0-9_./,:+@%-]*(?![<>A-Za-z0-9_./,:+@%-])")
#: where a command starts: after an operator, a parenthesis or a substitution
_STARTS = re.compile(r"\|\||&&|[|;&(){}`]|\$\(")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_FLAG = re.compile(r"(?<= )--?[A-Za-z][A-Za-z0-9-]*(?==[^ ]+| |$)")
_NAMES = ("app", "core", "api", "web", "util", "model", "test", "main", "lib", "cli", "db", "auth")
_EXTENSIONS = ("py", "ts", "rs", "go", "js", "md", "json", "yaml", "txt", "toml", "sh", "tsx")
_CONSUMERS = ("grep -n {name}", "head -{n}", "tail -n {n}", "wc -l", "sort", "grep -v {name}")
_SECONDS = ("git status", "ls -la {path}", "echo done {n}", "cat {path}", "git diff {path}")


def corpus() -> list[str]:
    """The golden corpus commands (tests/corpus/commands.txt), comments and blank lines left out."""
    path = os.path.join(ROOT, "tests", "corpus", "commands.txt")
    with open(path, encoding="utf-8") as handle:
        return [line.rstrip("\n") for line in handle if line.strip() and not line.startswith("#")]


def _path(rng: random.Random, like: str = "") -> str:
    """A path with `like`'s extension (a random one when it has none) and a fresh name."""
    name = like.rsplit("/", 1)[-1]
    extension = name.rsplit(".", 1)[1] if "." in name else rng.choice(_EXTENSIONS)
    folder = rng.choice(("src", "tests", "lib", "pkg", "docs", "app", "cmd", "internal"))
    return f"{folder}/{rng.choice(_NAMES)}_{rng.randrange(10_000)}.{extension}"


def _fill(template: str, rng: random.Random) -> str:
    return template.format(name=rng.choice(_NAMES), n=rng.randrange(1, 500), path=_path(rng))


def _vary_word(word: str, rng: random.Random) -> str:
    """Another word of the same kind: a number, a path, a name."""
    if word.isdigit():
        return str(rng.randrange(1, 10_000))
    if "/" in word or "." in word:
        return _path(rng, word)
    return f"{word}{rng.randrange(100)}"


def _flags_by_program(commands: list[str]) -> dict[str, list[str]]:
    """The flags each program is given somewhere in the corpus (what an agent might add)."""
    found: dict[str, set[str]] = {}
    for text in commands:
        words = text.split()
        if words:
            found.setdefault(words[0], set()).update(m.group() for m in _FLAG.finditer(text))
    return {program: sorted(flags) for program, flags in found.items() if flags}


def _is_head(text: str, at: int) -> bool:
    """Whether the word at `at` is a program or its subcommand (the first two words of a command
    after its assignments): those stay, so the variant runs what the corpus line runs."""
    starts = [m.end() for m in _STARTS.finditer(text, 0, at)]
    chunk = text[starts[-1] if starts else 0 : at]
    return len([w for w in chunk.split() if not _ASSIGNMENT.match(w)]) < 2


def variant(text: str, rng: random.Random, flags: dict[str, list[str]]) -> str:
    """One variant of a corpus command: its later arguments varied, or one added, maybe joined."""
    words = list(_WORD.finditer(text))
    later = [m for m in words if not _is_head(text, m.start())]
    if later and rng.random() < 0.7:
        chosen = rng.choice(later)
        text = text[: chosen.start()] + _vary_word(chosen.group(), rng) + text[chosen.end() :]
    else:
        program = text.split()[0] if text.split() else ""
        extra = flags.get(program)
        if extra and rng.random() < 0.4:
            text = f"{text} {rng.choice(extra)}"
        else:
            text = f"{text} {_path(rng)}"
    roll = rng.random()
    if roll < 0.08:
        text = f"{text} | {_fill(rng.choice(_CONSUMERS), rng)}"
    elif roll < 0.16:
        text = f"{text} && {_fill(rng.choice(_SECONDS), rng)}"
    return text


def unique_commands(count: int, seed: int) -> list[str]:
    """`count` distinct variants of the corpus commands, none of them a corpus line."""
    rng = random.Random(seed)
    commands = corpus()
    flags = _flags_by_program(commands)
    seen = set(commands)
    found: list[str] = []
    while len(found) < count:
        text = variant(rng.choice(commands), rng, flags)
        if text not in seen:
            seen.add(text)
            found.append(text)
    return found


def main() -> int:
    """Write the commands as `rewrite --batch` input lines."""
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--count", type=int, default=50_000)
    parser.add_argument("--seed", type=int, default=20)
    args = parser.parse_args()
    with open(args.out, "w", encoding="utf-8") as handle:
        for text in unique_commands(args.count, args.seed):
            handle.write(json.dumps({"command": text}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
