"""A piece of bash source handed to tree-sitter: the text, its bytes, and byte→str offset mapping.

tree-sitter reports byte offsets into UTF-8. Text that is not valid Unicode (lone surrogates from
``surrogateescape``) is encoded with ``surrogatepass`` so that every code point keeps a fixed byte
length and the mapping stays exact.
"""

from __future__ import annotations

from _bisect import bisect_right  # `bisect`'s own C functions, without its module

from rtk_policy.util.lazy_re import lazy

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_NON_ASCII = lazy(globals(), "_NON_ASCII", r"[^\x00-\x7f]")
#: A character above U+00FF where tree-sitter-bash 0.25's brace-range scanner (`{1..2}`) passes the
#: lookahead to `isdigit`, a table lookup meant for bytes: it can crash (a segfault, at random, more
#: often the higher the code point). It is parsed as Latin-1 letters of the same UTF-8 length, so
#: byte offsets are unchanged.
_AFTER_BRACE = lazy(globals(), "_AFTER_BRACE", "(\\{[0-9]*(?:\\.\\.[0-9]*)?)([^\x00-\xff])")
_SAFE = {2: "\u00e9", 3: "\u00e9x", 4: "\u00e9\u00e9"}
#: A heredoc whose body starts with a backslash (`cat <<EOF⏎\ls⏎EOF`): tree-sitter-bash 0.25
#: reads the backslash as escaping the newline before it, so the body becomes words and the
#: terminator a command. It is parsed with a blank in the backslash's place (the body's text is
#: read from `text`, which keeps it).
_HEREDOC_BACKSLASH = lazy(
    globals(), "_HEREDOC_BACKSLASH", rb"<<-?[ \t]*(['\"]?)[A-Za-z0-9_.-]+\1[^\n]*\n(\\)"
)
_LANGUAGE: Any = None  #: the tree-sitter bash language, loaded on first use
#: parsers not parsing now: a parse releases the GIL, and one parser is never given two texts at
#: once (whether or not a tree-sitter version would lock it), so each parse takes one (a new one
#: when all are busy: the resident server's threads) and puts it back
_IDLE: list[Any] = []
_NONE: frozenset[int] = frozenset()


def parse_tree(data: bytes) -> Any:
    """tree-sitter-bash's tree of `data`, parsed by an idle parser."""
    try:
        parser = _IDLE.pop()
    except IndexError:
        parser = _new_parser()
    try:
        return parser.parse(data)
    finally:
        _IDLE.append(parser)


def _new_parser() -> Any:
    global _LANGUAGE
    import tree_sitter

    if _LANGUAGE is None:
        _LANGUAGE = tree_sitter.Language(_bash_language())
    return tree_sitter.Parser(_LANGUAGE)


def _bash_language() -> Any:
    """`tree_sitter_bash.language()`, loading only the compiled binding when possible.

    The package's `__init__` imports `importlib.resources` (and with it tempfile, shutil, bz2, lzma,
    random) for a query file we never read: a few milliseconds on every cold hook.
    """
    try:
        import importlib.machinery
        import importlib.util

        spec = importlib.util.find_spec("tree_sitter_bash")
        folder = (spec.submodule_search_locations or [""])[0] if spec else ""
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = f"{folder}/_binding{suffix}"
            binding = importlib.util.spec_from_file_location("tree_sitter_bash._binding", path)
            if folder and binding is not None and binding.loader is not None:
                import os

                if os.path.exists(path):
                    module = importlib.util.module_from_spec(binding)
                    binding.loader.exec_module(module)
                    return module.language()
    except Exception:  # noqa: BLE001 - fall back to the package's own import
        pass
    import tree_sitter_bash

    return tree_sitter_bash.language()


