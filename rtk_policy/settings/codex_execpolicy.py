"""A reader of Codex execpolicy `.rules` files: the subset of Starlark rule files are written in.

Codex 0.169 (`codex-rs/execpolicy`, the `codex execpolicy check` command; builtins named in the
binary: `prefix_rule`, `host_executable`, `network_rule`) evaluates a `.rules` file as Starlark.
We read, without running anything, a file that is a sequence of calls of those builtins with
literal arguments: strings ("…", '…', triple-quoted, with escapes), lists, `True`/`False`/`None`,
and comments. `prefix_rule(pattern=[…], decision=…)` (also positional: pattern, decision) gives a
rule: each pattern element is a string or a list of alternative strings, `decision` is `"allow"`
(the default), `"prompt"` or `"forbidden"`. `host_executable` and `network_rule` decide nothing
about a command's prefix and are skipped. Anything else (a variable, `load`, `def`, an unknown
function or decision, an expression) raises `RulesError`: the caller then keeps every command as
typed rather than guess what the file means.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

DECISIONS = ("allow", "prompt", "forbidden")
SKIPPED_CALLS = ("host_executable", "network_rule")
_CONSTANTS = {"True": True, "False": False, "None": None}
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "0": "\0"}
_PUNCTUATION = "()[],="


class RulesError(ValueError):
    """A rules file we do not read (syntax outside the subset, or a rule Codex would refuse)."""


def parse_rules(text: str) -> list[tuple[str, list[list[str]]]]:
    """The `(decision, pattern)` of every `prefix_rule` of a rules file, in file order; a pattern
    is a list of positions, each a list of alternative words."""
    tokens = tokenize(text)
    rules: list[tuple[str, list[list[str]]]] = []
    at = 0
    while at < len(tokens):
        name, at = _expect_name(tokens, at)
        args, kwargs, at = _call_arguments(tokens, at, name)
        if name == "prefix_rule":
            rules.append(prefix_rule(args, kwargs))
        elif name not in SKIPPED_CALLS:
            raise RulesError(f"unknown function {name}()")
    return rules


def prefix_rule(args: list[Any], kwargs: dict[str, Any]) -> tuple[str, list[list[str]]]:
    """The `(decision, pattern)` of one `prefix_rule(…)` call's arguments."""
    for position, key in enumerate(("pattern", "decision")[: len(args)]):
        if key in kwargs:
            raise RulesError(f"prefix_rule() got {key} twice")
        kwargs[key] = args[position]
    if len(args) > 2:
        raise RulesError("prefix_rule() takes at most 2 positional arguments")
    decision = kwargs.get("decision", "allow")
    if decision not in DECISIONS:
        raise RulesError(f"prefix_rule() decision {decision!r} is not one of {DECISIONS}")
    pattern = kwargs.get("pattern")
    if not isinstance(pattern, list) or not pattern:
        raise RulesError("prefix_rule() needs a non-empty pattern list")
    positions: list[list[str]] = []
    for element in pattern:
        words = element if isinstance(element, list) else [element]
        if not words or not all(isinstance(word, str) and word for word in words):
            raise RulesError("a pattern element must be a word or a non-empty list of words")
        positions.append(words)
    return decision, positions


def tokenize(text: str) -> list[tuple[str, Any]]:
    """The tokens of `text`: ("name", str), ("string", str), ("punct", char)."""
    tokens: list[tuple[str, Any]] = []
    at, size = 0, len(text)
    while at < size:
        char = text[at]
        if char in " \t\r\n\f":
            at += 1
        elif char == "#":
            end = text.find("\n", at)
            at = size if end < 0 else end
        elif char in _PUNCTUATION:
            tokens.append(("punct", char))
            at += 1
        elif char in "'\"":
            value, at = _string(text, at)
            tokens.append(("string", value))
        elif char.isalpha() or char == "_":
            end = at
            while end < size and (text[end].isalnum() or text[end] == "_"):
                end += 1
            tokens.append(("name", text[at:end]))
            at = end
        else:
            raise RulesError(f"unexpected {char!r} at offset {at}")
    return tokens


def _string(text: str, at: int) -> tuple[str, int]:
    """The string literal starting at `at`, and the offset after it."""
    quote = text[at : at + 3] if text[at : at + 3] in ('"""', "'''") else text[at]
    at += len(quote)
    out: list[str] = []
    while True:
        if at >= len(text):
            raise RulesError("unterminated string")
        if text.startswith(quote, at):
            return "".join(out), at + len(quote)
        char = text[at]
        if char == "\n" and len(quote) == 1:
            raise RulesError("newline in a string")
        if char == "\\":
            escape = text[at + 1 : at + 2]
            if escape not in _ESCAPES:
                raise RulesError(f"unsupported escape \\{escape} in a string")
            out.append(_ESCAPES[escape])
            at += 2
            continue
        out.append(char)
        at += 1


def _expect_name(tokens: list[tuple[str, Any]], at: int) -> tuple[str, int]:
    kind, value = tokens[at]
    if kind != "name" or value in _CONSTANTS:
        raise RulesError(f"expected a function call, found {value!r}")
    return value, at + 1


def _call_arguments(
    tokens: list[tuple[str, Any]], at: int, name: str
) -> tuple[list[Any], dict[str, Any], int]:
    """The positional and keyword arguments of the call whose `(` is at `at`."""
    at = _punct(tokens, at, "(")
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    while _peek(tokens, at) != ("punct", ")"):
        key = None
        if _peek(tokens, at)[0] == "name" and _peek(tokens, at + 1) == ("punct", "="):
            key, at = tokens[at][1], at + 2
            if key in kwargs:
                raise RulesError(f"{name}() got {key} twice")
        value, at = _value(tokens, at)
        if key is None:
            if kwargs:
                raise RulesError(f"{name}(): a positional argument after a keyword one")
            args.append(value)
        else:
            kwargs[key] = value
        if _peek(tokens, at) != ("punct", ")"):
            at = _punct(tokens, at, ",")
    return args, kwargs, at + 1


def _value(tokens: list[tuple[str, Any]], at: int) -> tuple[Any, int]:
    kind, value = _peek(tokens, at)
    if kind == "string":
        return value, at + 1
    if kind == "name" and value in _CONSTANTS:
        return _CONSTANTS[value], at + 1
    if (kind, value) == ("punct", "["):
        items: list[Any] = []
        at += 1
        while _peek(tokens, at) != ("punct", "]"):
            item, at = _value(tokens, at)
            items.append(item)
            if _peek(tokens, at) != ("punct", "]"):
                at = _punct(tokens, at, ",")
        return items, at + 1
    raise RulesError(f"unsupported value {value!r}")


def _peek(tokens: list[tuple[str, Any]], at: int) -> tuple[str, Any]:
    return tokens[at] if at < len(tokens) else ("end", "end of file")


def _punct(tokens: list[tuple[str, Any]], at: int, char: str) -> int:
    if _peek(tokens, at) != ("punct", char):
        raise RulesError(f"expected {char!r}, found {_peek(tokens, at)[1]!r}")
    return at + 1
