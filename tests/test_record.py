"""rtk_policy.record: the attrs-free value classes of the decision path."""

from __future__ import annotations

import copy
import pickle
import subprocess
import sys

import pytest

from rtk_policy import record
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
        "from rtk_policy.engine import Engine, Outcome\n"
        "from rtk_policy.commands import hook\n"
        "from rtk_policy.agents import claude\n"
        "from rtk_policy.shell import parse\n"
        "parse('sudo git status && ls | head -3')\n"
        "print('attr' in sys.modules or 'attrs' in sys.modules)\n"
    )
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "False"
