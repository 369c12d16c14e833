"""A ``not_found`` answer's "did you mean" names only tools the caller may see (``gates.check``):
a near miss never reveals a tool hidden from this surface, this agent or this phase (issue 21)."""

from __future__ import annotations

from typing import Any

from registry_kit import frozen_registry

from reyn_core import ToolContext, ToolGates, tool
from reyn_core.host import OperatorPolicy, ToolRegistry, dispatch_tool


@tool(cluster="ops", purity="side_effect", gates=ToolGates(router="deny"))
async def phase_only_nuke(target: str) -> str:
    """Only phases may call this."""
    return target


@tool(cluster="ops", purity="read_only")
async def phase_only_peek(target: str) -> str:
    """Any surface may call this."""
    return target


@tool(cluster="ops", purity="read_only", available=lambda ctx: False)
async def secret_probe(target: str) -> str:
    """Never available here."""
    return target


def _registry(**kwargs: Any) -> ToolRegistry:
    return frozen_registry((phase_only_nuke, phase_only_peek, secret_probe), **kwargs)


async def _message(registry: ToolRegistry, name: str, surface: str = "router", **kw: Any) -> str:
    envelope = await dispatch_tool(registry, name, {}, ToolContext(surface=surface), **kw)
    assert envelope["error"]["kind"] == "not_found"
    return str(envelope["error"]["message"])


async def test_a_router_call_is_not_told_a_phase_only_tool() -> None:
    message = await _message(_registry(), "phase_only_nuk")
    assert "phase_only_nuke" not in message
    # positive control: the visible near miss is still suggested
    assert "did you mean 'phase_only_peek'" in message


async def test_a_phase_call_is_told_the_phase_only_tool() -> None:
    ops = ["phase_only_nuke", "phase_only_peek"]
    message = await _message(_registry(), "phase_only_nuk", "phase", allowed_ops=ops)
    assert "did you mean 'phase_only_nuke'" in message


async def test_an_unavailable_tool_is_not_suggested() -> None:
    message = await _message(_registry(), "secret_prob")
    assert "secret_probe" not in message and "did you mean" not in message


async def test_an_operator_excluded_tool_is_not_suggested() -> None:
    registry = _registry(operator=OperatorPolicy(router_exclude=frozenset({"phase_only_peek"})))
    message = await _message(registry, "phase_only_pee")
    assert "phase_only_peek" not in message


async def test_a_tool_excluded_by_the_caller_is_not_suggested() -> None:
    message = await _message(_registry(), "phase_only_pee", exclude=["phase_only_peek"])
    assert "phase_only_peek" not in message


async def test_a_tool_outside_the_phase_allowed_ops_is_not_suggested() -> None:
    message = await _message(_registry(), "phase_only_nuk", "phase", allowed_ops=["phase_only_peek"])
    assert "phase_only_nuke" not in message and "did you mean 'phase_only_peek'" in message
