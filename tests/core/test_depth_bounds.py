"""One depth bound (``reyn_core.jsondata.depth_within``) for arguments, schemas and phase output: the
limits sit exactly where they are documented, and every mapping counts — not only ``dict``."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import pytest

from reyn_core.jsondata import depth_within
from reyn_core.schema import MAX_SCHEMA_DEPTH, check_tool_schema
from reyn_core.validation import MAX_ARGUMENT_DEPTH, MAX_SCHEMA_NESTING, parse_arguments, schema_problems


def nested(levels: int, wrap: Any = dict) -> Any:
    """``levels`` containers, the outermost included: {"a": {"a": ... 1}}."""
    node: Any = 1
    for _ in range(levels):
        node = wrap({"a": node}) if wrap is not list else [node]
    return node


@pytest.mark.parametrize("wrap", [dict, list, MappingProxyType])
def test_depth_within_counts_the_outermost_container_as_one(wrap: Any) -> None:
    for limit in (1, 2, 5):
        assert depth_within(nested(limit, wrap), limit)
        assert not depth_within(nested(limit + 1, wrap), limit)
    assert depth_within(1, 0) and depth_within({}, 1) and not depth_within({}, 0)


def test_a_flat_object_takes_the_fast_path_and_a_nested_one_does_not() -> None:
    assert depth_within({"a": 1, "b": "x", "c": None, "d": 2.5, "e": True}, 1)
    assert not depth_within({"a": 1, "b": [1]}, 1)
    assert not depth_within({"a": 1, "b": MappingProxyType({})}, 1)


def test_argument_depth_limit_is_exact() -> None:
    assert parse_arguments(nested(MAX_ARGUMENT_DEPTH)) == (nested(MAX_ARGUMENT_DEPTH), [])
    value, problems = parse_arguments(nested(MAX_ARGUMENT_DEPTH + 1))
    assert value is None and "nest too deeply" in problems[0].message


def test_arguments_nesting_through_other_mappings_are_bounded_too() -> None:
    # A host may hand over read-only views; they nest like dicts and count like dicts.
    deep = {"a": nested(MAX_ARGUMENT_DEPTH, MappingProxyType)}
    value, problems = parse_arguments(deep)
    assert value is None and "nest too deeply" in problems[0].message


def test_schema_depth_limit_is_exact() -> None:
    def schema(levels_below_root: int) -> dict[str, Any]:
        return {"type": "object", "examples": nested(levels_below_root, list)}

    def rs002(s: dict[str, Any]) -> bool:
        return any(i.code == "RS002" for i in check_tool_schema(s, phase_usable=False))

    assert not rs002(schema(MAX_SCHEMA_DEPTH))
    assert rs002(schema(MAX_SCHEMA_DEPTH + 1))


def test_validator_factory_schema_nesting_limit_is_exact() -> None:
    def schema(levels: int) -> dict[str, Any]:
        return {"type": "object", "examples": nested(levels - 1, list)}

    assert not any("nests more than" in p.message for p in schema_problems(schema(MAX_SCHEMA_NESTING)))
    assert any("nests more than" in p.message for p in schema_problems(schema(MAX_SCHEMA_NESTING + 1)))