class Source:
    """Bash text plus where it sits in the whole input (`base`, -1 when not verbatim)."""

    __slots__ = (
        "is_ascii",
        "text",
        "data",
        "parse_data",
        "negated_at",
        "coproc_at",
        "base",
        "has_cr",
        "has_newline",
        "_marks",
        "_extra",
    )

    def __init__(self, text: str, base: int) -> None:
        self.text = text
        self.base = base
        self.has_cr = "\r" in text
        self.has_newline = "\n" in text
        self.data = text.encode("utf-8", "surrogatepass")
        #: what tree-sitter reads, byte for byte as long as `data` (see _HIGH and shell/reserved.py)
        self.parse_data = self.data
        self.negated_at = _NONE  #: byte starts of statements after a blanked !
        self.coproc_at = _NONE  #: byte starts of blanked `coproc` words (reserved.py)
        if "\n\\" in text and "<<" in text:
            self.parse_data = _HEREDOC_BACKSLASH.sub(_blank_backslash, self.data)
        if "``" in text:
            self.parse_data = _spelt_empty_backticks(self.parse_data)
        self.is_ascii = len(self.data) == len(text)  #: byte offsets are str offsets
        self._marks: list[int] | tuple[()] = ()  # byte offsets just after each non-ASCII char
        self._extra: list[int] | tuple[()] = ()  # cumulative extra bytes up to and including it
        if not self.is_ascii:
            self._map_offsets()

    def _map_offsets(self) -> None:
        """Record where each non-ASCII character ends in `data` (and make `parse_data` safe)."""
        text = self.text
        if "{" in text and _AFTER_BRACE.search(text):
            safe = _AFTER_BRACE.sub(lambda m: m[1] + _SAFE[_width(ord(m[2]))], text)
            self.parse_data = safe.encode("utf-8", "surrogatepass")
        marks: list[int] = []
        extras: list[int] = []
        extra = 0
        for m in _NON_ASCII.finditer(text):
            width = _width(ord(m.group(0)))
            pos = m.start() + extra
            extra += width - 1
            marks.append(pos + width)
            extras.append(extra)
        self._marks, self._extra = marks, extras

    def parse(self) -> Any:
        """Parse with tree-sitter and return the root node."""
        return parse_tree(self.parse_data).root_node

    def char(self, byte_offset: int) -> int:
        """Convert a byte offset (at a character boundary) into a str offset."""
        if not self._marks:
            return byte_offset
        k = bisect_right(self._marks, byte_offset)
        return byte_offset - (self._extra[k - 1] if k else 0)

    def span(self, node: Any) -> tuple[int, int]:
        """Return the (start, end) str offsets of a tree-sitter node."""
        return self.char(node.start_byte), self.char(node.end_byte)

    def slice(self, node: Any) -> str:
        """Return the text of a tree-sitter node."""
        s, e = self.span(node)
        return self.text[s:e]

    def absolute(self, offset: int) -> int:
        """Map an offset in this source to the whole input, -1 when this source is not verbatim."""
        return -1 if self.base < 0 else self.base + offset


def _blank_backslash(m: Any) -> bytes:
    """The match of `_HEREDOC_BACKSLASH` with its backslash made a blank (the same length)."""
    return m.group(0)[:-1] + b" "


_SEPARATORS = frozenset(b" \t\n;&|()<>")
_BACKSLASH, _BACKTICK, _SINGLE, _DOUBLE = b"\\`'\""


def _spelt_empty_backticks(data: bytes) -> bytes:
    """`data` with each empty backtick substitution (`` `` ``: bash runs nothing and expands it to
    nothing) spelt as tree-sitter-bash 0.25 reads it right (it reads `` ``rm `` as an error): `""`
    inside a word or a "…", two blanks where it is a word of its own. Same length; quotes,
    escapes, comments and other substitutions are skipped as bash reads them."""
    out = bytearray(data)
    i, n, double = 0, len(data), False
    opened: list[bool | None] = []  # per open `$(`: whether a "…" holds it; None for a `(`
    while i < n:
        c = data[i]
        if c == _BACKSLASH:
            i += 2
        elif c == _SINGLE and not double:
            i = _after_single(data, i)
        elif c == _DOUBLE:
            double = not double
            i += 1
        elif c == ord("(") and (not double or data[i - 1 : i] == b"$"):
            opened.append(double if data[i - 1 : i] == b"$" else None)
            double = False  # the code of `$(…)` is read afresh, quotes and all
            i += 1
        elif c == ord(")") and opened and not double:
            held = opened.pop()
            double = bool(held)
            i += 1
        elif c == _BACKTICK and data[i + 1 : i + 2] == b"`":
            alone = not double and (i == 0 or data[i - 1] in _SEPARATORS) and (
                i + 2 >= n or data[i + 2] in _SEPARATORS
            )
            out[i : i + 2] = b"  " if alone else b'""'
            i += 2
        elif c == _BACKTICK:  # a substitution: to its closing backtick
            i += 1
            while i < n and data[i] != _BACKTICK:
                i += 2 if data[i] == _BACKSLASH else 1
            i += 1
        elif c == ord("#") and not double and (i == 0 or data[i - 1] in _SEPARATORS):
            end = data.find(b"\n", i)
            i = n if end < 0 else end
        else:
            i += 1
    return bytes(out)


def _after_single(data: bytes, i: int) -> int:
    """The index after the '…' (or $'…', whose backslashes escape) that starts at `i`."""
    ansi = i > 0 and data[i - 1] == ord("$")
    j = i + 1
    while j < len(data) and data[j] != _SINGLE:
        j += 2 if ansi and data[j] == _BACKSLASH else 1
    return j + 1


def _width(cp: int) -> int:
    """UTF-8 length of a non-ASCII code point (surrogates take 3 bytes with surrogatepass)."""
    return 2 if cp < 0x800 else 3 if cp < 0x10000 else 4
