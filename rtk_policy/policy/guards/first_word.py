"""Whether a regex can match a text that begins with a given word: the program tests hidden in
`rtk_norm(segment.command).matches(R)` (planning only, never on a cold hook's stored path).

RTK's rules test the normal form of a command (`functions_rtk.rtk_norm`) against a pattern
anchored at `^`: `^(?:npx[ \\t\\n]+)?vitest(?:[ \\t\\n]|$)`. When that form begins with the
segment's program followed by a blank or the end (`functions_rtk.rtk_norm_begins_with` tells it
from the text, at run time), a pattern that cannot match any such text is `false` for the
program, like a `segment.program` test (`specialize.py`).

`cannot_begin(pattern, word)` decides it on the pattern's parsed form (Python's `re._parser`):
a small simulation consumes `word` from the start of the text and asks whether a match can end
on the way, or a blank or the end of the text can follow. It over-approximates the language of
the pattern (`\\b` and repeat bounds are loosened, `.` matches everything, a case-insensitive
letter matches its other case and any non-ASCII letter), so `True` is a proof. Anything it does
not model answers `False`: unanchored patterns, multi-line mode, backreferences, lookarounds,
conditionals, atomic groups, RE2 syntax that Python reads otherwise (POSIX classes `[[:alpha:]]`,
`x{,n}`), and any pattern the engine that runs `matches` (`regex.py`: RE2, else `re`) rejects.
The simulation only ever reads ASCII characters (the word's and the three blanks), where RE2's
and Python's classes agree; both engines' `$` (the end, or before a final newline) are covered.
"""

from __future__ import annotations

import re
import re._constants as C  # type: ignore[import-not-found]  # noqa: N812 - as re._parser names them
import re._parser as parser  # type: ignore[import-not-found]  # no stubs: private, stable since 3.11
import warnings
from functools import lru_cache
from typing import Any

from rtk_policy.policy import regex

BLANKS = " \t\n"
#: words the simulation takes: printable ASCII without quotes, backslash, slash or blanks
#: (`rtk_norm_begins_with` relies on the same set)
_WORD = re.compile(r"[!#-&(-.0-\[\]-~]+")
#: pattern texts Python's parser reads otherwise than RE2 (POSIX classes, `{,n}`)
_DIVERGING = ("[:", "[=", "[.", "{,")
#: bounded repeats are unrolled up to this many copies; beyond, the bound is dropped
_UNROLL = 24
_ASCII_SPACE = " \t\n\r\f"
#: nodes of one pattern's automaton at most
_NODES = 20_000
#: moves remembered per pattern (a server meets arbitrary programs)
_MOVES = 4096


class _Unknown(Exception):
    """A construct the simulation does not model."""


@lru_cache(maxsize=4096)
def cannot_begin(pattern: str, word: str) -> bool:
    """True when `pattern` provably matches (searches) no text that begins with `word` followed
    by a blank (space, tab, newline) or the end; False when it may, or when unsure."""
    if not _WORD.fullmatch(word):
        return False
    machine = _machine(pattern)
    return machine is not None and not machine.may_begin(word)


@lru_cache(maxsize=256)
def _machine(pattern: str) -> _Machine | None:
    """The simulation of `pattern`, None when it cannot be modelled or does not compile."""
    if any(text in pattern for text in _DIVERGING) or not _compiles(pattern):
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parsed = parser.parse(pattern)
        flags = parsed.state.flags
        items = list(parsed)
        if flags & (C.SRE_FLAG_MULTILINE | C.SRE_FLAG_VERBOSE) or not items:
            return None
        if items[0] not in ((C.AT, C.AT_BEGINNING), (C.AT, C.AT_BEGINNING_STRING)):
            return None  # unanchored: a match may start anywhere
        machine = _Machine()
        machine.start = machine.sequence(items, bool(flags & C.SRE_FLAG_IGNORECASE), machine.ACCEPT)
        return machine
    except (_Unknown, re.error, RecursionError, TypeError, ValueError):
        return None


