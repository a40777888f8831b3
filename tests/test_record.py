"""rtk_policy.util.record: the attrs-free value classes of the decision path."""

from __future__ import annotations

import copy
import pickle
import subprocess
import sys

import pytest

from rtk_policy.util import record
from rtk_policy.shell.model import Redirect


@record.frozen
class Point:
    """A test record."""

    x: int
    y: int = 0
    tags: tuple[str, ...] = ()

    @property
    def total(self) -> int:
        """x + y."""
        return self.x + self.y


@record.frozen(eq=False)
class Request:
    """Identity-compared, with a fresh dict per instance."""

    name: str
    extra: dict = record.Factory(dict)


@record.mutable
class Draft:
    """A working value."""

    words: list = record.Factory(list)
    done: bool = False


def test_construction_defaults_and_keywords() -> None:
    assert Point(1).y == 0 and Point(1, 2).y == 2 and Point(y=5, x=1).total == 6
    with pytest.raises(TypeError):
        Point()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword argument 'z'"):
        Point(1, z=3)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="multiple values for argument 'x'"):
        Point(1, x=3)  # type: ignore[misc]
    with pytest.raises(TypeError, match="takes 3 arguments but 4"):
        Point(1, 2, (), 4)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="missing required argument 'x'"):
        Point(y=1)  # type: ignore[call-arg]


def test_frozen_instances_refuse_changes() -> None:
    point = Point(1)
    with pytest.raises(record.FrozenError):
        point.x = 2  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del point.x
    with pytest.raises(AttributeError):
        point.other = 1  # type: ignore[attr-defined]  # slotted: no new attributes either
    assert point.x == 1


def test_value_equality_and_hashing() -> None:
    assert Point(1, 2, ("a",)) == Point(1, 2, ("a",))
    assert Point(1, 2) != Point(1, 3)
    assert len({Point(1, 2), Point(1, 2), Point(2, 1)}) == 2
    assert Point(1, 2) != (1, 2, ())  # not a tuple
    assert Point(1, 2) != Redirect(">", 1, "x", True)


def test_identity_records_and_factories() -> None:
    first, second = Request("a"), Request("a")
    assert first != second and first == first
    first.extra["k"] = 1
    assert second.extra == {}  # a fresh dict each


def test_mutable_records_change_and_keep_their_own_lists() -> None:
    one, two = Draft(), Draft()
    one.words.append("x")
    one.done = True
    assert (one.words, one.done, two.words, two.done) == (["x"], True, [], False)


def test_evolve_fields_and_asdict() -> None:
    point = Point(1, 2, ("a",))
    moved = record.evolve(point, y=5)
    assert moved == Point(1, 5, ("a",)) and point.y == 2
    with pytest.raises(TypeError, match="no field 'z'"):
        record.evolve(point, z=1)
    assert [(f.name, f.type) for f in record.fields(Point)] == [
        ("x", "int"),
        ("y", "int"),
        ("tags", "tuple[str, ...]"),
    ]
    assert record.fields(Point)[0].default is record.NOTHING and record.fields(Point)[1].default == 0
    with pytest.raises(TypeError):
        record.fields(int)
    assert record.asdict(Point(1, 2, ("a",))) == {"x": 1, "y": 2, "tags": ["a"]}
    assert record.asdict({"p": (Point(3),)}) == {"p": [{"x": 3, "y": 0, "tags": []}]}


def test_repr_pickle_and_copy_round_trip() -> None:
    point = Point(1, 2, ("a",))
    assert repr(point) == "Point(x=1, y=2, tags=('a',))"
    assert pickle.loads(pickle.dumps(point)) == point
    assert copy.copy(point) == point and copy.deepcopy(point) == point
    redirect = Redirect(">", 1, "out", True)
    assert pickle.loads(pickle.dumps(redirect, protocol=pickle.HIGHEST_PROTOCOL)) == redirect


def test_properties_methods_and_docstrings_are_kept() -> None:
    assert Point.__doc__ == "A test record." and Point(2, 3).total == 5
    assert Point.__qualname__ == "Point" and Point.__module__ == __name__


def test_a_record_cannot_extend_another() -> None:
    with pytest.raises(TypeError, match="cannot extend"):

        @record.frozen
        class Point3(Point):
            z: int = 0


def test_the_decision_path_imports_no_attrs() -> None:
    """The point of the module: a cold decision never imports attrs (~30 ms)."""
    code = (
        "import sys\n"
        "from rtk_policy.engine.pipeline import Engine, Outcome\n"
        "from rtk_policy.commands import hook\n"
        "from rtk_policy.agents import claude\n"
        "from rtk_policy.shell import parse\n"
        "parse('sudo git status && ls | head -3')\n"
        "print('attr' in sys.modules or 'attrs' in sys.modules)\n"
    )
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "False"


