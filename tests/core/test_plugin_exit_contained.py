"""A plugin's callable that calls ``sys.exit`` (or raises ``SystemExit``) is contained wherever the
core runs it at render or call time — availability checks and schema enrichers — exactly like an
exception: the tool is hidden or rendered with its registered schema, the rest keeps working, and
the host is not stopped. ``KeyboardInterrupt`` (the operator's Ctrl-C) still propagates."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from reyn_core import ToolContext, ToolDefinition
from reyn_core.errors import ToolGateRefused
from reyn_core.host import RegistryBuilder, gates, invoke_tool, render_phase, render_router

SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}}


def echo(text: str = "") -> str:
    return text


def exits(*_: Any) -> Any:
    sys.exit(3)


def interrupts(*_: Any) -> Any:
    raise KeyboardInterrupt


def registry_with(**fields: Any) -> Any:
    builder = RegistryBuilder()
    builder.register(
        ToolDefinition(name="fragile", description="Fragile.", parameters=SCHEMA, handler=echo, **fields)
    )
    builder.register(ToolDefinition(name="steady", description="Steady.", parameters=SCHEMA, handler=echo))
    return builder.freeze()


def test_an_availability_check_that_exits_hides_its_tool_and_spares_the_others(operator_log: Any) -> None:
    registry = registry_with(available=exits)
    ctx = ToolContext(surface="router")
    assert [t["function"]["name"] for t in render_router(registry, ctx)] == ["steady"]
    assert [
        op.kind for op in render_phase(registry, ToolContext(surface="phase"), ["fragile", "steady"]).ops
    ] == ["steady"]
    decision = gates.check(registry.get("fragile"), "router", ctx, registry=registry)
    assert not decision.allowed and decision.layer == "call"
    assert "tool 'fragile' is unavailable: its availability check failed (RT011)" in decision.reason
    assert "SystemExit: 3" in operator_log.record(decision.reason)  # the operator's log says what it raised


async def test_a_call_to_a_tool_whose_availability_check_exits_is_refused_not_fatal() -> None:
    registry = registry_with(available=exits)
    ctx = ToolContext(surface="router")
    with pytest.raises(ToolGateRefused, match=r"its availability check failed \(RT011\)"):
        await invoke_tool(registry, "fragile", {"text": "x"}, ctx)
    assert await invoke_tool(registry, "steady", {"text": "x"}, ctx) == "x"


def test_a_schema_enricher_that_exits_renders_the_registered_schema(caplog: pytest.LogCaptureFixture) -> None:
    registry = registry_with(schema_enricher=exits)
    tools = {
        t["function"]["name"]: t["function"] for t in render_router(registry, ToolContext(surface="router"))
    }
    assert set(tools) == {"fragile", "steady"}
    assert tools["fragile"]["parameters"] == dict(registry.get("fragile").parameters)
    assert "schema_enricher of tool 'fragile' failed (SystemExit: 3)" in caplog.text


def test_keyboard_interrupt_in_an_availability_check_still_reaches_the_operator() -> None:
    registry = registry_with(available=interrupts)
    with pytest.raises(KeyboardInterrupt):
        render_router(registry, ToolContext(surface="router"))
