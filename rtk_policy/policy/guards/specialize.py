"""Guards specialised to one program: the guard form (`guard.py`) with `segment.program` known.

Most rules test `segment.program` somewhere (`segment.program == "git" && ...`, `!(segment.program
in [...]) && ...`, `segment.program.matches("^(rm|shred)$") && ...`). Once the program of a segment
is known those tests are constants, so the residual guard that is left is far smaller: a rule whose
residual is `false` is never tried on that program, and the others run only the tests that still
depend on the segment. Folding follows the guard's own three-valued rules: a node is replaced by a
literal only when every operand is a literal and the guard gives a plain value for it; `&&`/`||`
drop their `true`/`false` operands and collapse on a `false`/`true` one, exactly as the guard would
decide at run time.

A test `rtk_norm(segment.command).matches(R)` counts as a program test too (`first_word.py`):
it folds to `false` for a program whose name cannot begin a text `R` matches. That holds only for
segments whose normal form begins with their program (`functions_rtk.rtk_norm_begins_with`): the
other segments take plans where such rules keep their own guards (`Planner.unfolded`).
"""

from __future__ import annotations

from rtk_policy.policy.guards.guard import FALSE_FORM as _FALSE
from rtk_policy.policy.guards.guard import UNKNOWN, build_guard, literal_pattern

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_TRUE = ("lit", True)
_FOLDABLE = frozenset({"not", "rel", "add", "call", "mcall", "index"})
#: functions whose result depends on more than their arguments (the environment): never folded
_IMPURE = frozenset({"expand_home", "path_under"})


def specialize(ir: tuple[Any, ...], program: str, functions: dict[Any, Any]) -> tuple[Any, ...]:
    """The guard form `ir` with `segment.program` replaced by `program` and constants folded."""
    return Specializer(functions).specialize(ir, program)


_PROGRAM = ("dot", ("ident", "segment"), "program")
_NORMAL_COMMAND = ("call", "rtk_norm", (("dot", ("ident", "segment"), "command"),))


def first_word_pattern(ir: Any) -> str | None:
    """The pattern `R` of a test `rtk_norm(segment.command).matches(R)` (R a literal), else None."""
    if not isinstance(ir, tuple) or len(ir) < 3 or ir[0] not in ("mcall", "call"):
        return None
    target = ir[2] if ir[0] == "mcall" else (ir[2][0] if ir[2] else None)
    return literal_pattern(ir) if target == _NORMAL_COMMAND else None


def holds_first_word_test(ir: Any) -> bool:
    """Whether the guard form `ir` holds a first-word test (`first_word_pattern`)."""
    stack = [ir]
    while stack:
        node = stack.pop()
        if isinstance(node, tuple):
            if first_word_pattern(node) is not None:
                return True
            stack.extend(node)
    return False


def _first_word_test(pattern: str) -> Any:
    """The value of a first-word test for a program: False when `pattern` cannot match, True
    when it may (the test is kept)."""
    from rtk_policy.policy.guards.first_word import cannot_begin  # planning only

    return lambda env: not cannot_begin(pattern, env["segment"]["program"])


