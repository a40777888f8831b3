"""Guards as generated Python functions, for processes that decide many commands.

`guard.py` runs a guard form as a tree of closures, one call per node. Here a form becomes the
source of one function (its nodes inline expressions and statements, each variable's fields read
once) and is compiled. The values are the closures' values node for node (the same three-valued
rules, the same `UNKNOWN` cases, the same Python implementations of the custom functions), so a rule
is skipped, or proven, exactly where the closure guard would skip or prove it;
`tests/test_guard_code.py` checks this on random forms, on a grid of every node kind and on the
shipped packs.

Compiling costs about half a millisecond per form, so only the plans of programs met often are
compiled (`plans.COMPILE_AFTER`): a cold hook compiles nothing, a batch or a server compiles the
plans of its common programs, and each distinct form once (`CompiledGuards`; forms
with the same source but their constants share one compiled code object). The files' `when`
and pipeline-consumer guards, which run on every segment, are compiled once a policy set has
evaluated `policyset.WARM_AFTER` segments, and so are the rewrite and message outputs built from
then on (each output is built when its rule first matches).
"""

from __future__ import annotations

import warnings

from rtk_policy.policy.guards.guard import UNKNOWN, build_guard, chain_operands
from rtk_policy.policy.guards.values import (
    COMPARE,
    METHODS,
    ORDER,
    SIZED,
    cel_string,
    lazy_search,
)
from rtk_policy.policy.regex import pretest_literals

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: the Python operators of the relations with a literal right operand
_SYMBOLS = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
#: forms kept compiled (a bound for a long-running server: its residual forms are per program)
MAX_FORMS = 4096
#: compiled sources → their code: forms that differ only in their constants (a rule specialised
#: to several programs) have one source, compiled once and run with each form's constants
_codes: dict[str, Any] = {}
#: string methods with an inline form: (target, argument) → expression
_STRING_METHODS = {
    "startsWith": "{t}.startswith({a})",
    "endsWith": "{t}.endswith({a})",
    "contains": "{a} in {t}",
}


def form_function(form: Any, functions: dict[Any, Any]) -> Any:
    """A generated function `env -> value` of one guard form: the value its closure
    (`guard.build_guard`) gives, `UNKNOWN` included. None when it cannot be compiled (a form nested
    deeper than Python's compiler allows)."""
    writer = _Writer(functions)
    try:
        source = writer.function_source(form)
        code = _codes.get(source)
        if code is None:
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # a compile-time warning would reach stderr: refuse
                code = compile(source, "<guard form>", "exec")
            if len(_codes) >= MAX_FORMS:
                _codes.clear()
            _codes[source] = code
    except (SyntaxError, RecursionError, MemoryError, ValueError, OverflowError, Warning):
        return None
    namespace = dict(writer.constants)
    exec(code, namespace)  # noqa: S102 - our own generated source, from the policies' guard forms
    return namespace["guard"]


class CompiledGuards:
    """A `build_guard` for warm processes: each distinct form compiled once (`form_function`).

    Gives None where `build_guard` does (a form that could never say `false`); a form that cannot be
    compiled keeps its closure guard.
    """

    def __init__(self, functions: dict[Any, Any]) -> None:
        self.functions = functions
        self._made: dict[Any, Any] = {}

    def __call__(self, form: Any) -> Any:
        """The guard of `form`: a generated function `env -> value`, or None."""
        if not form or form[0] == "unknown":
            return None
        key = repr(form)  # not the form: ("lit", 1) == ("lit", True), and a guard tells them apart
        found = self._made.get(key)
        if found is None:
            if len(self._made) >= MAX_FORMS:
                self._made.clear()
            found = form_function(form, self.functions) or build_guard(form, self.functions)
            self._made[key] = found
        return found


