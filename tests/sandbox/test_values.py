"""The leaf's value types (`Grants`, `SandboxStatus`, the layout's `Mount` and `Layout`) without
`dataclasses`: immutable, equal only to their own type with equal fields, hashed alike, rebuilt
through their checks by `replace`, pickle and copy. (The launcher imports neither `dataclasses` nor
what it brings, `inspect`, `ast`, `typing`: test_launcher_start.py pins what a launch imports.)"""

from __future__ import annotations

import copy
import pickle

import pytest

from reyn_sandbox import Grants, GrantsError, SandboxStatus
from reyn_sandbox._layout import Layout, Mount
from reyn_sandbox._value import Value


def _values() -> list[object]:
    return [
        Grants(read_roots=("/usr",), cpu_seconds=5),
        SandboxStatus(True, 6, ("landlock",)),
        Mount("/w", True, granted=True, identity=(1, 2, True), what="write root /w"),
        Layout((Mount("/usr", False),), (), (("/w/.env", True),)),
    ]


@pytest.mark.parametrize("value", _values(), ids=lambda v: type(v).__name__)
def test_a_value_refuses_every_change(value: object) -> None:
    field = type(value).field_names()[0]  # type: ignore[attr-defined]
    before = getattr(value, field)
    with pytest.raises(AttributeError, match="is immutable: cannot assign"):
        setattr(value, field, before)
    with pytest.raises(AttributeError, match="is immutable: cannot delete"):
        delattr(value, field)
    with pytest.raises(AttributeError):
        value.added = 1  # type: ignore[attr-defined]  # no instance dict to add to either
    assert not hasattr(value, "__dict__") and getattr(value, field) == before


@pytest.mark.parametrize("value", _values(), ids=lambda v: type(v).__name__)
def test_a_value_equals_only_its_own_type_with_equal_fields(value: object) -> None:
    twin = type(value)(**value.as_dict())  # type: ignore[attr-defined]
    assert twin == value and hash(twin) == hash(value) and twin is not value  # positive control
    assert value != tuple(value.as_dict().values())  # type: ignore[attr-defined]
    assert value != value.as_dict()  # type: ignore[attr-defined]
    field = type(value).field_names()[0]  # type: ignore[attr-defined]
    assert {value, twin} == {value}
    assert repr(value).startswith(f"{type(value).__name__}({field}=")


def test_grants_compare_after_normalizing_and_differ_by_any_field() -> None:
    assert Grants(read_roots=["/usr//share/"]) == Grants(read_roots=("/usr/share",))
    assert Grants(read_roots=("/usr",)) != Grants(read_roots=("/usr",), network=True)
    assert Grants() != SandboxStatus(True, 6, ())


def test_replace_checks_the_new_value_as_the_constructor_does() -> None:
    grants = Grants(read_roots=("/usr",))
    assert grants.replace(cpu_seconds=5) == Grants(read_roots=("/usr",), cpu_seconds=5)  # positive control
    with pytest.raises(GrantsError, match="cpu_seconds must be a positive integer"):
        grants.replace(cpu_seconds=0)
    with pytest.raises(GrantsError, match="is not an absolute path"):
        grants.replace(write_roots=("relative",))
    with pytest.raises(TypeError):
        grants.replace(unknown=1)
    assert grants.cpu_seconds == 60  # unchanged


@pytest.mark.parametrize("value", _values(), ids=lambda v: type(v).__name__)
def test_pickle_and_copy_rebuild_an_equal_value(value: object) -> None:
    for rebuilt in (pickle.loads(pickle.dumps(value)), copy.copy(value), copy.deepcopy(value)):
        assert rebuilt == value and type(rebuilt) is type(value)


def test_what_pickle_rebuilds_with_is_checked_as_the_constructor_does() -> None:
    rebuild, (cls, fields) = Grants(cpu_seconds=5).__reduce__()
    assert rebuild(cls, fields) == Grants(cpu_seconds=5)  # positive control
    with pytest.raises(GrantsError, match="cpu_seconds must be a positive integer"):
        rebuild(cls, {**fields, "cpu_seconds": 0})


def test_the_json_form_round_trips() -> None:
    grants = Grants(read_roots=("/usr",), hide=("/usr/secret",), identities=(("/usr", 1, 2, True),))
    assert Grants.from_json(grants.to_json()) == grants


@pytest.mark.parametrize("cls", [Grants, SandboxStatus, Mount, Layout], ids=lambda c: c.__name__)
def test_a_value_type_cannot_be_subclassed(cls: type) -> None:
    """Its fields are its own ``__slots__``: a subclass's would hide the base's from ``_init``,
    equality, hashing and ``repr``. Refused when the class is made; a value type deriving from
    ``Value`` alone is made as any other (the positive control)."""
    with pytest.raises(TypeError, match=f"{cls.__name__} is a value type, which cannot be subclassed"):
        type("Derived", (cls,), {"__slots__": ("extra",)})
    with pytest.raises(TypeError, match="cannot be subclassed"):
        type("Derived", (cls,), {"__slots__": ()})  # adding no field is refused the same

    class Point(Value):
        __slots__ = ("x", "y")

        def __init__(self, x: int, y: int) -> None:
            self._init(x=x, y=y)

    assert Point(1, 2) == Point(1, 2) != Point(1, 3) and repr(Point(1, 2)) == "Point(x=1, y=2)"