class Specializer:
    """Specialises guard forms to programs, remembering which subtrees read `segment.program`.

    A subtree that does not read it is the same for every program and is kept as it is, so the
    work per program is proportional to the program tests alone. The memo is keyed by `id()`: it
    keeps every subtree it has seen alive.
    """

    def __init__(self, functions: dict[Any, Any], first_word: bool = True) -> None:
        self.functions = functions
        #: fold first-word tests (`first_word_pattern`) too
        self.first_word = first_word
        self._mentions: dict[int, bool] = {}
        self._atoms: dict[int, Any] = {}
        self._parts: dict[int, tuple[tuple[Any, ...], bool]] = {}
        self._seen: list[Any] = []

    def mentions(self, ir: Any) -> bool:
        """True when `ir` reads `segment.program` somewhere (a bound `segment` counts too)."""
        if not isinstance(ir, tuple) or not ir:
            return False
        known = self._mentions.get(id(ir))
        if known is None:
            parts = ir if not isinstance(ir[0], str) else ir[1:]  # call operands, list items: all
            known = (
                ir == _PROGRAM
                or (self.first_word and first_word_pattern(ir) is not None)
                or any(self.mentions(part) for part in parts)
            )
            self._mentions[id(ir)] = known
            self._seen.append(ir)
        return known

    def _atom(self, ir: tuple[Any, ...]) -> Any:
        """The guard of a subtree that reads nothing but `segment.program` (None for others).

        Built once and run per program: the value it gives is the literal `_fold` would give.
        """
        key = id(ir)
        if key not in self._atoms:
            pattern = first_word_pattern(ir) if self.first_word else None
            if pattern is not None:
                self._atoms[key] = _first_word_test(pattern)
            else:
                self._atoms[key] = build_guard(ir, self.functions) if _only_program(ir) else None
            self._seen.append(ir)
        return self._atoms[key]

    def signature(self, ir: tuple[Any, ...], program: str) -> tuple[Any, ...]:
        """What `specialize(ir, program)` depends on: the values of the program tests of `ir`.

        Two programs with the same signature get the same residual. A program test that gives no
        plain value, or a `segment.program` read outside a test, puts the program itself in.
        """
        values, bare = self.program_tests(ir, program)
        if bare or any(type(value) not in (bool, int, str) for value in values):
            return (program,)
        return values

    def program_tests(self, ir: tuple[Any, ...], program: str) -> tuple[tuple[Any, ...], bool]:
        """The values of the program tests of `ir` for `program`, and whether `segment.program`
        is also read outside them."""
        key = id(ir)
        found = self._parts.get(key)
        if found is None:
            atoms: list[Any] = []
            bare = self._collect(ir, frozenset(), atoms)
            found = self._parts[key] = (tuple(self._atom(atom) for atom in atoms), bare)
            self._seen.append(ir)
        guards, bare = found
        env = {"segment": {"program": program}}
        return tuple(guard(env) for guard in guards), bare

    def _collect(self, ir: Any, bound: frozenset[str], atoms: list[Any]) -> bool:
        """Append the largest program tests of `ir` to `atoms`; True when `segment.program` is
        also read outside them."""
        if not self.mentions(ir):
            return False
        if not isinstance(ir[0], str):  # call operands, list items
            return any([self._collect(part, bound, atoms) for part in ir])
        kind = ir[0]
        if kind in _FOLDABLE and "segment" not in bound and self._test_of_program(ir):
            atoms.append(ir)
            return False
        if ir == _PROGRAM:
            return True
        if kind in ("exists", "all"):
            outer = self._collect(ir[1], bound, atoms)
            return self._collect(ir[3], bound | {ir[2]}, atoms) or outer
        return any([self._collect(part, bound, atoms) for part in ir[1:]])

    def whole_first_word(self, ir: tuple[Any, ...], program: str) -> bool | None:
        """When `ir` is one first-word test (folded): whether it may hold for `program` (its
        residual is `ir` itself) or not (`false`); None for other forms."""
        if not self.first_word or ir[0] not in ("mcall", "call"):
            return None
        pattern = first_word_pattern(ir)
        if pattern is None:
            return None
        from rtk_policy.policy.guards.first_word import cannot_begin  # planning only

        return not cannot_begin(pattern, program)

    def _test_of_program(self, ir: tuple[Any, ...]) -> bool:
        """Whether `ir` is a program test: it reads nothing but `segment.program`, or it is a
        first-word test."""
        return _only_program(ir) or (self.first_word and first_word_pattern(ir) is not None)

    def specialize(self, ir: tuple[Any, ...], program: str) -> tuple[Any, ...]:
        """`ir` with `segment.program` replaced by `program` and constants folded."""
        if not ir or ir[0] == "unknown":
            return ir
        return self._spec(ir, program, frozenset())

    def _spec(self, ir: Any, program: str, bound: frozenset[str]) -> Any:
        if not self.mentions(ir):
            return ir
        fns = self.functions
        kind = ir[0]
        if kind in _FOLDABLE and "segment" not in bound:
            if self.first_word and first_word_pattern(ir) is not None:
                return ir if self._atom(ir)({"segment": {"program": program}}) else _FALSE
            atom = self._atom(ir)
            value = atom({"segment": {"program": program}}) if atom is not None else UNKNOWN
            if type(value) in (bool, int, str):
                return ("lit", value)
        if kind == "dot":
            if ir == _PROGRAM and "segment" not in bound:
                return ("lit", program)
            return ("dot", self._spec(ir[1], program, bound), ir[2])
        if kind in ("exists", "all"):
            target = self._spec(ir[1], program, bound)
            return (kind, target, ir[2], self._spec(ir[3], program, bound | {ir[2]}))
        if kind in ("and", "or"):
            return _chain(kind, [self._spec(part, program, bound) for part in _flatten(ir)])
        if kind == "list":
            return ("list", tuple(self._spec(item, program, bound) for item in ir[1]))
        if kind in ("call", "mcall"):  # (call, name, args) / (mcall, name, target, args)
            head = ir[:2] if kind == "call" else (kind, ir[1], self._spec(ir[2], program, bound))
            node = (*head, tuple(self._spec(a, program, bound) for a in ir[-1]))
        else:  # not, rel, add, index: every tuple part is an operand
            node = tuple(self._spec(p, program, bound) if isinstance(p, tuple) else p for p in ir)
        return _fold(node, fns) if kind in _FOLDABLE else node


