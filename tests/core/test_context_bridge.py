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


# --------------------------------------------------------------------------- typed services


class TicketDesk:
    """A service a pack defines: the core knows nothing of it."""

    def __init__(self, queue: str) -> None:
        self.queue = queue


def test_a_service_is_looked_up_by_the_type_its_pack_defines() -> None:
    desk = TicketDesk("ops")
    bridge = HostBridge(services={TicketDesk: desk})
    assert bridge.service(TicketDesk) is desk
    assert bridge.require_service(TicketDesk, tool="open_ticket") is desk


def test_a_missing_service_is_runtime_missing_naming_its_type_and_how_to_supply_it() -> None:
    assert HostBridge().service(TicketDesk) is None
    with pytest.raises(ToolRuntimeMissing) as info:
        HostBridge().require_service(TicketDesk, tool="open_ticket")
    assert info.value.kind == "runtime_missing" and info.value.tool == "open_ticket"
    assert "host service TicketDesk" in info.value.message
    assert "HostBridge(services={TicketDesk: TicketDesk(...)})" in info.value.message


def test_a_service_under_the_wrong_type_is_refused_where_the_bridge_is_built() -> None:
    with pytest.raises(TypeError, match="the service under TicketDesk is a str, not a TicketDesk"):
        HostBridge(services={TicketDesk: "ops"})
    with pytest.raises(TypeError, match="a key must be a type"):
        HostBridge(services={"TicketDesk": TicketDesk("ops")})  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="mapping of type to instance"):
        HostBridge(services=[TicketDesk("ops")])  # type: ignore[arg-type]


def test_a_protocol_key_must_be_runtime_checkable() -> None:
    from typing import Protocol, runtime_checkable

    class Unchecked(Protocol):
        queue: str

    @runtime_checkable
    class Checked(Protocol):
        queue: str

    with pytest.raises(TypeError, match="runtime_checkable"):
        HostBridge(services={Unchecked: TicketDesk("ops")})
    desk = TicketDesk("ops")
    assert HostBridge(services={Checked: desk}).service(Checked) is desk


def test_the_services_are_a_copy_the_host_cannot_swap_later() -> None:
    services: dict[type, object] = {TicketDesk: TicketDesk("ops")}
    bridge = HostBridge(services=services)
    services[TicketDesk] = TicketDesk("swapped")
    services.clear()
    assert bridge.require_service(TicketDesk).queue == "ops"
    with pytest.raises(TypeError):
        bridge.services[TicketDesk] = TicketDesk("x")  # type: ignore[index]