class _Writer:
    """Writes the source of one guard function: lines, fresh names, constants, reads.

    A variable or field of the environment is read where it is first needed and its local is used
    again by the code that block dominates (`_reads`: one map per nested block), so a guard that is
    decided by its first test reads nothing else. The reads a comprehension's body makes of the
    environment are done once, before its loop.
    """

    def __init__(self, functions: dict[Any, Any], constant_stem: str = "K") -> None:
        self.functions = functions
        #: how the names of constants start (functions of one module need distinct stems)
        self.constant_stem = constant_stem
        self.constants: dict[str, Any] = {
            "U": UNKNOWN, "SIZED": SIZED, "FAULT": _fault,
        }  # fmt: skip
        self._constant_names: dict[int, str] = {}
        self._kept: list[Any] = []  # keeps the values behind `_constant_names` ids alive
        self._count = 0
        #: per enclosing block, outermost first: a path of the environment → the local read there
        self._reads: list[dict[tuple[Any, ...], str]] = [{}]

    def function_source(self, ir: Any) -> str:
        """The source of `def guard(env)`: the form's statements, then its value. An error the
        closures would not raise gives `UNKNOWN` (the rule is left to CEL), never a crash."""
        body, value = self.node(ir, {}) if ir else ([], "U")
        lines = ["def guard(env):", "  try:"] + ["    " + line for line in body]
        lines += [f"    return {value}", "  except Exception:", "    FAULT()", "    return U"]
        return "\n".join(lines) + "\n"

    # ------------------------------------------------------------------ names and constants

    def fresh(self, stem: str = "v") -> str:
        """A new local name."""
        self._count += 1
        return f"{stem}{self._count}"

    def constant(self, value: Any) -> str:
        """The name of a global holding `value` (never a literal: `"x" is U` or `True[0]` would
        draw a compile-time warning)."""
        name = self._constant_names.get(id(value))
        if name is None:
            name = self._constant_names[id(value)] = self.fresh(self.constant_stem)
            self.constants[name] = value
            self._kept.append(value)
        return name

    def _known(self, path: tuple[Any, ...]) -> str | None:
        """The local already holding the read of `path` in this block or one enclosing it."""
        for reads in self._reads:
            found = reads.get(path)
            if found is not None:
                return found
        return None

    def block(self, scope: dict[str, str], ir: Any) -> tuple[list[str], str]:
        """`node(ir, scope)` for code inside a nested block: its reads stay in that block."""
        self._reads.append({})
        try:
            return self.node(ir, scope)
        finally:
            self._reads.pop()

    # ------------------------------------------------------------------ nodes

    def node(self, ir: Any, scope: dict[str, str]) -> tuple[list[str], str]:
        """(statements, a side-effect-free expression of the node's value) for `ir`.

        `scope` maps the names bound by enclosing comprehensions to their local variables.
        """
        kind = ir[0] if ir else "unknown"
        writer = getattr(self, "_n_" + kind, None) if kind in _KINDS else None
        if writer is None:
            return [], "U"
        return writer(ir, scope)

    def _n_lit(self, ir: Any, scope: dict[str, str]) -> tuple[list[str], str]:
        return [], self.constant(ir[1])

    def _n_ident(self, ir: Any, scope: dict[str, str]) -> tuple[list[str], str]:
        name = ir[1]
        if name in scope:
            return [], scope[name]
        return self._read(ir, [], f"env.get({name!r}, U)")

    def _n_dot(self, ir: Any, scope: dict[str, str]) -> tuple[list[str], str]:
        field = ir[2]
        outside = _rooted_outside(ir[1], scope)
        known = self._known(ir) if outside else None
        if known is not None:
            return [], known
        lines, target = self.node(ir[1], scope)
        value = f"{target}.get({field!r}, U) if type({target}) is dict else U"
        if outside:  # a path of the environment: read once in this block
            return self._read(ir, lines, value)
        out = self.fresh()
        lines.append(f"{out} = {value}")
        return lines, out

    def _read(self, path: Any, lines: list[str], value: str) -> tuple[list[str], str]:
        """`lines`, then the read `value` of the environment `path` kept for this block."""
        known = self._known(path)
        if known is not None:
            return lines, known
        out = self._reads[-1][path] = self.fresh("h")
        lines.append(f"{out} = {value}")
        return lines, out

    def _n_index(self, ir: Any, scope: dict[str, str]) -> tuple[list[str], str]:
        lines, (target, key) = self._values(ir[1:3], scope)
        out = self.fresh()
        in_list = f"type({target}) is list and type({key}) is int and 0 <= {key} < len({target})"
        in_map = f"type({target}) is dict and type({key}) is str"
        lines.append(
            f"{out} = {target}[{key}] if {in_list} else ({target}.get({key}, U) if {in_map} else U)"
        )
        return lines, out

    def _n_list(self, ir: Any, scope: dict[str, str]) -> tuple[list[str], str]:
        lines, items = self._values(ir[1], scope)
        out = self.fresh()
        unknown = " or ".join(f"{value} is U" for value in items) or "False"
        lines.append(f"{out} = U if {unknown} else [{', '.join(items)}]")
        return lines, out

    def _n_and(self, ir: Any, scope: dict[str, str]) -> tuple[list[str], str]:
        return self._chain(ir, scope, deciding=False)

    def _n_or(self, ir: Any, scope: dict[str, str]) -> tuple[list[str], str]:
        return self._chain(ir, scope, deciding=True)

    def _chain(self, ir: Any, scope: dict[str, str], deciding: bool) -> tuple[list[str], str]:
        """`a && b && …` (deciding False) or `a || b || …` (deciding True), cheapest first.

        The result starts as the neutral value, turns `U` on an uncertain operand and stops at the
        deciding one: the closures' `conjunction`/`disjunction`, unrolled.
        """
        out = self.fresh()
        neutral = not deciding
        lines = [f"{out} = {neutral}"]
        for at, part in enumerate(chain_operands(ir)):
            more, value = self.node(part, scope) if at == 0 else self.block(scope, part)
            test = [
                *more,
                f"{out} = {deciding} if {value} is {deciding} else "
                f"({out} if {value} is {neutral} else U)",
            ]
            if at == 0:
                lines += test
            else:
                lines.append(f"if {out} is not {deciding}:")
                lines += ["    " + line for line in test]
        return lines, out

    def _n_not(self, ir: Any, scope: dict[str, str]) -> tuple[list[str], str]:
        lines, value = self.node(ir[1], scope)
        out = self.fresh()
        lines.append(f"{out} = False if {value} is True else (True if {value} is False else U)")
        return lines, out

    def _n_rel(self, ir: Any, scope: dict[str, str]) -> tuple[list[str], str]:
        op, left_ir, right_ir = ir[1], ir[2], ir[3]
        lines, left = self.node(left_ir, scope)
        out = self.fresh()
        if op == "in" and right_ir[0] == "list" and all(i[0] == "lit" for i in right_ir[1]):
            values = [i[1] for i in right_ir[1]]
            kinds = {type(v) for v in values}
            if len(kinds) == 1:  # a literal list of one type: a set lookup
                kind = self.constant(kinds.pop())
                members = self.constant(frozenset(values))
                lines.append(f"{out} = ({left} in {members}) if type({left}) is {kind} else U")
                return lines, out
        literal = right_ir[1] if right_ir[0] == "lit" else None
        if (op in ("eq", "ne") and type(literal) in (str, int, bool)) or (
            op in ORDER and type(literal) in (int, str)
        ):  # `x == "lit"`, `size(x) > 0`: the operator itself, for a left operand of that type
            kind, value = self.constant(type(literal)), self.constant(literal)
            lines.append(
                f"{out} = ({left} {_SYMBOLS[op]} {value}) if type({left}) is {kind} else U"
            )
            return lines, out
        more, right = self.node(right_ir, scope)
        lines += more
        compare = self.constant(COMPARE[op])
        lines.append(f"{out} = U if {left} is U or {right} is U else {compare}({left}, {right})")
        return lines, out

    def _n_add(self, ir: Any, scope: dict[str, str]) -> tuple[list[str], str]:
        lines, (left, right) = self._values(ir[1:3], scope)
        out = self.fresh()
        lines.append(
            f"{out} = {left} + {right} if type({left}) is str and type({right}) is str else U"
        )
        return lines, out

    def _n_call(self, ir: Any, scope: dict[str, str]) -> tuple[list[str], str]:
        name, args = ir[1], ir[2]
        if (
            len(args) == 2
            and args[1][0] == "lit"
            and type(args[1][1]) is str
            and name == "re_matches"
        ):
            return self._search(args[0], args[1][1], scope)
        lines, values = self._values(args, scope)
        out = self.fresh()
        if name == "size" and len(values) == 1:
            (value,) = values
            lines.append(f"{out} = len({value}) if type({value}) in SIZED else U")
            return lines, out
        if name == "string" and len(values) == 1:
            (value,) = values
            lines.append(f"{out} = U if {value} is U else {self.constant(cel_string)}({value})")
            return lines, out
        found = self.functions.get((name, len(values)))
        if found is None:  # the reads made stay: later code of this block may use them
            return lines, "U"
        impl, params = found
        checks = [f"{value} is U" for value in values]
        if params is not None:
            checks += [
                f"type({value}) not in {self.constant(ok)}"
                for value, ok in zip(values, params, strict=True)
            ]
        lines += self._guarded_call(out, self.constant(impl), values, checks)
        return lines, out

    def _n_mcall(self, ir: Any, scope: dict[str, str]) -> tuple[list[str], str]:
        name, target_ir, args = ir[1], ir[2], ir[3]
        if name == "matches" and len(args) == 1 and args[0][0] == "lit" and type(args[0][1]) is str:
            return self._search(target_ir, args[0][1], scope)
        if name not in METHODS:
            return [], "U"
        lines, values = self._values((target_ir, *args), scope)
        out = self.fresh()
        form = _STRING_METHODS.get(name)
        if form is not None and len(values) == 2:
            text, arg = values
            call = form.format(t=text, a=arg)
            lines.append(f"{out} = ({call}) if type({text}) is str and type({arg}) is str else U")
            return lines, out
        if name == "size" and len(values) == 1:
            (value,) = values
            lines.append(f"{out} = len({value}) if type({value}) in SIZED else U")
            return lines, out
        checks = [f"{value} is U" for value in values]
        lines += self._guarded_call(out, self.constant(METHODS[name]), values, checks)
        return lines, out

    def _values(self, args: Any, scope: dict[str, str]) -> tuple[list[str], list[str]]:
        """(statements, a value expression per operand) of the forms `args`, in order."""
        lines: list[str] = []
        values = []
        for arg in args:
            more, value = self.node(arg, scope)
            lines += more
            values.append(value)
        return lines, values

    def _guarded_call(self, out: str, impl: str, values: list[str], checks: list[str]) -> list[str]:
        """`out = impl(*values)`, `U` when a check holds or the call raises (a CEL error), as
        `_call` gives it, written inline (no frame of `_call` per call)."""
        call = [
            "try:",
            f"    {out} = {impl}({', '.join(values)})",
            "except Exception:",
            f"    {out} = U",
        ]
        if not checks:
            return call
        test = " or ".join(checks)
        return [f"if {test}:", f"    {out} = U", "else:", *("    " + line for line in call)]

    def _search(self, target_ir: Any, pattern: str, scope: dict[str, str]) -> tuple[list[str], str]:
        """`target.matches("literal")`: the required literals tested inline (the pre-test of
        `values.literal_search`), then the cached regex (`values.lazy_search`, which compiles the
        pattern when first needed)."""
        lines, text = self.node(target_ir, scope)
        search = self.constant(lazy_search(pattern))
        needles = pretest_literals(pattern)
        out = self.fresh()
        if needles:
            present = " or ".join(f"{self.constant(needle)} in {text}" for needle in needles)
            found = f"({search}({text}) if {present} else False)"
        else:
            found = f"{search}({text})"
        lines.append(f"{out} = {found} if type({text}) is str else U")
        return lines, out

    def _n_exists(self, ir: Any, scope: dict[str, str]) -> tuple[list[str], str]:
        return self._comprehension(ir, scope, decisive=True)

    def _n_all(self, ir: Any, scope: dict[str, str]) -> tuple[list[str], str]:
        return self._comprehension(ir, scope, decisive=False)

    def _comprehension(
        self, ir: Any, scope: dict[str, str], decisive: bool
    ) -> tuple[list[str], str]:
        """`exists` (one true decides) or `all` (one false decides) over a list or a map's keys."""
        lines, items = self.node(ir[1], scope)
        out, each, uncertain, listed = self.fresh(), self.fresh("x"), self.fresh("u"), self.fresh()
        inner = {**scope, ir[2]: each}
        for path in _outer_paths(ir[3], set(inner)):  # read once, before the loop
            lines += self.node(path, scope)[0]
        body, value = self.block(inner, ir[3])
        lines += [
            f"{listed} = list({items}) if type({items}) is dict else {items}",
            f"if type({listed}) is not list:",
            f"    {out} = U",
            "else:",
            f"    {out} = {not decisive}",
            f"    {uncertain} = False",
            f"    for {each} in {listed}:",
            *["        " + line for line in body],
            f"        if {value} is {decisive}:",
            f"            {out} = {decisive}",
            "            break",
            f"        if {value} is not {not decisive}:",
            f"            {uncertain} = True",
            "    else:",
            f"        if {uncertain}:",
            f"            {out} = U",
        ]
        return lines, out


