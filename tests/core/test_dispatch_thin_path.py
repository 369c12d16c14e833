"""The dispatcher's thinner call path keeps every guarantee (issue 23): the gate answer a snapshot
keeps is the one ``gates.check`` gave, never one for an unknown surface; a model tool's call is
validated and bound in one pass by its validator (strict-mode nulls, the context, large calls in a
worker thread); and a snapshot's policy attributes are read-only."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel
from registry_kit import frozen_registry

from reyn_core import ToolContext, ToolGates, tool
from reyn_core.errors import RegistryFrozen, ToolGateRefused
from reyn_core.host import ToolRegistry, dispatch_tool, gates, invoke_tool

ROUTER = ToolContext(surface="router")


class NoteArgs(BaseModel):
    text: str
    tags: list[str] = []
    limit: int = 5


seen: list[Any] = []


@tool(gates=ToolGates(phase="deny"))
async def note(args: NoteArgs, ctx: ToolContext) -> dict[str, Any]:
    """Take a note (the router only)."""
    seen.append((args, ctx))
    return {"text": args.text, "tags": args.tags, "limit": args.limit, "agent": ctx.agent}


@tool
def words(text: str, ctx: ToolContext, limit: int = 3) -> list[str]:
    """Split a text into words (a keyword tool asking for its context)."""
    seen.append(ctx)
    return text.split()[:limit]


def _registry() -> ToolRegistry:
    registry: ToolRegistry = frozen_registry([note, words])
    return registry


async def test_the_answer_a_snapshot_keeps_is_the_one_gates_check_gave() -> None:
    registry = _registry()
    definition = registry.get("note")
    ctx = ToolContext(surface="phase")
    first = registry.prepared("note").refusals
    for _ in range(2):  # the first call asks gates.check; the second passes its kept answer on
        with pytest.raises(ToolGateRefused) as refused:
            await invoke_tool(registry, "note", {"text": "a"}, ctx)
        decision = gates.check(definition, "phase", ctx, registry=registry)
        assert (refused.value.layer, refused.value.reason) == (decision.layer, decision.reason)
    assert first["phase"] == decision
    # positive control: the same tool on the router, twice
    for _ in range(2):
        assert (await invoke_tool(registry, "note", {"text": "a"}, ROUTER))["text"] == "a"


async def test_no_answer_is_ever_kept_for_an_unknown_surface() -> None:
    registry = _registry()
    definition = registry.get("note")
    assert (await invoke_tool(registry, "note", {"text": "a"}, ROUTER))["text"] == "a"
    with pytest.raises(ValueError, match="unknown surface 'rooter'"):
        registry.fixed_layers(definition, "rooter")
    for _ in range(2):
        with pytest.raises(ValueError, match="unknown surface"):
            await invoke_tool(registry, "note", {"text": "a"}, ROUTER, surface="rooter")
    assert set(registry.prepared("note").refusals) == {"router"}


async def test_a_model_tool_is_bound_with_its_context_and_nulls_mean_not_given() -> None:
    registry = _registry()
    seen.clear()
    ctx = ToolContext(surface="router", agent="ana")
    result = await invoke_tool(registry, "note", {"text": "a", "tags": None, "limit": None}, ctx)
    assert result == {"text": "a", "tags": [], "limit": 5, "agent": "ana"}
    [(args, given)] = seen
    assert isinstance(args, NoteArgs) and given is ctx
    # the validator's own check keeps a null as sent: only a call means "not given" by it
    validator = registry.prepared("note").validator
    assert validator.check({"text": "a", "limit": None})[1]
    assert validator.check({"text": "a"})[1] == []


async def test_a_keyword_model_tool_gets_its_arguments_and_context() -> None:
    registry = _registry()
    seen.clear()
    ctx = ToolContext(surface="router", agent="bo")
    assert await invoke_tool(registry, "words", {"text": "a b c d", "limit": None}, ctx) == ["a", "b", "c"]
    assert seen == [ctx]
    bad = await dispatch_tool(registry, "words", {"text": "a", "extra": 1}, ctx)
    assert bad["status"] == "error" and bad["error"]["kind"] == "invalid_arguments"
    assert "/extra" in bad["error"]["message"]


async def test_a_large_call_is_validated_and_bound_in_a_worker_thread() -> None:
    registry = _registry()
    seen.clear()
    tags = [f"t{i}" for i in range(2000)]  # not a small flat object: checked off the event loop
    result = await invoke_tool(registry, "note", {"text": "a", "tags": tags, "limit": None}, ROUTER)
    assert result["tags"] == tags and result["limit"] == 5
    assert seen[0][1] is ROUTER
    bad = await dispatch_tool(registry, "note", {"text": "a", "tags": [*tags, 7]}, ROUTER)
    assert bad["status"] == "error" and "/tags/2000" in bad["error"]["message"]


@pytest.mark.parametrize("name", ["operator", "hooks", "call_hooks", "approvals"])
def test_a_snapshots_policy_attributes_are_read_only(name: str) -> None:
    registry = _registry()
    value = getattr(registry, name)  # positive control: each is readable
    with pytest.raises(RegistryFrozen, match=f"'{name}' cannot be changed"):
        setattr(registry, name, None)
    with pytest.raises(RegistryFrozen, match=f"'{name}' cannot be deleted"):
        delattr(registry, name)
    assert getattr(registry, name) is value
