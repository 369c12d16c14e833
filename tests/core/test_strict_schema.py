"""``to_strict`` builds the OpenAI strict form in one walk of the schema it is given: the result shares
nothing with it, the input is untouched, key order is the input's (new keys after), and mappings
other than dict and tuples are read like dicts and lists."""

from __future__ import annotations

import json
from types import MappingProxyType
from typing import Any

import pytest

from reyn_core.errors import StrictSchemaError
from reyn_core.provider_schemas import to_strict

SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "d",
    "properties": {
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "default": ["a"]},
        "mode": {"oneOf": [{"type": "string", "const": "x"}, {"type": "integer"}]},
        "spec": {"$ref": "#/$defs/spec"},
    },
    "required": ["tags"],
    "$defs": {"spec": {"type": "object", "properties": {"n": {"type": "integer"}}}},
}


def containers(value: Any) -> list[Any]:
    found = [value] if isinstance(value, dict | list) else []
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    for child in children:
        found += containers(child)
    return found


def test_strict_form_shares_no_container_with_the_input_and_leaves_it_unchanged() -> None:
    before = json.dumps(SCHEMA)
    strict = to_strict(SCHEMA, tool="t")
    assert json.dumps(SCHEMA) == before
    inputs = {id(c) for c in containers(SCHEMA)}
    assert not [c for c in containers(strict) if id(c) in inputs]


def test_strict_form_keeps_the_input_key_order_and_adds_keys_after_it() -> None:
    strict = to_strict(SCHEMA, tool="t")
    assert list(strict) == ["type", "description", "properties", "required", "$defs", "additionalProperties"]
    assert list(strict["properties"]) == ["tags", "mode", "spec"]
    assert strict["properties"]["mode"] == {
        "anyOf": [{"type": "string", "const": "x"}, {"type": "integer"}, {"type": "null"}]
    }
    assert strict["properties"]["tags"] == {
        "type": "array",
        "items": {"type": "string", "enum": ["a", "b"]},
    }  # required: not made nullable; its default dropped
    assert strict["$defs"]["spec"]["required"] == ["n"]


def test_strict_form_reads_other_mappings_and_tuples_as_dicts_and_lists() -> None:
    frozen = MappingProxyType(
        {
            "type": "object",
            "properties": MappingProxyType({"a": MappingProxyType({"anyOf": ({"type": "string"},)})}),
            "required": ("a",),
        }
    )
    strict = to_strict(frozen, tool="t")
    assert strict == {
        "type": "object",
        "properties": {"a": {"anyOf": [{"type": "string"}]}},
        "required": ["a"],
        "additionalProperties": False,
    }
    assert type(strict["properties"]["a"]["anyOf"]) is list


def test_strict_form_refuses_what_it_cannot_express_naming_where() -> None:
    with pytest.raises(StrictSchemaError, match=r"'not' at /properties/a is not supported"):
        to_strict({"type": "object", "properties": {"a": {"not": {}}}}, tool="t")
