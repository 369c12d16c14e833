"""The dispatcher: every failure has its own error kind, no traceback reaches the model, and the
next call on the same registry still works."""

from __future__ import annotations

import asyncio
import dataclasses
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from registry_kit import frozen_registry

from reyn_core import (
    InvalidToolArguments,
    ToolCancelled,
    ToolContext,
    ToolDefinition,
    ToolDenied,
    ToolExecutionError,
    ToolGates,
    ToolNotFound,
    ToolRuntimeMissing,
    ToolTimeout,
    tool,
)
from reyn_core.host import RegistryBuilder, ToolRegistry, dispatch_tool, invoke_tool

RELEASE = threading.Event()  # lets a "hung" sync handler's worker thread finish after its test


@tool(cluster="math", purity="read_only")
async def add(a: int, b: int, label: str = "sum") -> dict[str, Any]:
    """Add two integers."""
    return {label: a + b}


@tool(cluster="math", purity="read_only", gates=ToolGates(router="deny"))
async def phase_only(a: int) -> int:
    """Only for phases."""
    return a


@tool(cluster="boom", purity="read_only")
def explode(message: str) -> None:
    """Raise ValueError with the message."""
    raise ValueError(message)


@tool(cluster="boom", purity="read_only")
async def refuse(path: str) -> None:
    """Refuse a path like a file tool would."""
    raise ToolDenied(f"{path!r} is outside the allowed roots (allowed: ./data)")


@tool(cluster="slow", purity="read_only", timeout_s=0.05)
async def hang_async() -> None:
    """Sleep far past the timeout."""
    await asyncio.sleep(30)


@tool(cluster="slow", purity="read_only", timeout_s=0.05)
def hang_sync() -> None:
    """Block a worker thread far past the timeout."""
    RELEASE.wait(30)


@tool(cluster="slow", purity="read_only")
async def cancel_inside() -> None:
    """Cancel an inner task and let its CancelledError escape."""
    inner = asyncio.ensure_future(asyncio.sleep(30))
    await asyncio.sleep(0)
    inner.cancel()
    await inner


@tool(cluster="slow", purity="read_only")
async def wait_forever() -> None:
    """Wait until cancelled."""
    await asyncio.Event().wait()


@tool(cluster="slow", purity="read_only", timeout_s=30)
async def wait_forever_timed() -> None:
    """Wait until cancelled, under a (long) timeout."""
    await asyncio.Event().wait()


@tool(cluster="boom", purity="read_only")
def exits() -> None:
    """Call sys.exit."""
    sys.exit(3)


@tool(cluster="boom", purity="read_only", timeout_s=5)
async def exits_async() -> None:
    """Call sys.exit from a coroutine under a timeout."""
    sys.exit(4)


@tool(cluster="boom", purity="read_only")
async def exits_async_untimed() -> None:
    """Call sys.exit from a coroutine without a timeout (awaited by the dispatcher itself)."""
    sys.exit(5)


UNIMPORTABLE = ToolDefinition(
    name="unimportable",
    description="Its module is not installed.",
    cluster="lazy",
    handler="reyn_no_such_module_anywhere.handlers:run",
    parameters={"type": "object", "properties": {}, "additionalProperties": False},
)


@dataclasses.dataclass
class Point:
    x: int
    y: int


class Reply(BaseModel):
    text: str


@tool(cluster="shapes", purity="read_only")
def shapes() -> dict[str, Any]:
    """Return assorted Python values."""
    return {"model": Reply(text="hi"), "point": Point(1, 2), "path": Path("/tmp/x"), "set": {3, 1, 2}}


@tool(cluster="shapes", purity="read_only")
def loop() -> list[Any]:
    """Return a self-referencing list."""
    items: list[Any] = []
    items.append(items)
    return items


ALL = [
    add,
    phase_only,
    explode,
    refuse,
    hang_async,
    hang_sync,
    cancel_inside,
    wait_forever,
    wait_forever_timed,
    exits,
    exits_async,
    exits_async_untimed,
    UNIMPORTABLE,
    shapes,
    loop,
]


@pytest.fixture(scope="module")
def registry() -> ToolRegistry:
    return frozen_registry(ALL)


@pytest.fixture(autouse=True, scope="module")
def _release_threads() -> Any:
    yield
    RELEASE.set()


async def dispatch(registry: ToolRegistry, name: str, args: Any, **kw: Any) -> dict[str, Any]:
    return await dispatch_tool(registry, name, args, ToolContext(surface="router"), **kw)


async def assert_next_call_works(registry: ToolRegistry) -> None:
    assert await dispatch(registry, "add", {"a": 1, "b": 2}) == {"status": "ok", "data": {"sum": 3}}


