"""Typed results over MCP: a tool with a return type is listed with an ``outputSchema`` and answers
with ``structuredContent`` that conforms to it — objects as they are, lists and scalars wrapped under
``result`` — checked by the real SDK client, which validates structured content against the schema."""

from __future__ import annotations

import json

import mcp_types as types
from mcp import Client

from .conftest import ServeWorld


def _text(result: types.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def test_typed_tools_are_listed_with_an_output_schema(serve_world: ServeWorld) -> None:
    async with Client(serve_world.stdio()) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert tools["probe_list"].output_schema == {
        "type": "object",
        "properties": {"result": {"type": "array", "items": {"type": "string"}}},
        "required": ["result"],
    }
    reading = tools["probe_reading"].output_schema
    assert reading["type"] == "object" and set(reading["properties"]) == {"meter", "value", "unit"}
    assert reading["properties"]["unit"] == {"$ref": "#/$defs/Unit", "default": "kWh"}
    assert reading["$defs"]["Unit"]["enum"] == ["kWh", "MWh"]
    assert tools["probe_echo"].output_schema == {"type": "object", "additionalProperties": True}
    assert tools["probe_text"].output_schema["properties"]["result"] == {"type": "string"}
    assert tools["probe_untyped"].output_schema is None  # no annotation: nothing promised
    assert tools["read_file"].output_schema is not None  # the packs' typed tools too


async def test_typed_results_come_back_as_structured_content(serve_world: ServeWorld) -> None:
    async with Client(serve_world.stdio()) as client:
        listed = await client.call_tool("probe_list", {"count": 2})
        reading = await client.call_tool("probe_reading", {"meter": "m1"})
        untyped = await client.call_tool("probe_untyped", {})
    assert not listed.is_error and listed.structured_content == {"result": ["item-0", "item-1"]}
    assert json.loads(_text(listed)) == ["item-0", "item-1"]  # the text is the result itself
    assert reading.structured_content == {"meter": "m1", "value": 1.5, "unit": "kWh"}
    assert untyped.structured_content == {"flag": True}  # an object result without a schema: as before


async def test_a_refused_call_of_a_typed_tool_is_an_error_without_structured_content(
    serve_world: ServeWorld,
) -> None:
    async with Client(serve_world.stdio()) as client:
        result = await client.call_tool("probe_list", {"count": "many"})
    assert result.is_error and result.structured_content is None
    assert _text(result).startswith("invalid arguments for ")


async def test_mcp_is_its_own_render_target_and_keeps_the_schema_dialect(serve_world: ServeWorld) -> None:
    async with Client(serve_world.stdio()) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        called = await client.call_tool("probe_dialect", {"n": 3})
    assert tools["probe_dialect"].input_schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert not called.is_error
    # the provider targets drop it (the tools array is not a schema document)
    router = {e["function"]["name"]: e for e in serve_world.router_render()}
    assert "$schema" not in router["probe_dialect"]["function"]["parameters"]


def test_the_serve_log_names_no_provider_lint_and_no_unserved_tool(serve_world: ServeWorld) -> None:
    import subprocess

    from .conftest import REYN

    proc = subprocess.run(
        [REYN, "mcp", "serve"],
        cwd=serve_world.root,
        env=serve_world.env(),
        stdin=subprocess.DEVNULL,  # end of input: the server starts, logs, and stops
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "serving" in proc.stderr
    assert "RS101" not in proc.stderr and "RS102" not in proc.stderr
    assert "probe_phase_map" not in proc.stderr  # phase-only: not served, so never named
    # positive control: the operator's view still shows what a provider cannot take
    shown = serve_world.reyn("plugins", "show", "serve_probe")
    assert "RS101" in shown.stdout and "probe_phase_map" in shown.stdout
