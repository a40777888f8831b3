"""The package's one kind of value class: frozen (and, for working values, mutable) records made
without attrs, so the hook's cold path never imports it.

It stays while a benchmark shows the cold path needs it. A cold `hook claude` on `git status`
(warm policy cache, a fresh interpreter per call) takes 46 ms of CPU with this module and 74 ms
when the same classes are made by attrs instead (this module's names bound to `attrs.frozen`,
`attrs.define`, `attrs.evolve`: `import attrs` pulls in typing, ast and copy); medians of 30
interleaved runs, 2026-12-01, Python 3.11.7, 2 cores at load ~7, bare `python -c pass` 20 ms.
`benchmarks/record_vs_attrs.py` times the class building alone: the 31 record classes (259
fields) of that call take 46 ms with attrs (import included) and 1.6 ms with this module (another
run, 27 classes at load ~6: 122 ms against 1.5 ms).

`frozen` makes the kind of class `@attrs.frozen` makes — slotted, immutable, compared and hashed
by value, built positionally or by keyword with defaults — from the class's annotations;
`mutable` its assignable twin (compared by identity); `evolve`, `fields` and `asdict` stand in for
attrs' functions of the same names. `NamedTuple` gives `typing.NamedTuple`'s class syntax for the
few values a hot loop builds as tuples.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, NamedTuple, TypeVar, dataclass_transform

    _T = TypeVar("_T")

    def Factory(make: Callable[[], _T]) -> _T:  # noqa: N802 - a class at run time
        """A default made anew for every instance (`DefaultFactory`); typed as the value made."""
        ...
else:

    def dataclass_transform(**_: object) -> object:
        """`typing.dataclass_transform` marks a decorator for type checkers only: a no-op here."""
        return lambda decorator: decorator

    class _NamedTupleMeta(type):
        """Makes each subclass of `NamedTuple` a `collections.namedtuple` of its annotations."""

        def __new__(mcls, name: str, bases: tuple, namespace: dict) -> type:
            if not bases:
                return super().__new__(mcls, name, bases, namespace)
            from collections import namedtuple

            names = tuple(namespace.get("__annotations__", {}))
            defaults = [namespace[key] for key in names if key in namespace]
            base = namedtuple(name, names, defaults=defaults, module=namespace["__module__"])
            body = {key: value for key, value in namespace.items() if key not in names}
            body["__slots__"] = ()
            return type(name, (base,), body)

    class NamedTuple(metaclass=_NamedTupleMeta):
        """`typing.NamedTuple`'s class syntax without importing typing: ``class Word(NamedTuple):
        raw: str ...`` is a `collections.namedtuple` subclass with those fields (and their
        defaults), slotted, its methods kept. Type checkers see `typing.NamedTuple` itself. For the
        values a hot loop builds or slices by the hundred thousand (words, the walker's `Ctx`),
        where a tuple is measurably faster than a record."""


class DefaultFactory:
    """A default made anew for every instance, e.g. ``tool_input: dict = Factory(dict)``."""

    __slots__ = ("make",)

    def __init__(self, make: Any) -> None:
        self.make = make


if not TYPE_CHECKING:
    Factory = DefaultFactory


class FrozenError(AttributeError):
    """A field of a frozen record was assigned or deleted."""


class Field:
    """One field of a record class: its name, its annotation as written, its default (`NOTHING`)."""

    __slots__ = ("name", "type", "default")

    def __init__(self, name: str, annotation: str, default: Any) -> None:
        self.name, self.type, self.default = name, annotation, default

    def __repr__(self) -> str:
        return f"Field({self.name!r}, {self.type!r})"


#: the `default` of a field without one
NOTHING = object()


@dataclass_transform(eq_default=True, frozen_default=True, field_specifiers=())
def frozen(
    cls: type[_T] | None = None, /, *, eq: bool = True, compile_after: int | None = None
) -> Any:
    """Class decorator: a slotted, immutable copy of `cls` with `__init__`, `__repr__`, pickling and
    (unless `eq=False`, which keeps identity) value equality and hashing made from its annotations.
    A class attribute named like a field is that field's default; a `Factory` default is called per
    instance. Properties, methods and the docstring are kept. `compile_after`: how many instances
    the class builds before its `__init__` is generated (`COMPILE_AFTER` unless given; see
    `PER_COMMAND`)."""
    if cls is None:
        return lambda inner: _build(inner, eq, True, compile_after)
    return _build(cls, eq, True, compile_after)


@dataclass_transform(eq_default=False, field_specifiers=())
def mutable(cls: type[_T] | None = None, /, *, compile_after: int | None = None) -> Any:
    """Class decorator: like `frozen`, but the fields may be assigned and instances compare by
    identity (a working value such as a parser's draft, never a stage's output)."""
    if cls is None:
        return lambda inner: _build(inner, False, False, compile_after)
    return _build(cls, False, False, compile_after)


def fields(cls: type) -> tuple[Field, ...]:
    """The fields of a record class, in order."""
    found: tuple[Field, ...] | None = cls.__dict__.get("__record_fields__")
    if found is None:
        raise TypeError(f"{cls.__qualname__} is not a record class")
    return found


def evolve(record: _T, **changes: Any) -> _T:
    """A copy of `record` with `changes` applied (names must be fields)."""
    cls = type(record)
    values = {field.name: getattr(record, field.name) for field in fields(cls)}
    unknown = changes.keys() - values.keys()
    if unknown:
        raise TypeError(f"{cls.__qualname__} has no field {sorted(unknown)[0]!r}")
    values.update(changes)
    return cls(**values)


def asdict(value: Any) -> Any:
    """`value` as plain data: a record as a dict of its fields, tuples, lists and other sequences
    but strings (a cached rule's examples) as lists, dicts with their values converted,
    recursively (what `attrs.asdict` gives by default)."""
    if "__record_fields__" in type(value).__dict__:
        return {field.name: asdict(getattr(value, field.name)) for field in fields(type(value))}
    if isinstance(value, (tuple, list)) or (
        isinstance(value, Sequence) and not isinstance(value, (str, bytes, bytearray))
    ):
        return [asdict(item) for item in value]
    if isinstance(value, dict):
        return {key: asdict(item) for key, item in value.items()}
    return value


def _build(cls: type[_T], eq: bool, immutable: bool, compile_after: int | None) -> type[_T]:
    if any("__record_fields__" in vars(base) for base in cls.__mro__[1:]):
        raise TypeError(f"{cls.__qualname__}: a record class cannot extend another")
    own = cls.__dict__
    annotations: dict[str, str] = own.get("__annotations__", {})
    record_fields = tuple(
        Field(name, str(annotation), own.get(name, NOTHING))
        for name, annotation in annotations.items()
    )
    names = tuple(field.name for field in record_fields)
    namespace = {
        key: value
        for key, value in own.items()
        if key not in names and key not in ("__dict__", "__weakref__")
    }
    namespace["__slots__"] = names
    namespace["__record_fields__"] = record_fields
    namespace["__match_args__"] = names
    namespace["__qualname__"] = cls.__qualname__
    metaclass: type = type(cls)
    new: type[_T] = metaclass(cls.__name__, cls.__bases__, namespace)
    _add_methods(new, record_fields, eq, immutable, compile_after)
    return new


def _add_methods(
    cls: type,
    record_fields: tuple[Field, ...],
    eq: bool,
    immutable: bool,
    compile_after: int | None,
) -> None:
    """Give the new class its generated `__init__`, `__repr__`, pickling, equality and hash."""
    names = tuple(field.name for field in record_fields)
    values = _getter(names)
    methods: dict[str, Any] = {
        "__init__": _init(cls, record_fields, immutable, compile_after),
        "__repr__": _repr(cls.__qualname__, names),
        "__reduce__": lambda self: (type(self), values(self)),
    }
    if immutable:
        methods["__setattr__"] = methods["__delattr__"] = _refuse
    if eq:
        methods["__eq__"] = _eq(values)
        methods["__hash__"] = lambda self: hash((cls.__qualname__, values(self)))
    _set_methods(cls, methods)


def _set_methods(cls: type, methods: dict[str, Any]) -> None:
    """Set methods made at run time on `cls` (by `setattr`: no type checker can follow them)."""
    for name, method in methods.items():
        setattr(cls, name, method)


def _getter(names: tuple[str, ...]) -> Any:
    """A function giving the tuple of an instance's field values."""
    if len(names) > 1:
        return attrgetter(*names)
    if names:
        name = names[0]
        return lambda self: (getattr(self, name),)
    return lambda self: ()


#: A record class's `__init__` is generated as source after this many instances (`_fast_init`).
COMPILE_AFTER = 2048
#: The `compile_after` of the classes built for every command (segments, drafts, the command
#: line): a cold hook deciding one command builds a handful of each, so it still compiles nothing,
#: while a batch stops paying the generic `__init__` (~5x slower for a large record) after its
#: first few dozen commands instead of its first ~1,500 (the load-time classes, such as the packs'
#: examples, build hundreds per cold hook and keep `COMPILE_AFTER`).
PER_COMMAND = 64
#: `obj.__class__ = cls` without the frozen class's `__setattr__`
_set_class = object.__dict__["__class__"].__set__


def _init(
    cls: type, record_fields: tuple[Field, ...], immutable: bool, compile_after: int | None
) -> Any:
    """`__init__` taking every field positionally or by keyword, with the fields' defaults.

    Made without `compile` (its first call costs a cold process ~1.6 ms): a call giving every field
    positionally fills the slots at once; any other call is bound by `_binder` first. The slots are
    set through their descriptors, which a frozen class's `__setattr__` does not stop. Once the
    class has built `compile_after` (by default `COMPILE_AFTER`) instances (a long run, never a
    cold hook), `_fast_init` replaces it.
    """
    count = len(record_fields)
    limit = compile_after or COMPILE_AFTER  #: instances built before `_fast_init` replaces it
    setters = tuple(getattr(cls, field.name).__set__ for field in record_fields)
    bind = _binder(cls.__qualname__, record_fields)
    built = 0

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        nonlocal built
        built += 1
        if built == limit:
            _set_methods(cls, {"__init__": _fast_init(cls, record_fields, immutable) or __init__})
        if kwargs or len(args) != count:
            args = bind(args, kwargs)
        for setter, value in zip(setters, args, strict=True):
            setter(self, value)

    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    return __init__


def _fast_init(cls: type, record_fields: tuple[Field, ...], immutable: bool) -> Any:
    """A generated `__init__` (`def __init__(self, x, y=_d1): self.x = x; ...`): Python binds the
    arguments and stores each slot with a specialised bytecode, ~5x faster than `_init` for a
    large record. A frozen instance is filled as an instance of a mutable twin class with the same
    slots, then given its own class back. Argument errors are Python's own TypeErrors. None when
    the class does not fit (a required field after a defaulted one, a base class, a clashing name).
    """
    names = [field.name for field in record_fields]
    namespace: dict[str, Any] = {"_set_class": _set_class, "_cls": cls}
    if immutable:
        namespace["_twin"] = type(cls.__name__, (), {"__slots__": tuple(names)})
    params, body, seen_default = [], [], False
    for at, field in enumerate(record_fields):
        name = field.name
        if field.default is NOTHING:
            if seen_default:
                return None
            params.append(name)
        else:
            seen_default = True
            namespace[f"_d{at}"] = field.default
            params.append(f"{name}=_d{at}")
            if isinstance(field.default, DefaultFactory):
                body.append(f"    if {name} is _d{at}:\n        {name} = _d{at}.make()\n")
        body.append(f"    self.{name} = {name}\n")
    if cls.__bases__ != (object,) or "self" in names or not namespace.keys().isdisjoint(names):
        return None
    if immutable:
        body = ["    _set_class(self, _twin)\n", *body, "    _set_class(self, _cls)\n"]
    source = f"def __init__(self, {', '.join(params)}):\n{''.join(body) or '    pass'}\n"
    exec(source, namespace)  # noqa: S102 - the source is made of the class's own field names
    made = namespace["__init__"]
    made.__qualname__ = f"{cls.__qualname__}.__init__"
    return made


def _binder(qualname: str, record_fields: tuple[Field, ...]) -> Any:
    """A function `(args, kwargs) -> every field's value`, raising TypeError as Python would."""
    names = tuple(field.name for field in record_fields)
    count = len(names)
    where = {name: at for at, name in enumerate(names)}
    defaults = tuple(field.default for field in record_fields)
    fresh = tuple(at for at, default in enumerate(defaults) if isinstance(default, DefaultFactory))
    required = tuple(at for at, default in enumerate(defaults) if default is NOTHING)

    def bind(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        given = len(args)
        if given > count:
            raise TypeError(f"{qualname}() takes {count} arguments but {given} were given")
        values = [*args, *defaults[given:]]
        for name, value in kwargs.items():
            at = where.get(name)
            if at is None:
                raise TypeError(f"{qualname}() got an unexpected keyword argument {name!r}")
            if at < given:
                raise TypeError(f"{qualname}() got multiple values for argument {name!r}")
            values[at] = value
        for at in required:
            if at >= given and values[at] is NOTHING:
                raise TypeError(f"{qualname}() missing required argument {names[at]!r}")
        for at in fresh:
            if at >= given and values[at] is defaults[at]:  # not given: a new default
                values[at] = defaults[at].make()
        return values

    return bind


def _repr(qualname: str, names: tuple[str, ...]) -> Any:
    def __repr__(self: Any) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{qualname}({shown})"

    return __repr__


def _eq(values: Any) -> Any:
    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return values(self) == values(other)

    return __eq__


def _refuse(self: Any, name: str, *value: Any) -> None:
    raise FrozenError(f"{type(self).__qualname__}.{name} cannot be changed: the record is frozen")
