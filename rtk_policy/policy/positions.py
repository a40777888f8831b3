"""Mapping a position inside a YAML scalar's value back to a line and column of the YAML file."""

from __future__ import annotations

from typing import Any


def offset_in_value(value: str, line: int, col: int) -> int:
    """The character offset of 1-based (`line`, `col`) in `value`."""
    lines = value.split("\n")
    line = min(max(line, 1), len(lines))
    before = sum(len(text) + 1 for text in lines[: line - 1])
    return min(before + max(col, 1) - 1, len(value))


def locate(text: str, node: Any, offset: int) -> tuple[int, int]:
    """1-based (line, col) in the file `text` of character `offset` of scalar `node`'s value.

    Aligns the value with the raw source slice greedily, which skips quotes, escapes, block
    indentation and folded line breaks.
    """
    raw_start = node.start_mark.index
    raw = text[raw_start : node.end_mark.index]
    value = node.value
    ri = 0
    if node.style in ("|", ">"):
        ri = raw.find("\n") + 1 if "\n" in raw else 0
    elif node.style in ("'", '"'):
        ri = 1
    for vi in range(min(offset, len(value)) + 1):
        if vi == len(value):
            break
        ri = _advance(raw, ri, value[vi])
        if vi == offset:
            break
        ri += 1
    else:
        ri = min(ri, len(raw))
    absolute = raw_start + min(ri, len(raw))
    line = text.count("\n", 0, absolute) + 1
    col = absolute - (text.rfind("\n", 0, absolute) + 1) + 1
    return line, col


def _advance(raw: str, ri: int, char: str) -> int:
    """The index in `raw` at or after `ri` where `char` (or a whitespace for a whitespace)
    occurs."""
    for index in range(ri, len(raw)):
        found = raw[index]
        if found == char or (char in " \n" and found in " \n\t"):
            return index
    return ri