def _only_program(ir: Any) -> bool:
    """True when `ir` reads no variable but `segment.program` and calls no impure function."""
    if not isinstance(ir, tuple) or not ir:
        return True
    if not isinstance(ir[0], str):  # the operands of a call or the items of a list
        return all(_only_program(part) for part in ir)
    if ir == _PROGRAM or ir[0] == "lit":
        return True
    if ir[0] in ("ident", "exists", "all", "unknown") or (ir[0] == "call" and ir[1] in _IMPURE):
        return False
    return all(_only_program(part) for part in ir[1:])


def _flatten(ir: tuple[Any, ...]) -> list[Any]:
    """The operands of a chain of one operator (`a && b && c`)."""
    found: list[Any] = []
    for side in ir[1:]:
        found.extend(_flatten(side) if isinstance(side, tuple) and side[0] == ir[0] else [side])
    return found


def _chain(kind: str, parts: list[Any]) -> tuple[Any, ...]:
    """`&&`/`||` of specialised operands: collapsed on a deciding literal, neutral ones dropped."""
    deciding, neutral = (_FALSE, _TRUE) if kind == "and" else (_TRUE, _FALSE)
    if deciding in parts:
        return deciding
    kept = [part for part in parts if part != neutral]
    if not kept:
        return neutral
    node = kept[-1]
    for part in reversed(kept[:-1]):
        node = (kind, part, node)
    return node


def _constant(ir: Any) -> bool:
    if not isinstance(ir, tuple) or not ir:
        return True  # an operator name or a function name
    if ir[0] == "lit":
        return True
    if ir[0] == "list":
        return all(_constant(item) for item in ir[1])
    return False


def _fold(node: tuple[Any, ...], fns: dict[Any, Any]) -> tuple[Any, ...]:
    """`node` as a literal when all its operands are literals and the guard gives a plain value."""
    if node[0] == "call":
        if node[1] in _IMPURE:
            return node
        operands = node[2]
    elif node[0] == "mcall":
        operands = (node[2], *node[3])
    else:
        operands = node[1:]
    if not all(_constant(part) for part in operands):
        return node
    guard = build_guard(node, fns)
    value = guard({}) if guard is not None else UNKNOWN
    if type(value) in (bool, int, str):
        return ("lit", value)
    return node
