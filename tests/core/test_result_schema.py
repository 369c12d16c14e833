"""``ToolDefinition.returns``: the result schema ``@tool`` derives from the return annotation, the
registration checks it passes, and ``output_schema`` (an object root; anything else wrapped)."""

from __future__ import annotations

import enum
from typing import Any

import pytest
from pydantic import BaseModel

from reyn_core import ToolDefinition, ToolRegistrationError, tool
from reyn_core.host import RegistryBuilder, output_schema


class Colour(enum.Enum):
    red = "red"
    blue = "blue"


class Paint(BaseModel):
    name: str
    colour: Colour
    title: str = ""  # a property called "title" is data, not pydantic's noise


def test_a_scalar_return_type_gives_its_schema() -> None:
    @tool
    def count(text: str) -> int:
        """Count."""
        return len(text)

    assert count.returns == {"type": "integer"}


def test_a_list_return_type_gives_an_array_schema() -> None:
    @tool
    def names(n: int) -> list[str]:
        """Names."""
        return []

    assert names.returns == {"type": "array", "items": {"type": "string"}}


def test_a_model_return_type_gives_the_serialised_form_without_title_noise() -> None:
    @tool
    def paint(name: str) -> Paint:
        """Paint."""
        return Paint(name=name, colour=Colour.red)

    schema = paint.returns
    assert schema is not None and "title" not in schema
    assert set(schema["properties"]) == {"name", "colour", "title"}
    assert schema["properties"]["title"] == {"type": "string", "default": ""}
    assert schema["$defs"]["Colour"] == {"enum": ["red", "blue"], "type": "string"}


async def test_an_async_handler_is_described_by_what_it_awaits_to() -> None:
    @tool
    async def fetch(url: str) -> dict[str, str]:
        """Fetch."""
        return {}

    assert fetch.returns == {"type": "object", "additionalProperties": {"type": "string"}}


@pytest.mark.parametrize("annotation", ["none", "any", "missing", "unresolvable"])
def test_no_usable_return_annotation_gives_no_schema(annotation: str) -> None:
    def plain(text: str):
        """Plain."""
        return text

    if annotation == "none":
        plain.__annotations__["return"] = None
    elif annotation == "any":
        plain.__annotations__["return"] = Any
    elif annotation == "unresolvable":
        plain.__annotations__["return"] = "NoSuchType"
    assert tool(plain).returns is None


def test_output_schema_keeps_an_object_and_wraps_everything_else() -> None:
    obj = {"type": "object", "properties": {"a": {"type": "integer"}}}
    assert output_schema(obj) == (obj, False)
    wrapped, is_wrapped = output_schema({"type": "array", "items": {"$ref": "#/$defs/X"}, "$defs": {"X": {}}})
    assert is_wrapped
    assert wrapped == {
        "type": "object",
        "properties": {"result": {"type": "array", "items": {"$ref": "#/$defs/X"}}},
        "required": ["result"],
        "$defs": {"X": {}},  # references keep resolving from the new root
    }


def _definition(returns: Any) -> ToolDefinition:
    return ToolDefinition(
        name="t",
        description="T.",
        parameters={"type": "object", "properties": {}},
        handler=lambda: 1,
        returns=returns,
    )


@pytest.mark.parametrize(
    "returns, fragment",
    [
        ("string", "returns must be a JSON Schema object"),
        ({"$ref": "https://example.com/s.json"}, "returns:"),
        ({"x": {1, 2}}, "returns is not JSON"),
    ],
)
def test_a_bad_result_schema_is_refused_at_registration(returns: Any, fragment: str) -> None:
    with pytest.raises(ToolRegistrationError) as caught:
        RegistryBuilder().register(_definition(returns))
    assert caught.value.code == "RT006" and fragment in str(caught.value)


def test_a_good_result_schema_registers_as_a_private_copy() -> None:
    returns = {"type": "array", "items": {"type": "integer"}}
    builder = RegistryBuilder()
    builder.register(_definition(returns))
    returns["items"] = {"type": "string"}  # the plugin mutates its dict afterwards
    assert builder.freeze().get("t").returns == {"type": "array", "items": {"type": "integer"}}


@pytest.mark.parametrize("annotation", ["object", "list"])
def test_a_served_output_schema_shares_nothing_with_the_registry(annotation: str) -> None:
    # A client may change what it is served; the registered definition, and so its digest (what the
    # lock and the audit log name), must not move with it — at any depth, wrapped or not.
    from reyn_core.host import definition_digest

    if annotation == "object":

        @tool
        def paint() -> Paint:
            """Paint."""
            return Paint(name="wall", colour=Colour.red)

        definition = paint
    else:

        @tool
        def paints() -> list[Paint]:
            """Paints."""
            return []

        definition = paints
    registry = RegistryBuilder()
    registry.register(definition)
    frozen = registry.freeze()
    served = frozen.get(definition.name)
    before = (repr(served.returns), definition_digest(served))
    schema, _ = output_schema(served.returns)

    def scribble(node: Any) -> None:
        if isinstance(node, dict):
            for value in list(node.values()):
                scribble(value)
            node["scribbled"] = {"type": "string"}
        elif isinstance(node, list):
            for value in node:
                scribble(value)
            node.append("scribbled")

    scribble(schema)
    assert (repr(served.returns), definition_digest(served)) == before
    assert output_schema(served.returns)[0] != schema
