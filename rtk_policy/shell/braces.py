"""Bash's brace expansion of a word as typed: `{,/}` is "" and "/", `a{b,c}` is "ab" and "ac".

Only unquoted braces with a comma expand (sequences `{1..3}` are left as typed); expansions inside
`${…}` are skipped.
"""

from __future__ import annotations

from rtk_policy.shell.words import expansion_end

MAX_BRACES = 64  #: words one brace expansion may give


def has_braces(raw: str) -> bool:
    """Whether a word as typed holds an unquoted `{a,b}`."""
    return "{" in raw and "," in raw and _brace_at(raw) is not None


def _brace_at(raw: str) -> tuple[int, int, list[str]] | None:
    """The first unquoted `{a,b}` of a word: its span and its comma-separated parts."""
    quote = ""
    i, n = 0, len(raw)
    while i < n:
        c = raw[i]
        if quote:
            if c == quote:
                quote = ""
        elif c == "\\":
            i += 2
            continue
        elif c in "'\"":
            quote = c
        elif c == "$" and raw.startswith("${", i):
            i = expansion_end(raw, i)
            continue
        elif c == "{":
            found = _brace_parts(raw, i)
            if found is not None:
                return found
        i += 1
    return None


def _brace_parts(raw: str, i: int) -> tuple[int, int, list[str]] | None:
    depth, parts, start = 0, [], i + 1
    for j in range(i, len(raw)):
        c = raw[j]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                parts.append(raw[start:j])
                return (i, j + 1, parts) if len(parts) > 1 else None
        elif c == "," and depth == 1:
            parts.append(raw[start:j])
            start = j + 1
        elif c in "'\"\\ ":
            return None
    return None


def brace_expand(raw: str) -> list[str]:
    """Bash's brace expansion of a word as typed (`{,/}` → "", "/"), at most `MAX_BRACES`."""
    found = _brace_at(raw)
    if found is None:
        return [raw]
    start, end, parts = found
    out: list[str] = []
    for part in parts:
        for word in brace_expand(raw[:start] + part + raw[end:]):
            out.append(word)
            if len(out) >= MAX_BRACES:
                return out
    return out