#: the node kinds `_Writer.node` writes; any other is `UNKNOWN`, as in `guard.py`
_KINDS = frozenset(
    {"lit", "ident", "dot", "index", "list", "and", "or", "not", "rel", "add", "call", "mcall",
     "exists", "all"}
)  # fmt: skip


#: errors compiled guards have caught (each gave `UNKNOWN`); none is expected: the tests check
faults = 0


def _fault() -> None:
    global faults
    faults += 1


def _rooted_outside(ir: Any, scope: dict[str, str]) -> bool:
    """True when `ir` is a variable no comprehension binds, or a chain of field reads of one."""
    while ir[0] == "dot":
        ir = ir[1]
    return ir[0] == "ident" and ir[1] not in scope


def _outer_paths(ir: Any, bound: set[str]) -> list[Any]:
    """The longest variable and field-read chains of `ir` whose variable is not in `bound` (nor
    bound by a comprehension inside `ir` where the chain sits)."""
    if not isinstance(ir, tuple) or not ir:
        return []
    if not isinstance(ir[0], str):  # call operands, list items
        return [path for part in ir for path in _outer_paths(part, bound)]
    if ir[0] in ("ident", "dot"):
        root = ir
        while root[0] == "dot":
            root = root[1]
        if root[0] == "ident":
            return [ir] if root[1] not in bound else []
        return _outer_paths(root, bound)
    if ir[0] in ("exists", "all"):
        return _outer_paths(ir[1], bound) + _outer_paths(ir[3], bound | {ir[2]})
    return [path for part in ir[1:] for path in _outer_paths(part, bound)]
