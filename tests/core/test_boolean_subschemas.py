"""A boolean subschema (``true``: any value; ``false``: none) is valid JSON Schema 2020-12: a tool
whose parameters use one registers, its calls are validated by it, and each render target adapts it
or says why not (OpenAI strict mode cannot type it: a problem, ``RS101``-style; Gemini's subset has
none: shown as ``{}``, reported) — never an ``AttributeError`` that refuses the tool as ``RT007``.
Control: the same tool with a typed property."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from reyn_core import ToolContext, ToolDefinition
from reyn_core.host import RegistryBuilder, dispatch_tool
from reyn_core.provider_schemas import adapt_parameters


def echo(**kwargs: Any) -> Any:
    return kwargs


SCHEMAS = {
    "property true": {"type": "object", "properties": {"a": True}},
    "property false": {"type": "object", "properties": {"a": False, "b": {"type": "string"}}},
    "items true": {"type": "object", "properties": {"a": {"type": "array", "items": True}}},
    "anyOf true": {"type": "object", "properties": {"a": {"anyOf": [True, {"type": "string"}]}}},
    "$ref to true": {"type": "object", "properties": {"a": {"$ref": "#/$defs/x"}}, "$defs": {"x": True}},
}


@pytest.mark.parametrize("label", SCHEMAS)
def test_a_boolean_subschema_is_adapted_or_reported_for_every_target(label: str) -> None:
    schema = SCHEMAS[label]
    strict = adapt_parameters(schema, "openai-strict")
    assert len(strict.problems) == 1 and "boolean subschema" in strict.problems[0]
    gemini = adapt_parameters(schema, "gemini")
    assert "True" not in repr(gemini.schema) and "False" not in repr(gemini.schema)
    assert all("boolean schema" in p for p in gemini.problems) and gemini.problems
    for target in ("openai", "anthropic", "mcp"):
        assert adapt_parameters(schema, target).problems == ()


def test_a_tool_with_a_boolean_subschema_registers_and_validates_calls() -> None:
    builder = RegistryBuilder()
    builder.register(
        ToolDefinition(name="anything", description="A.", parameters=SCHEMAS["property true"], handler=echo)
    )
    builder.register(
        ToolDefinition(name="nothing", description="N.", parameters=SCHEMAS["property false"], handler=echo)
    )
    typed = {"type": "object", "properties": {"a": {"type": "string"}}}  # the control
    builder.register(ToolDefinition(name="typed", description="T.", parameters=typed, handler=echo))
    registry = builder.freeze()
    ctx = ToolContext(surface="router")
    assert asyncio.run(dispatch_tool(registry, "anything", {"a": [1, {"x": None}]}, ctx))["status"] == "ok"
    refused = asyncio.run(dispatch_tool(registry, "nothing", {"a": 1}, ctx))
    assert refused["error"]["kind"] == "invalid_arguments"
    assert asyncio.run(dispatch_tool(registry, "nothing", {"b": "x"}, ctx))["status"] == "ok"
    assert asyncio.run(dispatch_tool(registry, "typed", {"a": "x"}, ctx))["status"] == "ok"
