"""One JSON-pointer walk (``reyn_core.jsondata.follow_pointer``) for the local ``$ref`` targets the
reference screen checks and the provider adapter inlines: escapes, indexes and misses."""

from __future__ import annotations

from typing import Any

import pytest

from reyn_core.jsondata import follow_pointer

DOC: dict[str, Any] = {"$defs": {"a/b": {"type": "string"}, "t~n": [{"x": 1}, {"y": None}]}, "n": 3}


@pytest.mark.parametrize(
    ("pointer", "value"),
    [
        ("", DOC),
        ("/$defs/a~1b", {"type": "string"}),
        ("/$defs/t~0n/1", {"y": None}),
        ("/$defs/t~0n/1/y", None),  # found, and the value is null
    ],
)
def test_a_pointer_names_the_value_it_spells(pointer: str, value: Any) -> None:
    assert follow_pointer(DOC, pointer) == (True, value)


@pytest.mark.parametrize(
    "pointer", ["/missing", "/$defs/t~0n/2", "/$defs/t~0n/-1", "/n/0", "/$defs/a/b", "no-slash"]
)
def test_a_pointer_that_names_nothing_is_a_miss_not_an_error(pointer: str) -> None:
    assert follow_pointer(DOC, pointer) == (False, None)
