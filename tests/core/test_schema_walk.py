"""``validation.walk.subschemas`` visits exactly the subschemas the schema-valued keywords hold, in the
documented order (pre-order; ``properties``... before ``items``... before ``anyOf``...), whatever the
order of the keys in the schema: the order of lint findings depends on it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from reyn_core.validation.walk import _SCHEMA_ARRAYS, _SCHEMA_MAPS, _SCHEMA_VALUED, subschemas


def by_definition(node: Any, ptr: str = "") -> list[tuple[str, Any]]:
    """The walk as its docstring defines it, recursively (the test's oracle)."""
    if not isinstance(node, Mapping):
        return []
    out = [(ptr, node)]
    for key in _SCHEMA_MAPS:
        if isinstance(node.get(key), Mapping):
            for name, child in node[key].items():
                token = str(name).replace("~", "~0").replace("/", "~1")
                out += by_definition(child, f"{ptr}/{key}/{token}")
    for key in _SCHEMA_VALUED:
        if isinstance(node.get(key), Mapping):
            out += by_definition(node[key], f"{ptr}/{key}")
    for key in _SCHEMA_ARRAYS:
        if isinstance(node.get(key), list):
            for i, child in enumerate(node[key]):
                out += by_definition(child, f"{ptr}/{key}/{i}")
    return out


KEYWORDS = (*_SCHEMA_MAPS, *_SCHEMA_VALUED, *_SCHEMA_ARRAYS, "type", "enum", "description")
names = st.sampled_from(["a", "b/c", "t~1", "kind", "0"])
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=3))


def schema_values(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        scalars, children, st.lists(children, max_size=3), st.dictionaries(names, children, max_size=3)
    )


schemas = st.recursive(
    st.dictionaries(st.sampled_from(KEYWORDS), scalars, max_size=3),
    lambda inner: st.dictionaries(st.sampled_from(KEYWORDS), schema_values(inner), max_size=5),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(schemas)
def test_the_walk_is_the_definition_in_order(schema: dict[str, Any]) -> None:
    assert [(p, id(s)) for p, s in subschemas(schema)] == [(p, id(s)) for p, s in by_definition(schema)]


def test_keyword_order_not_key_order() -> None:
    schema = {
        "anyOf": [{"type": "string"}],
        "items": {"type": "integer"},
        "properties": {"x": {"type": "null"}},
        "$defs": {"d": {}},
    }
    assert [p for p, _ in subschemas(schema)] == ["", "/properties/x", "/$defs/d", "/items", "/anyOf/0"]
