"""First-match classes of the differences benchmarks/rtk_oracle.py finds, each named by the
reference
section that decides it: "b" RTK 1.1.0 departs from the reference (ours follows it), "c" the
reference
is silent, "design" our shipped security packs."""

from __future__ import annotations

import functools
import json
import re
import subprocess

from rtk_oracle_set import PUBLIC

_OPS = re.compile(r"\s*(;;|&&|\|\||\|&|[;&|])\s*")


def _respaced(text: str) -> str:
    return _OPS.sub(r" \1 ", text).strip()


#: (class, test of (cmd, rtk answer, our answer)), first match wins. "b": RTK 1.1.0 differs from the
#: reference (ours follows it); "design": our shipped security packs; "c": the reference is silent.
CLASSES: tuple[tuple[str, object], ...] = (
    (
        "design: security pack asked or denied",
        lambda c, t, o: o[0] == 2 or (o[0] == 3 and o[1] == c),
    ),
    ("b §3.5 step 9 CR/FF/NBSP are word bytes", lambda c, t, o: re.search("[\r\f\v\u00a0]", c)),
    (
        "b §3.3 separators kept byte for byte",
        lambda c, t, o: t[0] == o[0] and t[1] != o[1] and _respaced(t[1]) == _respaced(o[1]),
    ),
    (
        "b §3.2 newlines kept",
        lambda c, t, o: (
            "\n" in c and t[0] == o[0] and " ".join(t[1].split()) == " ".join(o[1].split())
        ),
    ),
    ("b §3.5 step 7 bash/sh -c not rewritten", lambda c, t, o: re.search(r"\b(ba|z)?sh -c\b", c)),
    (
        "b §3.3 compounds, subshells and reserved words walked",
        lambda c, t, o: (
            t[0] == 1
            and o[0] == 3
            and re.search(r"(^|[;&|(]\s*)(if|while|until|for|case|\(|\[\[|\(\()|\besac\b", c)
        ),
    ),
    (
        "b §3.5 step 1 env options / += assignments kept",
        lambda c, t, o: t[0] == 1 and re.search(r"\benv -|\+=", c),
    ),
    ("b/c §3.3 `!` not stepped over", lambda c, t, o: re.search(r"(^|[;&|]\s*)! ", c)),
    (
        "b public RTK test expects our answer",
        lambda c, t, o: _public_expected(c) in (o[1] or None,),
    ),
    (
        "b §3.9 subcommand outside the rule table",
        lambda c, t, o: (
            t[0] == 3 and o[0] == 1 and re.search(r"dotnet build-server|mvn [\w-]+:\w", c)
        ),
    ),
    (
        "b §3.5 step 4 assignment after a wrapper refuses",
        lambda c, t, o: (
            t[0] == 3
            and o[0] == 1
            and re.search(r"\b(timeout \S+|nice|exec|noglob|uv run) +\w+\+?=", c)
        ),
    ),
    (
        "c §3.5 step 12 TOML-filter program set (1.1.0 vs newest)",
        lambda c, t, o: any((f"rtk {p}" in t[1]) != (f"rtk {p}" in o[1]) for p in _FILTERED),
    ),
    ("c bash syntax error (bash -n)", lambda c, t, o: not _bash_parses(c)),
)


#: programs whose TOML output filter exists in one of RTK 1.1.0 and our list
#: (policies/rtk-rewrite.yaml)
_FILTERED = (
    "ssh",
    "stat",
    "turbo",
    "bats",
    "bazel",
    "az",
    "journalctl",
    "jj",
    "jq",
    "just",
    "mise",
    "nx",
    "gitleaks",
    "ollama",
    "conda",
    "argocd",
    "gsutil",
    "pandoc",
    "eza",
    "expo",
    "adb",
)


@functools.cache
def _public_cases() -> dict[str, str | None]:
    if not PUBLIC.is_file():
        return {}
    data = json.loads(PUBLIC.read_text(encoding="utf-8"))
    return {
        c["cmd"]: c["expected"]
        for c in data["rewrite"]
        if c.get("layer") == "registry"
        and not c.get("excluded")
        and not c.get("transparent_prefixes")
    }


def _public_expected(cmd: str) -> object:
    return _public_cases().get(cmd, "<absent>")


def _bash_parses(cmd: str) -> bool:
    return subprocess.run(["bash", "-n", "-c", cmd], capture_output=True).returncode == 0


def classify(cmd: str, theirs: tuple[int, str], ours: tuple[int, str]) -> str:
    """The first class of CLASSES a difference falls in, or "unclassified"."""
    for name, test in CLASSES:
        if test(cmd, theirs, ours):  # type: ignore[operator]
            return name
    return "unclassified"
