"""Static checks of a CEL expression against the variable schema (`facts.VARIABLES`).

Walks the lark tree of cel-python's parser (load path only, never the hot path) and reports unknown
variables, unknown fields of our map-typed variables (also inside macros such as `exists`), unknown
functions, and a result of the wrong type where it can be inferred. Both backends run this same checker,
so both report identical errors.
"""

from __future__ import annotations

from typing import Any

from rtk_policy.policy import facts
from rtk_policy.policy.backends.select import CheckError
from rtk_policy.policy.functions import all_functions

MACROS = frozenset({"all", "exists", "exists_one", "map", "filter"})
_STD_GLOBAL = {
    "size": facts.INT, "int": facts.INT, "uint": facts.DYN, "double": facts.DYN, "string": facts.STRING,
    "bytes": facts.DYN, "bool": facts.BOOL, "type": facts.DYN, "dyn": facts.DYN, "duration": facts.DYN,
    "timestamp": facts.DYN, "matches": facts.BOOL,
}  # fmt: skip
_STD_MEMBER = {
    "size": facts.INT, "contains": facts.BOOL, "startsWith": facts.BOOL, "endsWith": facts.BOOL,
    "matches": facts.BOOL,
    **{name: facts.INT for name in (
        "getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear", "getFullYear", "getHours",
        "getMilliseconds", "getMinutes", "getMonth", "getSeconds")},
}  # fmt: skip
_TYPE_OF_NAME = {
    "string": facts.STRING,
    "bool": facts.BOOL,
    "int": facts.INT,
    "list<string>": facts.STRING_LIST,
}
_LITERALS = {"STRING_LIT": facts.STRING, "MLSTRING_LIT": facts.STRING, "INT_LIT": facts.INT,
             "BOOL_LIT": facts.BOOL}  # fmt: skip
_KIND_NAMES = {"string": "a string", "int": "an int", "bool": "a bool", "list": "a list",
               "map": "a map", "record": "a map"}  # fmt: skip


def _function_tables() -> tuple[dict[str, Any], dict[str, Any]]:
    globals_ = dict(_STD_GLOBAL)
    members = dict(_STD_MEMBER)
    for fn in all_functions():
        (members if fn.member else globals_)[fn.name] = _TYPE_OF_NAME.get(fn.result, facts.DYN)
    return globals_, members