def _compiles(pattern: str) -> bool:
    """Whether the engine that runs `matches` compiles `pattern` (an invalid one is an error at
    run time, which must stay one)."""
    if regex.known_valid(pattern):
        return True
    try:
        regex.searcher(pattern)
    except Exception:  # noqa: BLE001 - any failure: the pattern is not modelled
        return False
    return True


class _Machine:
    """A nondeterministic automaton: nodes `("char", test, next)`, `("split", targets)`,
    `("begin", next)`, `("end", next)`, `("accept",)`; built backwards from the accept node."""

    ACCEPT = 0

    def __init__(self) -> None:
        self.nodes: list[Any] = [("accept",)]
        self.start = 0
        #: (states, character, last) → the closure reached (`_moved`)
        self._moves: dict[Any, frozenset[int] | None] = {}

    def add(self, node: Any) -> int:
        if len(self.nodes) >= _NODES:
            raise _Unknown("too large")  # nested repeats unrolled
        self.nodes.append(node)
        return len(self.nodes) - 1

    def sequence(self, items: Any, fold: bool, after: int) -> int:
        """The node that matches `items` then goes on to `after`."""
        for op, arg in reversed(list(items)):
            after = self.item(op, arg, fold, after)
        return after

    def item(self, op: Any, arg: Any, fold: bool, after: int) -> int:
        if op in (C.LITERAL, C.NOT_LITERAL, C.ANY, C.IN):
            return self.add(("char", _char_test(op, arg, fold), after))
        if op is C.AT:
            if arg in (C.AT_BEGINNING, C.AT_BEGINNING_STRING):
                return self.add(("begin", after))
            if arg in (C.AT_END, C.AT_END_STRING):
                return self.add(("end", after))
            if arg in (C.AT_BOUNDARY, C.AT_NON_BOUNDARY, C.AT_UNI_BOUNDARY, C.AT_UNI_NON_BOUNDARY):
                return after  # loosened: a boundary is taken to hold anywhere
            raise _Unknown(arg)
        if op is C.BRANCH:
            return self.add(("split", [self.sequence(alt, fold, after) for alt in arg[1]]))
        if op is C.SUBPATTERN:
            _, add, remove, body = arg
            if (add | remove) & ~(C.SRE_FLAG_IGNORECASE | C.SRE_FLAG_DOTALL):
                raise _Unknown(add | remove)
            if add & C.SRE_FLAG_IGNORECASE:
                fold = True
            elif remove & C.SRE_FLAG_IGNORECASE:
                fold = False
            return self.sequence(body, fold, after)
        if op in (C.MAX_REPEAT, C.MIN_REPEAT):
            return self.repeat(arg, fold, after)
        raise _Unknown(op)  # backreferences, lookarounds, conditionals, atomic, possessive

    def repeat(self, arg: Any, fold: bool, after: int) -> int:
        """`body{least,most}`, with `least` capped and a large `most` dropped (a superset)."""
        least, most, body = arg
        least = min(least, _UNROLL)
        if most is C.MAXREPEAT or most > _UNROLL:
            loop = self.add(("split", []))
            self.nodes[loop][1].extend([self.sequence(body, fold, loop), after])
            after = loop
        else:
            for _ in range(most - least):
                after = self.add(("split", [self.sequence(body, fold, after), after]))
        for _ in range(least):
            after = self.sequence(body, fold, after)
        return after

    def may_begin(self, word: str) -> bool:
        """Whether a match may end within `word` read from the start, or go on after it with a
        blank or at the end of the text."""
        states = self._moved(None, "", False)
        last = len(word) - 1
        for at, char in enumerate(word):
            if states is None:
                return True
            if not states:
                return False
            states = self._moved(states, char, at == last)
        if states is None:
            return True
        nodes = self.nodes
        return any(any(map(nodes[s][1], BLANKS)) for s in states)

    def _moved(self, states: frozenset[int] | None, char: str, last: bool) -> Any:
        """The closure after reading `char` in `states` (the start's closure for None), the
        end of the word just after it when `last`; remembered (words share their beginnings)."""
        key = (states, char, last)
        found = self._moves.get(key, self)
        if found is self:
            if states is None:  # position 0 of a word, which is never empty
                found = self._closure({self.start}, 0, 1)
            else:
                nodes = self.nodes
                moved = {nodes[s][2] for s in states if nodes[s][1](char)}
                found = self._closure(moved, 1, 1 if last else 2)
            if len(self._moves) >= _MOVES:
                self._moves.clear()
            self._moves[key] = found
        return found

    def _closure(self, states: set[int], at: int, length: int) -> frozenset[int] | None:
        """The nodes reachable without reading at position `at` of a text that holds `length`
        characters, then a blank or its end; None when the accept node is among them."""
        seen: set[int] = set()
        todo = list(states)
        while todo:
            state = todo.pop()
            if state in seen:
                continue
            seen.add(state)
            node = self.nodes[state]
            kind = node[0]
            if kind == "accept":
                return None
            if kind == "split":
                todo.extend(node[1])
            elif kind == "begin" and at == 0 or kind == "end" and at == length:
                todo.append(node[1])
        return frozenset(s for s in seen if self.nodes[s][0] == "char")


