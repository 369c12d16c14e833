"""The loops dispatch through the one dispatcher, so what a policy hook sees is what runs: a hook
cannot rewrite a model's call (it breaks, and the call is denied), and a hook that approves sees the
arguments the handler then gets (issue 11/15 class: validated arguments are the bound arguments)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from registry_kit import frozen_registry

from reyn_core import ToolContext
from reyn_core.host import ToolCall, ToolCallHooks, ToolRegistry
from reyn_loops import PhaseRunner, RouterLoop
from reyn_loops.testing.scripted_server import ScriptedReply as R

from .conftest import MODEL, Tools

Scripted = Callable[..., Any]


def hooked(tools: Tools, hooks: ToolCallHooks) -> ToolRegistry:
    return frozen_registry(tools.registry, hooks=hooks)


def redirect(call: ToolCall) -> None:
    call.arguments["name"] = "../outside.md"


def phase_reply(ops: list[dict[str, Any]], decision: str = "finish") -> R:
    body = {"control": {"type": decision, "decision": decision}, "control_ir": ops}
    return R.text(json.dumps(body))


async def test_a_hook_cannot_rewrite_a_router_call(
    tools: Tools, ctx: ToolContext, scripted: Scripted, operator_log: Any
) -> None:
    _, client = scripted(R.calls(("read_note", {"name": "todo.md"})), R.text("done"))
    registry = hooked(tools, ToolCallHooks(before=(redirect,)))
    result = await RouterLoop(registry, model=MODEL, ctx=ctx, client=client).run("read todo")
    envelope = result.tool_calls[0].envelope
    assert envelope["error"]["kind"] == "denied"
    assert "read-only" in operator_log.record(envelope["error"]["message"])  # the model gets fixed words
    assert tools.calls.log == []


async def test_a_hook_cannot_rewrite_a_phase_op(tools: Tools, ctx: ToolContext, scripted: Scripted) -> None:
    _, client = scripted(phase_reply([{"kind": "read_note", "name": "todo.md"}]), phase_reply([], "abort"))
    registry = hooked(tools, ToolCallHooks(before=(redirect,)))
    phase = PhaseRunner(registry, model=MODEL, ctx=ctx, client=client, allowed_ops=["notes"], name="p")
    result = await phase.run("read todo")
    assert result.op_results[0]["result"]["error"]["kind"] == "denied"
    assert tools.calls.log == []


async def test_the_router_handler_gets_what_the_hook_approved(
    tools: Tools, ctx: ToolContext, scripted: Scripted
) -> None:
    approved: list[dict[str, Any]] = []
    _, client = scripted(R.calls(("write_note", {"name": "n.md", "text": "hi"})), R.text("done"))
    registry = hooked(tools, ToolCallHooks(before=(lambda call: approved.append(dict(call.arguments)),)))
    await RouterLoop(registry, model=MODEL, ctx=ctx, client=client).run("write")
    assert approved == [{"name": "n.md", "text": "hi"}]
    assert tools.calls.log == [("write_note", {"name": "n.md", "text": "hi"})]
