"""The ``conformance_probe`` test plugin: the tools the official MCP conformance suite
(``@modelcontextprotocol/conformance``) calls by name, written as ordinary Reyn tools — so the suite
checks ``reyn mcp serve`` itself, not a purpose-built server.

Only the scenarios of features Reyn offers have a tool here (see ``test_conformance.py`` for the
scenarios left out and why).
"""

from __future__ import annotations

import asyncio

from reyn_core import ToolContext, ToolDefinition, hookimpl, tool

REYN_API = 1


@tool(cluster="conformance", purity="read_only")
def test_simple_text() -> str:
    """Return a fixed line of text."""
    return "This is a simple text response for testing."


@tool(cluster="conformance", purity="read_only")
async def test_tool_with_progress(ctx: ToolContext) -> str:
    """Report progress 0, 50 and 100 of 100, about 50 ms apart."""
    for done in (0, 50, 100):
        ctx.report_progress(done, 100)
        if done < 100:
            await asyncio.sleep(0.05)
    return "progress reported"


@tool(cluster="conformance", purity="read_only")
async def test_tool_with_logging(ctx: ToolContext) -> str:
    """Log three info lines, about 50 ms apart."""
    ctx.log("info", "Tool execution started")
    await asyncio.sleep(0.05)
    ctx.log("info", "Tool processing data")
    await asyncio.sleep(0.05)
    ctx.log("info", "Tool execution completed")
    return "logged"


@tool(cluster="conformance", purity="read_only")
def test_error_handling() -> str:
    """Always fail."""
    raise RuntimeError("This tool intentionally returns an error for testing")


@tool(cluster="conformance", purity="external")
async def test_elicitation(message: str, ctx: ToolContext) -> str:
    """Ask the user through the host's ask_user bridge (MCP elicitation) and return the answer."""
    ask = ctx.bridge.require("ask_user", tool="test_elicitation")
    # The bridge's form has one field, "answer"; the suite's client fills the fields of its own form
    # (username, email), so the call ends with the error naming the missing field — after the
    # elicitation the scenario checks for.
    answer = await ask(question=message, options=[], ctx=ctx)
    return f"User response: {answer}"


def _dialect(name: str = "", address: dict | None = None) -> dict:
    return {"name": name, "address": address}


# The suite's json-schema-2020-12 tool: "$schema", "$defs" and additionalProperties must survive.
JSON_SCHEMA_2020_12_TOOL = ToolDefinition(
    name="json_schema_2020_12_tool",
    description="Tool with JSON Schema 2020-12 features",
    parameters={
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
            }
        },
        "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
        "additionalProperties": False,
    },
    handler=_dialect,
    cluster="conformance",
    purity="read_only",
)


TOOLS = (
    test_simple_text,
    test_tool_with_progress,
    test_tool_with_logging,
    test_error_handling,
    test_elicitation,
    JSON_SCHEMA_2020_12_TOOL,
)


@hookimpl
def reyn_register_tools(register, settings):
    for definition in TOOLS:
        register(definition)