async def test_ok_call_returns_data(registry: ToolRegistry) -> None:
    assert await dispatch(registry, "add", {"a": 2, "b": 3, "label": "s"}) == {
        "status": "ok",
        "data": {"s": 5},
    }


# name, arguments -> the error's kind and what its message must say
BAD_CALLS = {
    "unknown tool: not_found with a suggestion": ("ad", {}, "not_found", ["did you mean 'add'"]),
    "malformed JSON string: invalid_arguments with the position": (
        "add",
        '{"a": 1, "b": ',
        "invalid_arguments",
        ["not valid JSON", "column"],
    ),
    "JSON that is not an object: invalid_arguments": (
        "add",
        "[1, 2]",
        "invalid_arguments",
        ["must be a JSON object, got array"],
    ),
    "async handler past its timeout: timeout": ("hang_async", {}, "timeout", ["0.05 s"]),
}


@pytest.mark.parametrize("case", BAD_CALLS)
async def test_a_bad_call_is_one_error_envelope_and_the_next_call_works(
    registry: ToolRegistry, case: str
) -> None:
    name, args, kind, says = BAD_CALLS[case]
    envelope = await dispatch(registry, name, args)
    assert envelope["error"]["kind"] == kind
    assert all(part in envelope["error"]["message"] for part in says), envelope["error"]["message"]
    await assert_next_call_works(registry)


async def test_unknown_tool_raises_tool_not_found_from_invoke(registry: ToolRegistry) -> None:
    with pytest.raises(ToolNotFound):
        await invoke_tool(registry, "nope", {}, ToolContext())


async def test_refused_tool_is_gate_refused_with_its_layer(registry: ToolRegistry) -> None:
    envelope = await dispatch(registry, "phase_only", {"a": 1})
    assert envelope["error"]["kind"] == "gate_refused"
    assert envelope["error"]["layer"] == "role"
    await assert_next_call_works(registry)


async def test_missing_argument_is_invalid_arguments_with_pointer(registry: ToolRegistry) -> None:
    envelope = await dispatch(registry, "add", {"a": 1})
    assert envelope["error"]["kind"] == "invalid_arguments"
    assert envelope["error"]["errors"] == [{"path": "/b", "message": "is a required property and is missing"}]
    await assert_next_call_works(registry)


async def test_wrong_type_is_invalid_arguments_with_pointer(registry: ToolRegistry) -> None:
    envelope = await dispatch(registry, "add", {"a": 1, "b": "two"})
    assert envelope["error"]["kind"] == "invalid_arguments"
    assert envelope["error"]["errors"] == [{"path": "/b", "message": "expected integer, got string"}]
    await assert_next_call_works(registry)


async def test_extra_field_is_invalid_arguments_naming_the_allowed_ones(registry: ToolRegistry) -> None:
    envelope = await dispatch(registry, "add", {"a": 1, "b": 2, "c": 3})
    assert envelope["error"]["kind"] == "invalid_arguments"
    [problem] = envelope["error"]["errors"]
    assert problem["path"] == "/c" and "allowed: a, b, label" in problem["message"]
    await assert_next_call_works(registry)


async def test_valid_json_string_arguments_are_accepted(registry: ToolRegistry) -> None:
    assert await dispatch(registry, "add", '{"a": 1, "b": 1}') == {"status": "ok", "data": {"sum": 2}}


async def test_invalid_arguments_raise_typed_error_with_problems(registry: ToolRegistry) -> None:
    with pytest.raises(InvalidToolArguments) as info:
        await invoke_tool(registry, "add", {"a": True, "b": 1.5}, ToolContext())
    assert [p.pointer for p in info.value.problems] == ["/a", "/b"]


# a handler's failure, as the model is told it: exactly this error, nothing more
HANDLER_FAILURES = {
    "a raising handler: execution_error with the type and the first line only": (
        "explode",
        {"message": "disk on fire\nsecret detail line"},
        {"kind": "execution_error", "message": "tool 'explode' failed: ValueError: disk on fire"},
    ),
    "a handler raising ToolDenied: denied in its own words": (
        "refuse",
        {"path": "../etc"},
        {"kind": "denied", "message": "'../etc' is outside the allowed roots (allowed: ./data)"},
    ),
}


@pytest.mark.parametrize("case", HANDLER_FAILURES)
async def test_a_handler_failure_is_exactly_its_error_and_the_next_call_works(
    registry: ToolRegistry, case: str
) -> None:
    name, args, error = HANDLER_FAILURES[case]
    assert (await dispatch(registry, name, args))["error"] == error
    await assert_next_call_works(registry)


