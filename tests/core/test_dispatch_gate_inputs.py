"""A policy the gates cannot evaluate, in a snapshot that decides the layers it fixes once (issues 15,
23): the call is refused and audited every time, never an exception out of the dispatcher. (That the
snapshot's inputs cannot compute another answer later is ``test_final_classes``: they are final.)"""

from __future__ import annotations

from typing import Any

from reyn_core import ToolContext, ToolDefinition, ToolOrigin
from reyn_core.calls import ToolCallHooks
from reyn_core.host import OperatorPolicy, PluginPolicy, RegistryBuilder, ToolRegistry, dispatch_tool, gates

CTX = ToolContext(surface="router")
PLUGIN = ToolOrigin(kind="plugin", plugin_id="notes")


async def echo(text: str) -> str:
    return text


def definition(**changes: Any) -> ToolDefinition:
    fields: dict[str, Any] = {
        "name": "note",
        "description": "Echo a note.",
        "handler": echo,
        "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
    }
    return ToolDefinition(**{**fields, **changes})


def plugin_registry(operator: OperatorPolicy) -> ToolRegistry:
    builder = RegistryBuilder(operator=operator)
    builder.register(definition(), origin=PLUGIN)
    return builder.freeze()


async def call(registry: ToolRegistry, surface: str = "router") -> dict[str, Any]:
    return await dispatch_tool(registry, "note", {"text": "hi"}, CTX, surface=surface)


def full_check(registry: ToolRegistry, surface: str = "router") -> gates.Decision:
    return gates.check(registry.get("note"), surface, CTX.with_surface(surface), registry=registry)  # type: ignore[arg-type]


def outcome(envelope: dict[str, Any]) -> tuple[str, str]:
    if envelope["status"] == "ok":
        return "ok", ""
    return envelope["error"]["kind"], envelope["error"].get("layer", "")


async def test_a_policy_the_gates_cannot_evaluate_is_refused_and_audited_as_before() -> None:
    """``exclude=None`` makes layer 2 raise: the call is an execution error the after hooks see, as
    when ``gates.check`` raised inside the call, never an exception out of ``dispatch_tool``."""
    seen: list[str] = []
    builder = RegistryBuilder(
        operator=OperatorPolicy(plugins={"notes": PluginPolicy(exclude=None)}),
        hooks=ToolCallHooks(after=(lambda call, done: seen.append(done.kind),)),
    )
    builder.register(definition(), origin=PLUGIN)
    registry = builder.freeze()
    for _ in range(2):
        assert outcome(await call(registry)) == ("execution_error", "")
    assert seen == ["execution_error", "execution_error"]
