"""The dispatcher hands a handler a context carrying what the host passed for the call
(``exclude`` / ``allowed_ops`` as ``ToolContext.call_gates``), and decides the call's gates from that
context: a tool that asks what its caller may see (``registry.visible_names(ctx.surface, ctx)``, as
the search pack's ``find_tools`` does) or calls another tool with its context gets the dispatcher's
own answer, never a wider one. A host whose context already says it pays no copy per call."""

from __future__ import annotations

from typing import Any

from reyn_core import PhaseCallerState, RouterCallerState, ToolContext, ToolGates, tool
from reyn_core.host import RegistryBuilder, ToolRegistry, dispatch_tool

SEEN: list[ToolContext] = []


@tool(cluster="notes", purity="read_only", gates=ToolGates(router="allow", phase="allow"))
def alpha() -> str:
    """Say alpha."""
    return "alpha"


@tool(cluster="files", purity="read_only", gates=ToolGates(router="allow", phase="allow"))
def beta() -> str:
    """Say beta."""
    return "beta"


@tool(cluster="meta", purity="read_only", gates=ToolGates(router="allow", phase="allow"))
def peek(ctx: ToolContext) -> list[str]:
    """Name the tools this caller may see."""
    SEEN.append(ctx)
    registry: ToolRegistry = ctx.extras["registry"]
    return sorted(registry.visible_names(ctx.surface, ctx))


@tool(cluster="meta", purity="read_only", gates=ToolGates(router="allow", phase="allow"))
async def relay(target: str, ctx: ToolContext) -> Any:
    """Call another tool with this call's context."""
    return await dispatch_tool(ctx.extras["registry"], target, {}, ctx)


def registry() -> ToolRegistry:
    builder = RegistryBuilder()
    for t in (alpha, beta, peek, relay):
        builder.register(t)
    return builder.freeze()


REG = registry()


def context(**changes: Any) -> ToolContext:
    return ToolContext(**{"surface": "router", "extras": {"registry": REG}, **changes})


async def test_a_handler_sees_what_the_dispatcher_was_told_to_exclude() -> None:
    ctx = context()
    # positive control: nothing excluded, the handler sees and may call alpha
    seen = await dispatch_tool(REG, "peek", {}, ctx)
    assert seen["data"] == ["alpha", "beta", "peek", "relay"]
    assert (await dispatch_tool(REG, "alpha", {}, ctx))["data"] == "alpha"
    # excluded for this call: refused, and the handler's own question gets the same answer
    refused = await dispatch_tool(REG, "alpha", {}, ctx, exclude=("alpha",))
    assert refused["error"]["kind"] == "gate_refused"
    assert (await dispatch_tool(REG, "peek", {}, ctx, exclude=("alpha",)))["data"] == [
        "beta",
        "peek",
        "relay",
    ]
    assert SEEN[-1].call_gates is not None and SEEN[-1].call_gates.exclude == {"alpha"}
    assert ctx.call_gates is None  # the host's context is not changed


async def test_a_call_made_from_a_handler_keeps_its_callers_exclusions() -> None:
    ctx = context()
    assert (await dispatch_tool(REG, "relay", {"target": "alpha"}, ctx))["data"]["data"] == "alpha"
    nested = await dispatch_tool(REG, "relay", {"target": "alpha"}, ctx, exclude=("alpha",))
    assert nested["status"] == "ok"  # relay ran; the call it made was refused
    assert nested["data"]["status"] == "error" and nested["data"]["error"]["kind"] == "gate_refused"
    inner = await dispatch_tool(REG, "relay", {"target": "beta"}, ctx, exclude=("alpha",))
    assert inner["data"]["data"] == "beta"  # what was not excluded still runs


async def test_a_phase_handler_sees_the_calls_allowed_ops() -> None:
    ctx = context(surface="phase")
    seen = await dispatch_tool(REG, "peek", {}, ctx, allowed_ops=["meta", "notes"])
    assert seen["data"] == ["alpha", "peek", "relay"]
    assert (await dispatch_tool(REG, "beta", {}, ctx, allowed_ops=["meta", "notes"]))["status"] == "error"
    # positive control: the list admitting files lets the handler see beta
    seen = await dispatch_tool(REG, "peek", {}, ctx, allowed_ops=["meta", "notes", "files"])
    assert seen["data"] == ["alpha", "beta", "peek", "relay"]


async def test_a_context_that_already_says_it_is_passed_as_is() -> None:
    """A loop's context holds its exclusions (router) or its list (phase): no copy per call."""
    router = context(router_state=RouterCallerState(exclude=frozenset({"alpha"})))
    assert (await dispatch_tool(REG, "peek", {}, router, exclude=("alpha",)))["data"] == [
        "beta",
        "peek",
        "relay",
    ]
    assert SEEN[-1] is router
    phase = context(surface="phase", phase_state=PhaseCallerState(allowed_ops=("meta", "notes")))
    assert (await dispatch_tool(REG, "peek", {}, phase, allowed_ops=("meta", "notes")))["data"] == [
        "alpha",
        "peek",
        "relay",
    ]
    assert SEEN[-1] is phase
    plain = context()
    await dispatch_tool(REG, "peek", {}, plain)
    assert SEEN[-1] is plain


async def test_not_found_hints_use_the_carried_exclusions() -> None:
    missing = await dispatch_tool(REG, "alpah", {}, context(), exclude=("alpha",))
    assert missing["error"]["kind"] == "not_found" and "alpha" not in missing["error"]["message"]
    hinted = await dispatch_tool(REG, "alpah", {}, context())
    assert "alpha" in hinted["error"]["message"]