def test_a_generated_init_after_many_instances_builds_the_same_values(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """After `COMPILE_AFTER` instances a class gets a generated `__init__`: same values, defaults,
    fresh factories, frozenness and TypeErrors as before."""
    monkeypatch.setattr(record, "COMPILE_AFTER", 3)

    @record.frozen
    class Pair:
        left: int
        right: tuple[str, ...] = ()
        extra: list = record.Factory(list)

    @record.mutable
    class Work:
        items: list = record.Factory(list)
        done: bool = False

    generic = Pair.__init__, Work.__init__
    before = [Pair(1), Pair(1, ("a",)), Pair(right=("b",), left=2), Work(), Work([1], True), Work()]
    new = Pair.__init__, Work.__init__  # the third instance of each installed a generated one
    assert new[0] is not generic[0] and new[1] is not generic[1]
    after = [Pair(1), Pair(1, ("a",)), Pair(right=("b",), left=2), Work(), Work([1], True), Work()]
    assert (Pair.__init__, Work.__init__) == new
    assert before[:3] == after[:3] and list(map(repr, before)) == list(map(repr, after))
    assert type(after[0]) is Pair and after[0].extra == [] and after[0].extra is not after[1].extra
    assert after[3].items is not Work().items and after[4].done is True
    after[3].done = True
    assert after[3].done is True
    with pytest.raises(record.FrozenError):
        after[0].left = 5  # type: ignore[misc]
    with pytest.raises(AttributeError):
        after[0].other = 1  # type: ignore[attr-defined]
    assert copy.copy(after[1]) == after[1] and after[1] != Pair(1, ("b",))
    with pytest.raises(TypeError):
        Pair()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Pair(1, z=2)  # type: ignore[call-arg]


def test_a_class_may_compile_its_init_sooner(monkeypatch: pytest.MonkeyPatch) -> None:
    """`compile_after` replaces `COMPILE_AFTER` for one class (the classes every command builds,
    `record.PER_COMMAND`): its own count of instances decides, the others' is unchanged."""
    monkeypatch.setattr(record, "COMPILE_AFTER", 1000)

    @record.frozen(compile_after=2)
    class Early:
        name: str
        size: int = 0

    @record.mutable(compile_after=3)
    class Busy:
        items: list = record.Factory(list)

    @record.frozen
    class Late:
        name: str

    generic = Early.__init__, Busy.__init__, Late.__init__
    first = [Early("a"), Busy(), Late("a")]
    assert (Early.__init__, Busy.__init__, Late.__init__) == generic
    second = [Early("b", 2), Busy([1]), Busy(), Late("b")]
    assert Early.__init__ is not generic[0] and Busy.__init__ is not generic[1]
    assert Late.__init__ is generic[2]
    assert [Early("a"), Early("b", 2)] == [first[0], second[0]] and Early("c").size == 0
    assert second[1].items == [1] and Busy().items is not Busy().items
    with pytest.raises(record.FrozenError):
        second[0].size = 3  # type: ignore[misc]


def test_segments_compile_their_init_in_a_batch_not_in_a_cold_hook() -> None:
    """A fresh process parsing one command keeps the generic `__init__` of the classes every
    command builds (a cold hook compiles nothing); `record.PER_COMMAND` (64) commands in, they
    are compiled."""
    code = (
        "from rtk_policy.shell import parse\n"
        "from rtk_policy.shell.draft import Draft\n"
        "from rtk_policy.shell.model import CommandLine, Segment\n"
        "generic = [Segment.__init__, Draft.__init__, CommandLine.__init__]\n"
        "parse('cd app && git status | head -3')\n"
        "print([now is was for now, was in zip([Segment.__init__, Draft.__init__,"
        " CommandLine.__init__], generic)])\n"
        "for k in range(70):\n"
        "    parse(f'git log -{k} && ls src/{k}')\n"
        "print([now is was for now, was in zip([Segment.__init__, Draft.__init__,"
        " CommandLine.__init__], generic)])\n"
    )
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert found.stdout.split("\n")[:2] == ["[True, True, True]", "[False, False, False]"]


def test_a_class_that_does_not_fit_keeps_the_generic_init(monkeypatch: pytest.MonkeyPatch) -> None:
    """A required field after a defaulted one cannot be a Python signature: the generic `__init__`
    stays and still binds keywords."""
    monkeypatch.setattr(record, "COMPILE_AFTER", 2)

    @record.frozen
    class Odd:
        a: int = 0
        b: int  # type: ignore[misc]

    generic = Odd.__init__
    values = [Odd(b=k) for k in range(4)]
    assert Odd.__init__ is generic and [v.b for v in values] == [0, 1, 2, 3]


class Span(record.NamedTuple):
    """A test tuple record."""

    start: int
    end: int = -1
    label: str = ""

    def length(self) -> int:
        """end - start."""
        return self.end - self.start


def test_named_tuples_are_tuples_with_their_fields_defaults_and_methods() -> None:
    """`record.NamedTuple` classes behave as `typing.NamedTuple` ones."""
    span = Span(2, 5)
    assert isinstance(span, tuple) and tuple(span) == (2, 5, "")
    assert span == Span(start=2, end=5) and span.length() == 3 and Span(1).end == -1
    assert Span._fields == ("start", "end", "label")
    assert Span._field_defaults == {"end": -1, "label": ""}
    assert span._replace(label="x") == (2, 5, "x")
    assert repr(span) == "Span(start=2, end=5, label='')"
    assert Span.__doc__ == "A test tuple record." and Span.__slots__ == ()
    with pytest.raises(AttributeError):
        span.other = 1  # type: ignore[attr-defined]
    assert pickle.loads(pickle.dumps(span)) == span
    with pytest.raises(TypeError):
        Span()  # type: ignore[call-arg]


def test_named_tuples_import_no_typing() -> None:
    """The point of `record.NamedTuple`: typed tuples without `import typing` (~4 ms cold)."""
    code = (
        "import sys; from rtk_policy.util import record\n"
        "class P(record.NamedTuple):\n    a: int\n"
        "print('typing' in sys.modules, P(1))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.split("\n")[0] == "False P(a=1)", done.stderr
