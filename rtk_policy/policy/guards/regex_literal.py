"""`required_literal(pattern)`: text that every match of an RE2 pattern contains, a cheap pre-test.

A guard of `x.matches("…pytest…")` whose text lacks the literal `pytest` is `false` without
compiling or running the pattern. Only the top level of the pattern is read: a run of plain
characters outside any group, class or alternation, none of them repeated, must appear in every
match. Anything this reader is not sure of gives "" (no pre-test): flags and other `(?` groups,
`\\Q…\\E`, Unicode and POSIX classes, escapes that read on (`\\x41`, `\\101`), a top-level `|`,
repetitions of repetitions, unbalanced brackets. The pre-test is used only for patterns RE2 accepts
(`regex.known_valid`): an invalid pattern stays a CEL error.

`required_literals(pattern)` also reads a pattern that is one alternation (`a|b`, `^(a|b)$`,
`(?:a|b)`): every match is a match of one alternative, so it contains that alternative's required
literal (or, when longer, the literals of one of its mandatory groups), and the text holds one
of them; a literal holding another is left out. A class of one plain character (`[.]`) reads as that
character.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: escaped characters that stand for themselves
_ESCAPED = frozenset(".-/\\()[]{}*+?|^$ #&~,:;=!<>@%'\"`_")
_ESCAPES = {"t": "\t", "n": "\n"}
#: escapes of one character class, assertion or control character, which read nothing after them
_CLASS_ESCAPES = frozenset("dDsSwWbBAzfrva")
_QUANTIFIERS = frozenset("?*+{")
#: a required literal this short is worth replacing by a mandatory group's longer ones
SHORT = 3
_REFUSED = ("\\Q", "\\E", "\\p", "\\P", "[[:", "[^[:", "\\C")


def required_literal(pattern: str) -> str:
    """The longest run of literal text every match of `pattern` contains; "" when there is none or
    the pattern is outside what this reader understands."""
    if any(marker in pattern for marker in _REFUSED):
        return ""
    try:
        runs = _top_level_runs(pattern)
    except ValueError:
        return ""
    return max(runs, key=len, default="")


def required_literals(pattern: str) -> tuple[str, ...]:
    """Texts one of which every match of `pattern` contains: `(required_literal,)`, or, when that is
    shorter than `SHORT`, the literals of a mandatory group, or for a pattern that is one
    alternation the literals of each alternative; () when there is none, when an alternative has
    none, or when the pattern is outside what this reader understands."""
    literal = required_literal(pattern)
    if len(literal) >= SHORT or any(marker in pattern for marker in _REFUSED):
        return (literal,) if literal else ()
    try:
        alternatives = _alternatives(_unwrapped(pattern))
        if len(alternatives) == 1:  # no top-level `|`: a mandatory group's literals may do better
            return _alternative_literals(alternatives[0]) or ((literal,) if literal else ())
    except ValueError:
        return (literal,) if literal else ()
    found = [_alternative_literals(alternative) for alternative in alternatives]
    if len(found) < 2 or not all(found):
        return ()
    return _least(tuple(literal for literals in found for literal in literals))


def _alternative_literals(alternative: str) -> tuple[str, ...]:
    """Texts one of which every match of a pattern without a top-level `|` contains: its required
    literal, or when that is shorter than `SHORT` the literals of one of its mandatory groups
    whose shortest is longer (`[.](key|p12|pfx)$` gives `key`, `p12`, `pfx` rather than `.`,
    which nearly every path holds)."""
    literal = required_literal(alternative)
    if len(literal) < SHORT:
        try:
            grouped = _group_literals(alternative)
        except ValueError:
            grouped = ()
        if grouped and min(map(len, grouped)) > len(literal):
            return grouped
    return (literal,) if literal else ()


def _least(literals: tuple[str, ...]) -> tuple[str, ...]:
    """`literals` without repeats and without those holding another (a text without `.env` has
    no `.envrc`): the same texts hold one of them, tested with fewer searches."""
    unique = tuple(dict.fromkeys(literals))
    return tuple(a for a in unique if not any(b != a and b in a for b in unique))


def _group_literals(pattern: str) -> tuple[str, ...]:
    """The literals of the best top-level group that every match passes through (one neither
    repeated nor optional: `^(?:npx[ ]+)?(?:biome|eslint|lint)…` → `biome`, `lint`); () when none
    has any. A pattern with no top-level `|` matches each such group's body in every match, so
    one of the body's literals is in every match. Literals holding another are left out (a text
    without `lint` has no `eslint`)."""
    _top_level_runs(pattern)  # ValueError for what this reader refuses anywhere (flags, …)
    best: tuple[str, ...] = ()
    for body in _mandatory_groups(pattern):
        found = _least(required_literals(body))
        if found and (not best or min(map(len, found)) > min(map(len, best))):
            best = found
    return best


def _mandatory_groups(pattern: str) -> Any:
    """The bodies of the top-level groups of `pattern` not followed by a repetition."""
    depth, start = 0, 0
    for index, char in _structure(pattern):
        if char == "(":
            if depth == 0:
                start = index
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                if pattern[index + 1 : index + 2] not in _QUANTIFIERS:  # "" (the end) is not
                    group = pattern[start : index + 1]
                    yield group[3:-1] if group.startswith("(?:") else group[1:-1]


def _unwrapped(pattern: str) -> str:
    """`pattern` without a leading `^`, a trailing unescaped `$` (anchors match no text: every
    match of `^x$` is a match of `x`) and then one group around all of it (`(x)`, `(?:x)`)."""
    if pattern.startswith("^"):
        pattern = pattern[1:]
    if pattern.endswith("$") and not _escaped_at(pattern, len(pattern) - 1):
        pattern = pattern[:-1]
    if pattern.startswith("(") and _group_end(pattern) == len(pattern):
        if pattern.startswith("(?") and not pattern.startswith("(?:"):
            raise ValueError("a group with flags or a name")
        return pattern[3 if pattern.startswith("(?:") else 1 : -1]
    return pattern


def _escaped_at(pattern: str, at: int) -> bool:
    """True when the character at `at` follows an odd run of backslashes."""
    slashes = 0
    while at - slashes - 1 >= 0 and pattern[at - slashes - 1] == "\\":
        slashes += 1
    return slashes % 2 == 1


def _structure(pattern: str) -> Any:
    """(index, character) of each `(`, `)` and `|` of `pattern` outside escapes and classes."""
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if char == "[":
            index = _class_end(pattern, index)
            continue
        if char in "()|":
            yield index, char
        index += 1


def _group_end(pattern: str) -> int:
    """The index after the `)` closing the group that opens `pattern`."""
    depth = 0
    for index, char in _structure(pattern):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return index + 1
    raise ValueError("unbalanced (")


def _alternatives(pattern: str) -> list[str]:
    """`pattern` split at its top-level `|` (outside groups, classes and escapes)."""
    parts, start, depth = [], 0, 0
    for index, char in _structure(pattern):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth < 0:
                raise ValueError("unbalanced )")
        elif depth == 0:
            parts.append(pattern[start:index])
            start = index + 1
    if depth != 0:
        raise ValueError("unbalanced (")
    parts.append(pattern[start:])
    return parts


def _top_level_runs(pattern: str) -> list[str]:
    """The runs of mandatory literal characters at the top level; ValueError when unsure."""
    runs: list[str] = []
    current: list[str] = []
    depth, at, size = 0, 0, len(pattern)
    while at < size:
        char = pattern[at]
        if char == "(":
            if pattern.startswith("(?", at) and not pattern.startswith("(?:", at):
                raise ValueError("a group with flags or a name")
            at += 3 if pattern.startswith("(?:", at) else 1
            depth += 1
            runs.append("".join(current))
            current = []
            continue
        if char == ")":
            depth -= 1
            if depth < 0:
                raise ValueError("unbalanced )")
            at += 1
            if at < size and pattern[at] in _QUANTIFIERS:
                at = _skip_quantifier(pattern, at)
            continue
        if char == "|":
            if depth == 0:
                raise ValueError("a top-level alternation")
            at += 1
            continue
        literal, end = _atom(pattern, at)
        quantified = end < size and pattern[end] in _QUANTIFIERS
        if quantified:
            end = _skip_quantifier(pattern, end)
        if depth == 0:
            if literal is not None and not quantified:
                current.append(literal)
            else:
                runs.append("".join(current))
                current = []
        at = end
    if depth != 0:
        raise ValueError("unbalanced (")
    runs.append("".join(current))
    return runs


def _atom(pattern: str, at: int) -> tuple[str | None, int]:
    """The literal character at `at` (None for any other atom) and where the atom ends."""
    char = pattern[at]
    if char == "\\":
        if at + 1 >= len(pattern):
            raise ValueError("a trailing backslash")
        escaped = pattern[at + 1]
        if escaped in _ESCAPED:
            return escaped, at + 2
        if escaped in _ESCAPES:
            return _ESCAPES[escaped], at + 2
        if escaped in _CLASS_ESCAPES:
            return None, at + 2  # \d \s \w \b \A \z \f …: one character or none, not a plain one
        raise ValueError("an escape that may read on (\\x41, \\101, \\p{L} …)")
    if char == "[":
        end = _class_end(pattern, at)
        member = pattern[at + 1 : end - 1]
        if len(member) == 1 and member not in "^]\\-":  # `[.]`: exactly that character
            return member, end
        return None, end
    if char in ".^$":
        return None, at + 1
    if char in _QUANTIFIERS or char == "}":
        raise ValueError("a repetition without an atom")
    return char, at + 1


def _class_end(pattern: str, at: int) -> int:
    """The index after the `]` closing the class that opens at `at`."""
    index = at + 1
    if index < len(pattern) and pattern[index] == "^":
        index += 1
    if index < len(pattern) and pattern[index] == "]":
        index += 1  # a leading ] is a member
    while index < len(pattern):
        if pattern[index] == "\\":
            index += 2
            continue
        if pattern[index] == "]":
            return index + 1
        index += 1
    raise ValueError("an unclosed class")


def _skip_quantifier(pattern: str, at: int) -> int:
    """The index after the repetition at `at` (`?`, `*`, `+` or `{n,m}`, then an optional `?`)."""
    if pattern[at] == "{":
        close = pattern.find("}", at)
        body = pattern[at + 1 : close] if close > 0 else ""
        low, _, high = body.partition(",")
        if not low.isdigit() or (high and not high.isdigit()) or int(low) > 1000:
            raise ValueError("a brace that is not a repetition")
        if high and int(high) > 1000:
            raise ValueError("a repetition RE2 refuses")
        at = close + 1
    else:
        at += 1
    if at < len(pattern) and pattern[at] == "?":
        at += 1
    if at < len(pattern) and pattern[at] in _QUANTIFIERS:
        raise ValueError("a repetition of a repetition")
    return at
