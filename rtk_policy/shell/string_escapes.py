"""The escapes of the string literals the interpreter readers take from a script (shell/scripts.py).

Two families, one decoder each:

* C-style escapes, which awk strings, Python and JavaScript strings and the double-quoted (and
  backquoted) strings of Perl, Ruby and PHP decode: `\\xHH` (one or two hex digits; `\\x{H…}`),
  octal `\\NNN` (one to three digits), `\\uHHHH`, `\\u{H…}`, `\\UHHHHHHHH`, the letters
  `\\n \\t \\r \\a \\b \\f \\v \\e`, and a backslash before any other character stands for it
  (Python keeps the backslash of an escape it does not know).
* Quote-only escapes, the single-quoted strings of Perl, Ruby and PHP: `\\\\` and `\\'` only.

So `system("rm\\x20-rf\\x20/")` is read as `rm -rf /`, as awk, python, perl, node and ruby run it.
"""

from __future__ import annotations

_LETTERS = {
    "n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v", "e": "\x1b",
}  # fmt: skip
_HEX = "0123456789abcdefABCDEF"
_UNICODE_WIDTH = {"u": 4, "U": 8}
#: the languages whose single-quoted strings decode only \\ and \'
_QUOTE_ONLY_SINGLE = frozenset({"pl", "rb", "php"})


def decode(body: str, lang: str, quote: str, raw: bool = False) -> str:
    """The value of a string literal's `body` (the text between its quotes) in `lang` ("py",
    "js", "rb", "pl", "php", "awk"), quoted with `quote`; `raw`: a Python r-string (no escapes)."""
    if raw or "\\" not in body:
        return body
    if quote == "'" and lang in _QUOTE_ONLY_SINGLE:
        return quote_only(body)
    return c_style(body, keep_unknown=lang == "py")


def quote_only(body: str) -> str:
    """A single-quoted Perl/Ruby/PHP string's value: `\\\\` is a backslash, `\\'` a quote."""
    out: list[str] = []
    i, n = 0, len(body)
    while i < n:
        if body[i] == "\\" and i + 1 < n and body[i + 1] in "\\'":
            out.append(body[i + 1])
            i += 2
            continue
        out.append(body[i])
        i += 1
    return "".join(out)


def c_style(body: str, keep_unknown: bool = False) -> str:
    """A string's value under C-style escapes (see the module's docstring); `keep_unknown`: an
    escape of a character without a meaning keeps its backslash (Python's rule)."""
    out: list[str] = []
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if c != "\\" or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        text, i = _escape(body, i + 1, keep_unknown)
        out.append(text)
    return "".join(out)


def _escape(body: str, at: int, keep_unknown: bool) -> tuple[str, int]:
    """The character(s) of the escape whose letter is at `at`, and the index after it."""
    e = body[at]
    if e in _LETTERS:
        return _LETTERS[e], at + 1
    if e in "01234567":
        end = at + 1
        while end < min(at + 3, len(body)) and body[end] in "01234567":
            end += 1
        return chr(int(body[at:end], 8) & 0xFF), end
    if e == "x" or e in _UNICODE_WIDTH:
        if body.startswith("{", at + 1) and "}" in body[at + 2 :]:
            close = body.index("}", at + 2)
            return _char(body[at + 2 : close]) or body[at : close + 1], close + 1
        width = 2 if e == "x" else _UNICODE_WIDTH[e]
        end = at + 1
        while end < min(at + 1 + width, len(body)) and body[end] in _HEX:
            end += 1
        if end > at + 1:
            return _char(body[at + 1 : end]) or body[at:end], end
    if keep_unknown and e not in "\\'\"\n":
        return "\\" + e, at + 1
    return ("" if e == "\n" else e), at + 1


def _char(digits: str) -> str:
    """The character of a hex code point ("" when it is not one)."""
    try:
        return chr(int(digits, 16))
    except ValueError:
        return ""