async def test_raising_handler_keeps_the_original_exception_as_cause(registry: ToolRegistry) -> None:
    with pytest.raises(ToolExecutionError) as info:
        await invoke_tool(registry, "explode", {"message": "x"}, ToolContext())
    assert isinstance(info.value.__cause__, ValueError)


async def test_sync_handler_past_its_timeout_is_timeout(registry: ToolRegistry) -> None:
    with pytest.raises(ToolTimeout):
        await invoke_tool(registry, "hang_sync", {}, ToolContext())
    await assert_next_call_works(registry)


NEEDS_311 = pytest.mark.skipif(
    sys.version_info < (3, 11), reason="Task.cancelling() tells inside from caller"
)


@NEEDS_311
async def test_handler_cancelled_from_inside_is_cancelled(registry: ToolRegistry) -> None:
    envelope = await dispatch(registry, "cancel_inside", {})
    assert envelope["error"]["kind"] == "cancelled"
    await assert_next_call_works(registry)


@NEEDS_311
async def test_cancelled_from_inside_raises_tool_cancelled_from_invoke(registry: ToolRegistry) -> None:
    with pytest.raises(ToolCancelled):
        await invoke_tool(registry, "cancel_inside", {}, ToolContext())


@pytest.mark.parametrize("name", ["wait_forever", "wait_forever_timed"])
async def test_caller_cancellation_propagates_unconverted(registry: ToolRegistry, name: str) -> None:
    task = asyncio.ensure_future(dispatch(registry, name, {}))
    await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await assert_next_call_works(registry)


async def test_callers_own_timeout_is_not_turned_into_a_tool_error(registry: ToolRegistry) -> None:
    with pytest.raises(asyncio.TimeoutError):  # the builtin TimeoutError from 3.11 on
        await asyncio.wait_for(dispatch(registry, "wait_forever", {}), timeout=0.02)


async def test_unimportable_lazy_handler_is_runtime_missing(
    registry: ToolRegistry, operator_log: Any
) -> None:
    envelope = await dispatch(registry, "unimportable", {})
    assert envelope["error"]["kind"] == "runtime_missing"
    message = envelope["error"]["message"]
    assert "reyn_no_such_module_anywhere" in message and "ModuleNotFoundError" not in message  # fixed words
    assert "ModuleNotFoundError" in operator_log.record(message)  # what was raised: the operator's
    await assert_next_call_works(registry)


async def test_unimportable_handler_raises_runtime_missing_every_time(registry: ToolRegistry) -> None:
    for _ in range(2):
        with pytest.raises(ToolRuntimeMissing):
            await invoke_tool(registry, "unimportable", {}, ToolContext())


@pytest.mark.parametrize("name", ["exits", "exits_async", "exits_async_untimed"])
async def test_handler_calling_sys_exit_is_an_execution_error_not_a_host_exit(
    registry: ToolRegistry, name: str
) -> None:
    envelope = await dispatch(registry, name, {})
    assert envelope["error"]["kind"] == "execution_error"
    assert "sys.exit" in envelope["error"]["message"]
    await assert_next_call_works(registry)


async def test_results_are_turned_into_json_data(registry: ToolRegistry) -> None:
    envelope = await dispatch(registry, "shapes", {})
    assert envelope == {
        "status": "ok",
        "data": {"model": {"text": "hi"}, "point": {"x": 1, "y": 2}, "path": "/tmp/x", "set": [1, 2, 3]},
    }


async def test_result_that_cannot_be_json_is_an_error_envelope(registry: ToolRegistry) -> None:
    envelope = await dispatch(registry, "loop", {})
    assert envelope["error"]["kind"] == "execution_error"
    assert "cannot be sent as JSON" in envelope["error"]["message"]
    await assert_next_call_works(registry)


async def test_no_envelope_ever_contains_a_traceback(registry: ToolRegistry) -> None:
    calls = [("explode", {"message": "m"}), ("nope", {}), ("add", "{"), ("unimportable", {}), ("exits", {})]
    for name, args in calls:
        envelope = await dispatch(registry, name, args)
        assert "Traceback" not in str(envelope) and 'File "' not in str(envelope)


async def test_many_concurrent_calls_each_get_their_own_result(registry: ToolRegistry) -> None:
    results = await asyncio.gather(*(dispatch(registry, "add", {"a": i, "b": i}) for i in range(50)))
    assert [r["data"]["sum"] for r in results] == [2 * i for i in range(50)]


def test_a_hung_sync_handler_blocks_neither_loop_shutdown_nor_process_exit() -> None:
    import subprocess

    script = """
import asyncio, threading
from reyn_core import ToolContext, tool
from reyn_core.host import RegistryBuilder, ToolRegistry, dispatch_tool

@tool(timeout_s=0.1)
def stuck() -> None:
    \"\"\"Wait forever.\"\"\"
    threading.Event().wait()

builder = RegistryBuilder()
builder.register(stuck)
print(asyncio.run(dispatch_tool(builder.freeze(), "stuck", {}, ToolContext()))["error"]["kind"])
"""
    # If the stuck thread were joined at shutdown, this would never return (the bound is generous).
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout.strip()) == (0, "timeout")


