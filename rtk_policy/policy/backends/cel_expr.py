"""The primary CEL backend: cel-expr-python (Google's CEL, C++ core). The only module importing it.

The library is imported when the environment is first needed (compiling, or restoring a cached
program): a hook process whose every rule the guards decide never loads it.
"""

from __future__ import annotations

from _thread import allocate_lock

from rtk_policy.policy import facts
from rtk_policy.policy.backends.select import (
    CheckError,
    CompileError,
    EngineError,
    EvalError,
    file_version,
    module_file,
)
from rtk_policy.policy.functions import Function, all_functions
from rtk_policy.util.lazy_re import lazy

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_ERROR_LINE = lazy(globals(), "_ERROR_LINE", r"ERROR: <input>:(\d+):(\d+): (.*)")
_LIBRARY = "cel_expr_python.cel"
#: the library module and its types, set by `_load_library` (None until then)
cel: Any = None
_T: Any = None
_TYPES: dict[str, Any] = {}
_EXPECTED: dict[str, Any] = {}
_BUILDING = allocate_lock()  #: held while a backend builds its environment


def _load_library() -> Any:
    """Import cel-expr-python (once) and build the type tables."""
    global cel, _T
    if cel is None:
        from cel_expr_python import cel as library  # type: ignore[import-untyped]  # no types

        t = library.Type
        _TYPES.update(
            {
                "string": t.STRING,
                "bool": t.BOOL,
                "int": t.INT,
                "dyn": t.DYN,
                "list<string>": t.List(t.STRING),
                "list<dyn>": t.List(t.DYN),
                "map<string,dyn>": t.Map(t.STRING, t.DYN),
            }
        )
        _EXPECTED.update({"bool": t.BOOL, "string": t.STRING})
        cel, _T = library, t
    return cel


def _declaration(name: str, overloads: list[Function]) -> Any:
    return cel.FunctionDecl(
        name,
        [
            cel.Overload(
                fn.overload_id,
                _TYPES[fn.result],
                [_TYPES[p] for p in fn.params],
                is_member=fn.member,
                impl=fn.impl,
            )
            for fn in overloads
        ],
    )


def parse_errors(text: str) -> list[CheckError]:
    """The positioned errors of a cel-expr compile error message."""
    errors = []
    for match in _ERROR_LINE.finditer(text):
        message = match.group(3).replace(" [INVALID_ARGUMENT]", "").strip()
        errors.append(CheckError(int(match.group(1)), int(match.group(2)), message))
    return errors or [
        CheckError(1, 1, text.strip().splitlines()[0] if text.strip() else "compile error")
    ]


class CelExprBackend:
    """cel-expr-python: type-checked compile, serialisable programs, ~µs evaluation."""

    name = "cel-expr"

    def __init__(self) -> None:
        self.version = file_version(cel.__file__ if cel is not None else module_file(_LIBRARY))
        self._env: Any = None

    @property
    def env(self) -> Any:
        """The cel-expr environment with our variables and functions, built on first use (guards
        answer most expressions, so a short-lived hook process often never needs it)."""
        if self._env is None:
            with _BUILDING:  # once: two threads of the server must not get two environments
                if self._env is None:
                    self._env = _new_env()
        return self._env

    def compile(self, source: str, expected: str) -> Any:
        """Static checks, then cel-expr's own parse and type check."""
        from rtk_policy.policy.checker import parse_and_check

        problems, uses = parse_and_check(source, expected)
        try:
            program = self.env.compile(source)
        except RuntimeError as error:
            raise CompileError(problems or parse_errors(str(error))) from None
        if problems:
            if problems[0].message.startswith("syntax error"):
                problems = [
                    CheckError(p.line, p.col, p.message + " (cel-python cannot parse this)")
                    for p in problems
                ]
            raise CompileError(problems)
        result = program.return_type()
        if result != _T.DYN and result != _EXPECTED[expected]:
            raise CompileError(
                [
                    CheckError(
                        1, 1, f"expression must give a {expected}, not {result.name().lower()}"
                    )
                ]
            )
        return program, uses

    def dump(self, program: Any) -> bytes:
        """Serialized checked expression."""
        return bytes(program.serialize())

    def restore(self, blob: bytes, expected: str) -> Any:
        """Deserialize into this environment."""
        return self.env.deserialize(blob)

    def activation(self, values: dict[str, Any]) -> Any:
        """One cel-expr Activation holding every variable."""
        return self.env.Activation(values)

    def run_bool(self, program: Any, activation: Any) -> bool:
        """Evaluate; an error value (returned as a str) raises `EvalError`."""
        result = program.eval(activation)
        value = result.value()
        if value is True or value is False:
            return value
        if result.type() == _T.ERROR:
            raise _error(str(value))
        raise EvalError(f"expected a bool, got {result.type().name().lower()}")

    def run_string(self, program: Any, activation: Any) -> str:
        """Evaluate a string expression."""
        result = program.eval(activation)
        if result.type() == _T.ERROR:
            raise _error(str(result.value()))
        value = result.value()
        if not isinstance(value, str):
            raise EvalError(f"expected a string, got {result.type().name().lower()}")
        return value


def _error(message: str) -> EvalError:
    """An expression error, or an `EngineError` when the engine itself gave up (budget,
    internal)."""
    if message.startswith(("INTERNAL", "RESOURCE_EXHAUSTED")) or "budget" in message:
        return EngineError(message)
    return EvalError(message)


def _new_env() -> Any:
    """A cel-expr environment with our variables and functions."""
    _load_library()
    grouped: dict[str, list[Function]] = {}
    for fn in all_functions():
        grouped.setdefault(fn.name, []).append(fn)
    return cel.NewEnv(
        variables={name: _T.Map(_T.STRING, _T.DYN) for name in facts.VARIABLES},
        functions=[_declaration(name, fns) for name, fns in grouped.items()],
    )


def create() -> CelExprBackend:
    """The backend instance."""
    return CelExprBackend()