def _suggest(name: str, choices: Any) -> str:
    import difflib

    close = difflib.get_close_matches(name, list(choices), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


class Checker:
    """Infers schemas bottom-up and collects `CheckError`s."""

    def __init__(self) -> None:
        self.errors: list[CheckError] = []
        self.uses: set[str] = (
            set()
        )  #: "var.field" selected directly, "var" for a whole-variable use
        self.globals, self.members = _function_tables()

    def error(self, where: Any, message: str) -> None:
        """Record an error at a token or tree."""
        meta = getattr(where, "meta", where)
        self.errors.append(
            CheckError(getattr(meta, "line", 1), getattr(meta, "column", 1), message)
        )

    def infer(self, node: Any, scope: dict[str, Any]) -> Any:
        """The schema of `node` (facts.DYN when unknown), recording errors on the way."""
        handler = getattr(self, "_" + node.data, None)
        if handler is not None:
            return handler(node, scope)
        trees = [c for c in node.children if hasattr(c, "data")]
        types = [self.infer(c, scope) for c in trees]
        if len(types) == 1 and len(node.children) == 1:
            return types[0]
        return self._combine(node.data, types)

    @staticmethod
    def _combine(data: str, types: list[Any]) -> Any:
        if data in ("relation", "conditionalor", "conditionaland", "unary") and len(types) >= 2:
            return facts.BOOL if data != "unary" else types[-1]
        if data == "addition" and types and types[0] in (facts.STRING, facts.STRING_LIST):
            return types[0]
        return facts.DYN

    def _unary(self, node: Any, scope: dict[str, Any]) -> Any:
        types = [self.infer(c, scope) for c in node.children if hasattr(c, "data")]
        if node.children and getattr(node.children[0], "data", "") == "unary_not":
            return facts.BOOL
        return types[-1] if len(types) == 1 else facts.DYN

    def _ident(self, node: Any, scope: dict[str, Any]) -> Any:
        name = str(node.children[0])
        if name in scope:
            return scope[name]
        if name in facts.VARIABLES:
            self.uses.add(name)
            return facts.VARIABLES[name]
        self.error(
            node.children[0],
            f"undeclared reference to '{name}'" + _suggest(name, [*scope, *facts.VARIABLES]),
        )
        return facts.DYN

    def _literal(self, node: Any, scope: dict[str, Any]) -> Any:
        return _LITERALS.get(getattr(node.children[0], "type", ""), facts.DYN)

    def _list_lit(self, node: Any, scope: dict[str, Any]) -> Any:
        self._args(node.children, scope)
        return ("list", facts.DYN)

    def _map_lit(self, node: Any, scope: dict[str, Any]) -> Any:
        self._args(node.children, scope)
        return ("map", facts.DYN)

    def _member_object(self, node: Any, scope: dict[str, Any]) -> Any:
        self.error(node, "message construction is not supported")
        return facts.DYN

    def _member_dot(self, node: Any, scope: dict[str, Any]) -> Any:
        var = self._bare_ident(node.children[0])
        if var in facts.VARIABLES and var not in scope:
            self.uses.add(f"{var}.{node.children[1]}")
            return self._field(facts.VARIABLES[var], node.children[1])
        target = self.infer(node.children[0], scope)
        return self._field(target, node.children[1])

    def _field(self, target: Any, token: Any) -> Any:
        name = str(token)
        kind = target[0]
        if kind == "record":
            if name in target[1]:
                return target[1][name]
            self.error(token, f"no such field '{name}'" + _suggest(name, target[1]))
        elif kind == "map":
            return target[1]
        elif kind != "dyn":
            self.error(token, f"cannot select field '{name}' of {_KIND_NAMES.get(kind, kind)}")
        return facts.DYN

    def _member_index(self, node: Any, scope: dict[str, Any]) -> Any:
        target = self.infer(node.children[0], scope)
        self.infer(node.children[1], scope)
        return target[1] if target[0] in ("list", "map") else facts.DYN

    def _args(self, children: list[Any], scope: dict[str, Any]) -> list[Any]:
        exprs = [c for c in children if getattr(c, "data", "") in ("exprlist", "mapinits")]
        return [
            self.infer(e, scope) for group in exprs for e in group.children if hasattr(e, "data")
        ]

    def _member_dot_arg(self, node: Any, scope: dict[str, Any]) -> Any:
        target_node, token = node.children[0], node.children[1]
        name = str(token)
        target = self.infer(target_node, scope)
        arg_list = next(
            (c for c in node.children[2:] if getattr(c, "data", "") == "exprlist"), None
        )
        args = [c for c in arg_list.children if hasattr(c, "data")] if arg_list is not None else []
        if name in MACROS and args and self._bare_ident(args[0]) is not None:
            return self._macro(name, target, args, scope)
        for arg in args:
            self.infer(arg, scope)
        if name == "matches" and args:
            self._check_pattern(args[0])
        if name not in self.members:
            self.error(
                token, f"undeclared reference to function '{name}'" + _suggest(name, self.members)
            )
            return facts.DYN
        return self.members[name]

    def _macro(self, name: str, target: Any, args: list[Any], scope: dict[str, Any]) -> Any:
        var = self._bare_ident(args[0])
        elem = (
            target[1]
            if target[0] == "list"
            else facts.STRING
            if target[0] in ("map", "record")
            else facts.DYN
        )
        inner = {**scope, var: elem}
        body = [self.infer(arg, inner) for arg in args[1:]]
        if name == "map":
            return ("list", body[-1] if body else facts.DYN)
        if name == "filter":
            return ("list", elem)
        return facts.BOOL

    def _check_pattern(self, node: Any) -> None:
        """Report a literal regex pattern RE2 rejects (a lookbehind, a backreference): both
        backends would raise on every evaluation, and a rule that errors decides nothing."""
        token = _string_literal(node)
        if token is None:
            return
        pattern = _decode_string(str(token))
        if pattern is None:
            return
        from rtk_policy.policy.regex import pattern_problem

        problem = pattern_problem(pattern)
        if problem:
            self.error(token, problem)

    @staticmethod
    def _bare_ident(node: Any) -> str | None:
        while hasattr(node, "data") and node.data != "ident" and len(node.children) == 1:
            node = node.children[0]
        if getattr(node, "data", "") == "ident":
            return str(node.children[0])
        return None

    def _ident_arg(self, node: Any, scope: dict[str, Any]) -> Any:
        token = node.children[0]
        name = str(token)
        self._args(node.children[1:], scope)
        position = _PATTERN_ARGUMENT.get(name)
        if position is not None:
            args = _call_args(node.children[1:])
            if len(args) > position:
                self._check_pattern(args[position])
        if name == "has":
            return facts.BOOL
        if name not in self.globals:
            self.error(
                token, f"undeclared reference to function '{name}'" + _suggest(name, self.globals)
            )
            return facts.DYN
        return self.globals[name]

    _dot_ident_arg = _ident_arg
    _dot_ident = _ident


#: Global functions taking an RE2 pattern, and the index of the pattern among their arguments.
_PATTERN_ARGUMENT = {"matches": 1, "re_find": 0, "re_matches": 1}


def _call_args(children: list[Any]) -> list[Any]:
    """The argument trees of a call, from the children after its name."""
    lists = [c for c in children if getattr(c, "data", "") == "exprlist"]
    return [e for group in lists for e in group.children if hasattr(e, "data")]


def _string_literal(node: Any) -> Any:
    """The string literal token `node` is made of, or None (any other expression)."""
    while hasattr(node, "data") and len(node.children) == 1:
        node = node.children[0]
    if getattr(node, "type", "") in ("STRING_LIT", "MLSTRING_LIT"):
        return node
    return None


def _decode_string(text: str) -> str | None:
    """The value of a CEL string literal's source text (None when it cannot be decoded here)."""
    raw = text[:1] in "rR"
    body = text[1:] if raw else text
    quote = body[:3] if body[:3] in ('"""', "'''") else body[:1]
    if not quote or not body.endswith(quote) or len(body) < 2 * len(quote):
        return None
    inner = body[len(quote) : -len(quote)]
    if raw:
        return inner
    import codecs

    try:
        return codecs.decode(inner.encode("latin-1", "backslashreplace"), "unicode_escape")
    except (UnicodeDecodeError, ValueError):
        return None


def check_tree(tree: Any, expected: str) -> tuple[list[CheckError], frozenset[str]]:
    """Check a parsed expression whose result must be `expected` ("bool" or "string").

    Returns the errors and the variables used (`Checker.uses`).
    """
    checker = Checker()
    result = checker.infer(tree, {})
    if result[0] not in ("dyn", expected):
        checker.error(
            tree, f"expression must give {_KIND_NAMES[expected]}, not {_KIND_NAMES.get(result[0])}"
        )
    return checker.errors, frozenset(checker.uses)


def parse_tree(source: str) -> tuple[Any, CheckError | None]:
    """Parse `source` with cel-python's lark parser: (tree, None) or (None, the syntax error)."""
    from celpy.celparser import CELParser
    from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedToken

    CELParser()  # builds the shared lark parser once
    parser = CELParser.CEL_PARSER
    assert parser is not None
    try:
        return parser.parse(source), None
    except UnexpectedToken as error:
        if error.token.type == "$END":
            line = source.count("\n") + 1
            col = len(source.rsplit("\n", 1)[-1]) + 1
            return None, CheckError(line, col, "syntax error: unexpected end of expression")
        return None, CheckError(
            error.line, error.column, f"syntax error: unexpected '{error.token}'"
        )
    except UnexpectedCharacters as error:
        return None, CheckError(
            error.line, error.column, f"syntax error: unexpected character '{error.char}'"
        )
    except LarkError as error:  # pragma: no cover - other lark failures
        return None, CheckError(1, 1, f"syntax error: {str(error).splitlines()[0]}")


def parse_and_check(source: str, expected: str) -> tuple[list[CheckError], frozenset[str]]:
    """Parse and check `source`; a syntax error is returned as the only `CheckError`."""
    tree, syntax = parse_tree(source)
    if syntax is not None:
        return [syntax], frozenset()
    return check_tree(tree, expected)
