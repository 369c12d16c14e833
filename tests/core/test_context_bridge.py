"""HostBridge: a missing bridge is a clear runtime_missing error naming the bridge, never AttributeError."""

from __future__ import annotations

import pytest

from reyn_core import HostBridge, ToolContext, ToolRuntimeMissing, tool
from reyn_core.host import RegistryBuilder, dispatch_tool


def test_require_missing_bridge_raises_runtime_missing_naming_it() -> None:
    with pytest.raises(ToolRuntimeMissing) as info:
        HostBridge().require("ask_user", tool="ask_user")
    assert info.value.kind == "runtime_missing"
    assert "'ask_user'" in info.value.message and "HostBridge(ask_user=...)" in info.value.message


def test_require_unknown_extra_bridge_raises_runtime_missing() -> None:
    with pytest.raises(ToolRuntimeMissing, match="'open_ticket'"):
        HostBridge().require("open_ticket")


def test_require_returns_a_supplied_bridge_and_extra_bridges() -> None:
    def ask(question: str) -> str:
        return "yes"

    bridge = HostBridge(ask_user=ask, extras={"open_ticket": len})
    assert bridge.require("ask_user") is ask
    assert bridge.require("open_ticket") is len
    assert bridge.has("ask_user") and not bridge.has("run_skill")


@tool(cluster="catalog", purity="external")
async def ask_user(question: str, ctx: ToolContext) -> str:
    """Ask the user a question."""
    answer = ctx.bridge.require("ask_user", tool="ask_user")
    return str(await answer(question))


async def test_tool_needing_a_missing_bridge_is_runtime_missing_at_dispatch() -> None:
    registry = RegistryBuilder()
    registry.register(ask_user)
    envelope = await dispatch_tool(registry.freeze(), "ask_user", {"question": "ok?"}, ToolContext())
    assert envelope["error"]["kind"] == "runtime_missing"
    assert "host bridge 'ask_user'" in envelope["error"]["message"]


async def test_the_same_tool_runs_once_the_host_supplies_the_bridge() -> None:
    async def answer(question: str) -> str:
        return f"answer to {question}"

    registry = RegistryBuilder()
    registry.register(ask_user)
    ctx = ToolContext(bridge=HostBridge(ask_user=answer))
    envelope = await dispatch_tool(registry.freeze(), "ask_user", {"question": "ok?"}, ctx)
    assert envelope == {"status": "ok", "data": "answer to ok?"}


def test_bare_strings_for_name_lists_are_refused_not_matched_by_substring() -> None:
    import pytest

    from reyn_core import PhaseCallerState, RouterCallerState, ToolContext

    with pytest.raises(TypeError, match="agent_tools must be a list of names"):
        ToolContext(agent_tools="shell_readonly")  # type: ignore[arg-type]  # would admit "shell"
    with pytest.raises(TypeError, match="allowed_tools"):
        RouterCallerState(allowed_tools="read_file")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="allowed_ops"):
        PhaseCallerState(allowed_ops="file")  # type: ignore[arg-type]
    assert ToolContext(agent_tools=["a", "b"]).agent_tools == frozenset({"a", "b"})  # lists are fine


def test_an_unknown_surface_is_an_error_not_a_pass() -> None:
    import pytest

    from reyn_core import ToolDefinition
    from reyn_core.host import RegistryBuilder, gates

    t = RegistryBuilder().register(
        ToolDefinition(
            name="t", description="x", handler=lambda: 1, parameters={"type": "object", "properties": {}}
        )
    )
    with pytest.raises(ValueError, match="unknown surface 'Router'"):
        gates.check(t, "Router", ToolContext())