def _char_test(op: Any, arg: Any, fold: bool) -> Any:
    """A test that is True for every ASCII character the item may match (exact without `fold`)."""
    if op is C.ANY:
        return lambda char: True
    if op is C.LITERAL:
        if fold:
            return lambda char: arg > 127 or chr(arg).lower() == char.lower()
        return lambda char: ord(char) == arg
    if op is C.NOT_LITERAL:
        if fold:
            return lambda char: arg > 127 or chr(arg).lower() != char.lower()
        return lambda char: ord(char) != arg
    negated = bool(arg) and arg[0][0] is C.NEGATE
    members = [item for item in arg if item[0] is not C.NEGATE]
    for kind, _ in members:
        if kind not in (C.LITERAL, C.RANGE, C.CATEGORY):
            raise _Unknown(kind)
    wide = fold and any(_non_ascii(kind, value) for kind, value in members)

    def test(char: str) -> bool:
        inside = _member(members, char) or fold and _member(members, char.swapcase())
        return (not inside) if negated else (inside or wide)

    return test


def _non_ascii(kind: Any, value: Any) -> bool:
    """Whether a class member holds a non-ASCII character (one that may fold to an ASCII one)."""
    if kind is C.LITERAL:
        return value > 127
    if kind is C.RANGE:
        return value[1] > 127
    return False


def _member(members: list[Any], char: str) -> bool:
    """Whether the ASCII `char` is in the class made of `members` (exact, as RE2 and `re` read
    ASCII characters)."""
    code = ord(char)
    for kind, value in members:
        if kind is C.LITERAL and value == code:
            return True
        if kind is C.RANGE and value[0] <= code <= value[1]:
            return True
        if kind is C.CATEGORY and _in_category(value, char):
            return True
    return False


def _in_category(category: Any, char: str) -> bool:
    if category in (C.CATEGORY_DIGIT, C.CATEGORY_UNI_DIGIT):
        return char.isdigit()
    if category in (C.CATEGORY_NOT_DIGIT, C.CATEGORY_UNI_NOT_DIGIT):
        return not char.isdigit()
    if category in (C.CATEGORY_SPACE, C.CATEGORY_UNI_SPACE):
        return char in _ASCII_SPACE
    if category in (C.CATEGORY_NOT_SPACE, C.CATEGORY_UNI_NOT_SPACE):
        return char not in _ASCII_SPACE
    if category in (C.CATEGORY_WORD, C.CATEGORY_UNI_WORD):
        return char.isalnum() or char == "_"
    if category in (C.CATEGORY_NOT_WORD, C.CATEGORY_UNI_NOT_WORD):
        return not (char.isalnum() or char == "_")
    raise _Unknown(category)
