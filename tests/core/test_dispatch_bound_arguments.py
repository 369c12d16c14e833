"""What was validated is exactly what is bound and passed to the handler (issue 11/15 class).

The dispatcher takes its own copy of a call's arguments at entry (every dict and list in them), validates
that copy and binds it before any policy hook runs; ``before`` and ``after`` hooks see a read-only
snapshot of the same arguments. So neither a hook nor the caller (mutating its dict while the call
awaits) nor the handler (mutating what it was given) can change what was validated, what is bound, or
what the hooks and the audit log see. A hook that tries to rewrite the arguments breaks, and a before
hook that breaks denies the call: fail closed.

Every case runs on the full path (a schema with ``pattern``, a raw schema) and on the single-validation
path (an eligible pydantic model), with dict and JSON-text arguments, and with sync and async handlers,
with and without a timeout.
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel, Field
from registry_kit import frozen_registry

from reyn_core import ToolContext, ToolDefinition, tool
from reyn_core.dispatch import argument_hash
from reyn_core.host import (
    JsonlAuditLog,
    ToolCall,
    ToolCallHooks,
    ToolCallOutcome,
    ToolRegistry,
    dispatch_tool,
)
from reyn_core.registry.handlers import resolve_handler

CTX = ToolContext(surface="router", agent="test")
RECEIVED: list[dict[str, Any]] = []

# ---------------------------------------------------------------------------- tools, one per path


class SafePath(BaseModel):
    path: str = Field(pattern="^safe/")  # a pattern: the full path (schema validator, then pydantic)


class Plain(BaseModel):
    path: str = Field(max_length=12)  # eligible: the single-validation path
    limit: int = Field(1, ge=1)


RAW_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "pattern": "^safe/"},
        "tags": {"type": "array", "items": {"type": "string", "pattern": "^safe/"}},
        "meta": {"type": "object", "additionalProperties": {"type": "string", "pattern": "^safe/"}},
    },
    "required": ["path"],
    "additionalProperties": False,
}


def _record(value: dict[str, Any]) -> dict[str, Any]:
    RECEIVED.append(value)
    return value


def _echo(kind: str, *, sync: bool, timeout_s: float | None) -> ToolDefinition:
    """A tool of ``kind`` whose handler records (and returns) the arguments it was given."""

    def with_model_sync(args: Any) -> Any:
        return _record(args.model_dump())

    async def with_model_async(args: Any) -> Any:
        await asyncio.sleep(0)
        return _record(args.model_dump())

    def raw_sync(**kwargs: Any) -> Any:
        return _record(kwargs)

    async def raw_async(**kwargs: Any) -> Any:
        await asyncio.sleep(0)
        return _record(kwargs)

    if kind == "raw":
        return ToolDefinition(
            name="echo",
            description="Echo.",
            parameters=RAW_SCHEMA,
            handler=raw_sync if sync else raw_async,
            timeout_s=timeout_s,
        )
    handler: Any = with_model_sync if sync else with_model_async
    handler.__annotations__ = {"args": SafePath if kind == "model_full" else Plain, "return": Any}
    return tool(name="echo", description="Echo.", timeout_s=timeout_s)(handler)


KINDS = ["model_full", "model_single", "raw"]
HANDLERS = [
    pytest.param(False, None, id="async"),
    pytest.param(True, None, id="sync"),
    pytest.param(False, 5.0, id="async-timeout"),
    pytest.param(True, 5.0, id="sync-timeout"),
]
VALID: dict[str, Any] = {"path": "safe/a"}
INVALID_PATH = "../etc/passwd"  # refused by every kind's schema (pattern, or longer than 12)


def registry_of(td: ToolDefinition, hooks: ToolCallHooks | None = None) -> ToolRegistry:
    """A frozen registry of ``td`` alone, its calls passing through ``hooks``."""
    return frozen_registry([td], hooks=hooks)


@pytest.fixture(autouse=True)
def _reset() -> None:
    RECEIVED.clear()


def test_the_tools_are_the_kinds_they_are_named_for() -> None:
    assert resolve_handler(_echo("model_single", sync=False, timeout_s=None)).model is not None
    assert resolve_handler(_echo("raw", sync=False, timeout_s=None)).model is None


@pytest.mark.parametrize("kind", KINDS)
def test_invalid_path_is_refused_when_sent(kind: str) -> None:
    envelope = asyncio.run(
        dispatch_tool(
            registry_of(_echo(kind, sync=False, timeout_s=None)), "echo", {"path": INVALID_PATH}, CTX
        )
    )
    assert envelope["error"]["kind"] == "invalid_arguments"


# ---------------------------------------------------------------------------- a before hook rewriting


def _rewrite_path(call: ToolCall) -> None:
    call.arguments["path"] = INVALID_PATH


async def _rewrite_path_async(call: ToolCall) -> None:
    await asyncio.sleep(0)
    call.arguments["path"] = INVALID_PATH


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("sync", "timeout_s"), HANDLERS)
@pytest.mark.parametrize("hook", [_rewrite_path, _rewrite_path_async], ids=["sync-hook", "async-hook"])
@pytest.mark.parametrize("as_text", [False, True], ids=["dict", "json-text"])
def test_a_before_hook_cannot_rewrite_the_arguments_it_is_shown(
    kind: str, sync: bool, timeout_s: float | None, hook: Callable[[ToolCall], Any], as_text: bool
) -> None:
    """The arguments a hook sees are read-only: the rewrite breaks the hook, and a broken hook denies."""
    after: list[tuple[str, str]] = []
    hooks = ToolCallHooks(
        before=(hook,), after=(lambda call, o: after.append((o.kind, call.arguments["path"])),)
    )
    registry = registry_of(_echo(kind, sync=sync, timeout_s=timeout_s), hooks)
    args: Any = json.dumps(VALID) if as_text else dict(VALID)
    envelope = asyncio.run(dispatch_tool(registry, "echo", args, CTX))
    assert envelope["status"] == "error", envelope
    assert envelope["error"]["kind"] == "denied"
    assert "a policy hook failed; the details are in the operator's log" in envelope["error"]["message"]
    assert RECEIVED == []  # the handler never ran
    assert after == [("denied", "safe/a")]  # the audit sees the arguments as validated


@pytest.mark.parametrize("kind", ["raw"])
@pytest.mark.parametrize("as_text", [False, True], ids=["dict", "json-text"])
def test_a_before_hook_cannot_rewrite_a_nested_value(kind: str, as_text: bool) -> None:
    def append(call: ToolCall) -> None:
        call.arguments["tags"].append(INVALID_PATH)

    def set_key(call: ToolCall) -> None:
        call.arguments["meta"]["k"] = INVALID_PATH

    sent = {"path": "safe/a", "tags": ["safe/t"], "meta": {"k": "safe/m"}}
    for hook in (append, set_key):
        registry = registry_of(_echo(kind, sync=False, timeout_s=None), ToolCallHooks(before=(hook,)))
        args: Any = json.dumps(sent) if as_text else json.loads(json.dumps(sent))
        envelope = asyncio.run(dispatch_tool(registry, "echo", args, CTX))
        assert envelope["error"]["kind"] == "denied", envelope
    assert RECEIVED == []


def test_a_hook_sees_nested_values_as_read_only_json_data() -> None:
    seen: list[Any] = []
    registry = registry_of(
        _echo("raw", sync=False, timeout_s=None), ToolCallHooks(before=(lambda call: seen.append(call),))
    )
    sent = {"path": "safe/a", "tags": ["safe/t", "safe/u"], "meta": {"k": "safe/m"}}
    assert asyncio.run(dispatch_tool(registry, "echo", sent, CTX))["status"] == "ok"
    [call] = seen
    # reads like the JSON it came from (json.dumps, ==, isinstance) and hashes the same in the audit
    assert call.arguments == sent and json.loads(json.dumps(call.arguments)) == sent
    assert isinstance(call.arguments, dict) and isinstance(call.arguments["tags"], list)
    assert argument_hash(call.arguments) == argument_hash(sent)
    for change in (
        lambda: call.arguments.update(path="x"),
        lambda: call.arguments["meta"].setdefault("j", "x"),
        lambda: call.arguments["meta"].__delitem__("k"),
        lambda: call.arguments["tags"].extend(["x"]),
        lambda: call.arguments["tags"].__setitem__(0, "x"),
        lambda: call.arguments["tags"].sort(),
    ):
        with pytest.raises(TypeError, match="read-only"):
            change()
    assert call.arguments == sent
    mine = copy.deepcopy(call.arguments)  # a hook's own copy is plain, mutable data
    mine["tags"].append("x")
    assert type(mine) is dict and call.arguments == sent


# ---------------------------------------------------------------------------- the caller mutating


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("sync", "timeout_s"), HANDLERS)
def test_the_caller_mutating_its_dict_during_an_awaited_before_hook_changes_nothing(
    kind: str, sync: bool, timeout_s: float | None
) -> None:
    """The bound arguments, and what the hook sees after its await, are what was validated."""
    hook_saw: list[str] = []

    async def main() -> dict[str, Any]:
        asked, answer = asyncio.Event(), asyncio.Event()

        async def approval(call: ToolCall) -> None:
            asked.set()
            await answer.wait()  # e.g. a human approving the call
            hook_saw.append(call.arguments["path"])

        registry = registry_of(_echo(kind, sync=sync, timeout_s=timeout_s), ToolCallHooks(before=(approval,)))
        args = dict(VALID)
        task = asyncio.create_task(dispatch_tool(registry, "echo", args, CTX))
        await asked.wait()
        args["path"] = INVALID_PATH  # after validation, while the call awaits its hook
        answer.set()
        return await task

    envelope = asyncio.run(main())
    assert envelope["status"] == "ok", envelope
    assert hook_saw == ["safe/a"]
    assert [r["path"] for r in RECEIVED] == ["safe/a"]


@pytest.mark.parametrize(("sync", "timeout_s"), HANDLERS)
@pytest.mark.parametrize("with_hook", [False, True], ids=["no-hook", "hook"])
def test_the_caller_mutating_nested_values_after_validation_changes_nothing(
    sync: bool, timeout_s: float | None, with_hook: bool
) -> None:
    """Lists and dicts inside the arguments are the call's own: the caller's later changes to its own
    containers (while a hook or the handler awaits) reach neither the handler nor the hooks."""
    seen: list[Any] = []

    async def main() -> dict[str, Any]:
        started, go = asyncio.Event(), asyncio.Event()

        async def approval(call: ToolCall) -> None:
            started.set()
            await go.wait()
            seen.append(json.loads(json.dumps(call.arguments)))

        def handler(**kwargs: Any) -> Any:
            RECEIVED.append(json.loads(json.dumps(kwargs)))
            return kwargs

        async def async_handler(**kwargs: Any) -> Any:
            if not with_hook:
                started.set()
                await go.wait()
            RECEIVED.append(json.loads(json.dumps(kwargs)))
            return kwargs

        td = ToolDefinition(
            name="echo",
            description="Echo.",
            parameters=RAW_SCHEMA,
            handler=handler if sync else async_handler,
            timeout_s=timeout_s,
        )
        registry = registry_of(td, ToolCallHooks(before=(approval,)) if with_hook else None)
        args: dict[str, Any] = {"path": "safe/a", "tags": ["safe/t"], "meta": {"k": "safe/m"}}
        task = asyncio.create_task(dispatch_tool(registry, "echo", args, CTX))
        if sync and not with_hook:  # nothing awaits before a sync handler runs in its thread
            result = await task
            args["tags"].append(INVALID_PATH)
            args["meta"]["k"] = INVALID_PATH
            assert result["data"] == {"path": "safe/a", "tags": ["safe/t"], "meta": {"k": "safe/m"}}
            return result
        await started.wait()
        args["tags"].append(INVALID_PATH)
        args["meta"]["k"] = INVALID_PATH
        go.set()
        return await task

    envelope = asyncio.run(main())
    assert envelope["status"] == "ok", envelope
    expected = {"path": "safe/a", "tags": ["safe/t"], "meta": {"k": "safe/m"}}
    assert RECEIVED == [expected]
    assert envelope["data"] == expected
    assert seen == ([expected] if with_hook else [])


def test_the_bound_dict_is_never_the_callers() -> None:
    """Even a plain dict of scalars (the dispatcher's quickest parse) is copied, not bound."""
    got: list[dict[str, Any]] = []

    async def handler(**kwargs: Any) -> None:
        got.append(kwargs)

    td = ToolDefinition(
        name="echo",
        description="Echo.",
        parameters={"type": "object", "properties": {"path": {"type": "string"}}},
        handler=handler,
    )
    args = {"path": "safe/a"}
    asyncio.run(dispatch_tool(registry_of(td), "echo", args, CTX))
    [kwargs] = got
    kwargs["path"] = "changed"
    assert args == {"path": "safe/a"}


# ---------------------------------------------------------------------------- the handler mutating


@pytest.mark.parametrize("sync", [False, True], ids=["async", "sync"])
def test_after_hooks_and_the_audit_see_what_was_validated_when_the_handler_mutates_its_arguments(
    tmp_path: Any, sync: bool
) -> None:
    after: list[Any] = []

    def mutate(kwargs: dict[str, Any]) -> str:
        kwargs["tags"].append("safe/added-by-handler")
        kwargs["meta"]["k"] = "safe/changed"
        return "done"

    async def async_handler(**kwargs: Any) -> str:
        return mutate(kwargs)

    def handler(**kwargs: Any) -> str:
        return mutate(kwargs)

    td = ToolDefinition(
        name="echo", description="Echo.", parameters=RAW_SCHEMA, handler=handler if sync else async_handler
    )
    audit = JsonlAuditLog(tmp_path / "audit.jsonl")

    def record(call: ToolCall, outcome: ToolCallOutcome) -> None:
        after.append(json.loads(json.dumps(call.arguments)))

    registry = registry_of(td, ToolCallHooks(after=(record,)) + audit.hooks())
    sent = {"path": "safe/a", "tags": ["safe/t"], "meta": {"k": "safe/m"}}
    assert asyncio.run(dispatch_tool(registry, "echo", json.loads(json.dumps(sent)), CTX))["status"] == "ok"
    assert after == [sent]
    [line] = (tmp_path / "audit.jsonl").read_text().splitlines()
    assert json.loads(line)["args_sha256"] == argument_hash(sent)