async def test_any_mapping_is_accepted_as_arguments(registry: ToolRegistry) -> None:
    from types import MappingProxyType

    assert await dispatch(registry, "add", MappingProxyType({"a": 1, "b": 1})) == {
        "status": "ok",
        "data": {"sum": 2},
    }


@pytest.mark.parametrize("args", [None, "", "  "])
async def test_no_arguments_mean_an_empty_object(registry: ToolRegistry, args: Any) -> None:
    envelope = await dispatch(registry, "add", args)
    assert [e["path"] for e in envelope["error"]["errors"]] == ["/a", "/b"]  # {} is missing a and b


async def test_arguments_nested_too_deeply_are_invalid_arguments_not_a_crash() -> None:
    @tool
    def take(x: object = None) -> str:
        """Take anything."""
        return "ok"

    builder = RegistryBuilder()
    builder.register(take)
    registry = builder.freeze()
    deep_text = '{"x":' + "[" * 100_000 + "]" * 100_000 + "}"
    env = await dispatch_tool(registry, "take", deep_text, ToolContext())
    assert env["error"]["kind"] == "invalid_arguments" and "nest too deeply" in env["error"]["message"]
    nested: object = []
    for _ in range(200):
        nested = [nested]
    env = await dispatch_tool(registry, "take", {"x": nested}, ToolContext())
    assert env["error"]["kind"] == "invalid_arguments" and "nest too deeply" in env["error"]["message"]
    assert (await dispatch_tool(registry, "take", {"x": [[1]]}, ToolContext()))["status"] == "ok"


async def test_strict_mode_nulls_for_optional_arguments_mean_not_given() -> None:
    from reyn_core.host import render_router

    seen: list[object] = []

    @tool
    def read(path: str, max_bytes: int = 4096, encoding: str | None = None) -> str:
        """Read a file."""
        seen.append((max_bytes, encoding))
        return path

    builder = RegistryBuilder()
    builder.register(read)
    registry = builder.freeze()
    [spec] = render_router(registry, ToolContext(surface="router"), strict=True)
    params = spec["function"]["parameters"]
    assert set(params["required"]) == {"path", "max_bytes", "encoding"}  # strict: all required, nullable
    # exactly what a model obeying the strict schema sends for "not given":
    env = await dispatch_tool(
        registry, "read", {"path": "a", "max_bytes": None, "encoding": None}, ToolContext(surface="router")
    )
    assert env == {"status": "ok", "data": "a"}
    assert seen == [(4096, None)]  # the handler's default, not None
    bad = await dispatch_tool(registry, "read", {"path": None}, ToolContext(surface="router"))
    assert bad["error"]["kind"] == "invalid_arguments"  # a required argument may not be null


async def test_an_integer_too_long_to_parse_is_invalid_arguments_not_a_crash() -> None:
    @tool
    def take(n: int = 0) -> int:
        """Take a number."""
        return n

    builder = RegistryBuilder()
    builder.register(take)
    registry = builder.freeze()
    env = await dispatch_tool(registry, "take", '{"n": ' + "9" * 5000 + "}", ToolContext())
    assert env["error"]["kind"] == "invalid_arguments" and "cannot be read" in env["error"]["message"]
    assert (await dispatch_tool(registry, "take", '{"n": 5}', ToolContext())) == {"status": "ok", "data": 5}


@pytest.mark.parametrize("plugin_settings", [None, {"on": True}])
async def test_a_registry_a_context_carries_is_not_kept_alive_by_the_dispatcher(
    plugin_settings: dict[str, Any] | None,
) -> None:
    """Hosts hand the catalog pack its registry in ``ctx.extras``; once the host drops both, the
    dispatcher's per-snapshot caches must not keep that registry (and so themselves) alive."""
    import gc
    import weakref

    from reyn_core import ToolOrigin

    builder = RegistryBuilder(settings={"p": plugin_settings} if plugin_settings else None)
    builder.register(add, origin=ToolOrigin(kind="plugin", plugin_id="p"))
    registry = builder.freeze()
    ctx = ToolContext(surface="router", extras={"registry": registry})
    for surface in ("router", "mcp"):
        assert (await dispatch_tool(registry, "add", {"a": 1, "b": 2}, ctx, surface=surface))[
            "status"
        ] == "ok"
    gone = weakref.ref(registry)
    del registry, ctx, builder
    gc.collect()
    assert gone() is None
