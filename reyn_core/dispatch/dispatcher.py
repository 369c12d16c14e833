"""The one dispatcher: ``invoke_tool`` (raises typed errors) and ``dispatch_tool`` (model envelopes).

Every call goes through the same steps: lookup, gates re-checked (defense in depth: the renderers
already hid what a surface may not see), argument parsing and validation with the tool's cached
validator, lazy handler resolution, ``before`` policy hooks, execution (sync handlers in a worker
thread) under the tool's timeout, then ``after`` hooks — which also see failures. What the dispatcher
prepares per tool (validator, handler shape) it caches per registry snapshot, here.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import gates
from ..calls import NO_HOOKS, ToolCall, ToolCallOutcome
from ..context import ToolContext, as_names
from ..errors import ToolCancelled, ToolError, ToolExecutionError, ToolGateRefused, ToolRuntimeMissing
from ..jsondata import to_jsonable
from ..registry import ToolRegistry
from ..tool import ToolDefinition
from ..validation import parse_arguments
from .arguments import ArgumentCheck
from .handlers import CallShape, resolve_handler
from .hooks import run_after, run_before
from .runner import describe, run_handler

# --------------------------------------------------------------------------- per-snapshot caches


@dataclass(slots=True)
class _SnapshotCache:
    """What the dispatcher prepared for one registry snapshot, by tool name (filled lazily)."""

    checks: dict[str, ArgumentCheck] = field(default_factory=dict)
    shapes: dict[str, CallShape] = field(default_factory=dict)


_NO_NAMES: frozenset[str] = frozenset()
_NO_CALL: Any = None  # the ``call`` of a registry without hooks: never read
_CACHES: weakref.WeakKeyDictionary[ToolRegistry, _SnapshotCache] = weakref.WeakKeyDictionary()
_CACHE_LOCK = threading.Lock()


def _cache(registry: ToolRegistry) -> _SnapshotCache:
    cache = _CACHES.get(registry)
    if cache is None:
        with _CACHE_LOCK:
            cache = _CACHES.setdefault(registry, _SnapshotCache())
    return cache


def _argument_check(cache: _SnapshotCache, tool: ToolDefinition) -> ArgumentCheck:
    check = cache.checks.get(tool.name)
    if check is None:
        check = cache.checks[tool.name] = ArgumentCheck(tool.parameters)
    return check


def _shape(cache: _SnapshotCache, tool: ToolDefinition) -> CallShape:
    shape = cache.shapes.get(tool.name)
    if shape is None:
        shape = cache.shapes[tool.name] = resolve_handler(tool)
    return shape


# --------------------------------------------------------------------------- invoke


def _require_allowed(
    registry: ToolRegistry,
    tool: ToolDefinition,
    surface: str,
    ctx: ToolContext,
    exclude: frozenset[str],
    allowed_ops: Iterable[str] | None,
) -> None:
    decision = gates.check(tool, surface, ctx, registry=registry, exclude=exclude, allowed_ops=allowed_ops)
    if decision.allowed:
        return
    if decision.layer == "runtime":
        raise ToolRuntimeMissing(decision.reason, tool=tool.name)
    raise ToolGateRefused(
        f"tool {tool.name!r} is refused on the {surface} surface ({decision.layer} gate): {decision.reason}",
        tool=tool.name,
        layer=decision.layer,
        reason=decision.reason,
    )


def _is_cancellation(exc: BaseException) -> bool:
    import asyncio

    return isinstance(exc, asyncio.CancelledError)


def _caller_cancelled() -> bool:
    """Whether the running task itself is being cancelled (by its caller), as opposed to a
    ``CancelledError`` raised inside the handler. Before Python 3.11 this cannot be told apart, so
    every cancellation is treated as the caller's and propagates."""
    import asyncio

    task = asyncio.current_task()
    cancelling = getattr(task, "cancelling", None)
    return cancelling is None or bool(cancelling())


async def invoke_tool(
    registry: ToolRegistry,
    name: str,
    args: Mapping[str, Any] | str | bytes | None,
    ctx: ToolContext,
    *,
    surface: str | None = None,
    exclude: Iterable[str] = (),
    allowed_ops: Iterable[str] | None = None,
) -> Any:
    """Run one tool call and return the handler's result, or raise a typed ``ToolError``.

    ``args`` may be a dict or the JSON string a model sent. ``surface`` defaults to ``ctx.surface``.
    ``exclude`` / ``allowed_ops`` must be what the renderer was given, so the gates agree.

    ``after`` hooks observe every outcome of a call to a registered tool, refusals included;
    ``before`` hooks see only calls that passed the gates and argument validation. A caller that
    cancels this coroutine gets its ``CancelledError`` back unchanged.
    """
    surface = surface or ctx.surface
    if type(exclude) is not frozenset:
        # host mistakes raise TypeError here, not as a tool error
        exclude = _NO_NAMES if exclude == () else frozenset(as_names(exclude, "exclude"))
    if allowed_ops is not None:
        allowed_ops = as_names(allowed_ops, "allowed_ops")
    tool = registry.get(name)
    hooks = registry.hooks or NO_HOOKS
    call_ctx = registry.context_for(tool, ctx)
    if call_ctx.surface != surface:
        call_ctx = call_ctx.with_surface(surface)  # type: ignore[arg-type]
    started = time.perf_counter()
    parsed, problems = parse_arguments(args)
    # What the policy hooks see; built only when there are hooks (the common host has none).
    call = (
        ToolCall(tool, parsed if isinstance(parsed, Mapping) else {}, call_ctx, surface)
        if hooks.before or hooks.after
        else _NO_CALL
    )
    try:
        _require_allowed(
            registry, tool, surface, call_ctx, exclude, allowed_ops
        )  # available() sees this surface
        cache = _cache(registry)
        check = _argument_check(cache, tool)
        shape = cache.shapes.get(tool.name)
        kwargs = None
        if not problems and check.single_undecided_or_eligible:
            if shape is None:
                try:
                    shape = _shape(cache, tool)
                except ToolError:  # reported in the full path's order (after argument problems)
                    shape = None
            if shape is not None:
                kwargs = check.single(shape, parsed, call_ctx)
        if kwargs is None:  # the full path: schema validator, then pydantic binding
            validated = check.validate(tool, parsed, problems)
            shape = _shape(cache, tool)
            if hooks.before:
                await run_before(hooks, call)
            kwargs = check.bind(shape, tool, validated, call_ctx)
        elif hooks.before:
            await run_before(hooks, call)
        assert shape is not None  # both paths resolved it
        result = await run_handler(shape.fn, shape.is_async, tool, kwargs)
    except ToolError as exc:
        exc.tool = exc.tool or tool.name
        await run_after(hooks, call, ToolCallOutcome("error", time.perf_counter() - started, error=exc))
        raise
    except Exception as exc:
        failed = ToolExecutionError(f"tool {tool.name!r} failed: {describe(exc)}", tool=tool.name)
        await run_after(hooks, call, ToolCallOutcome("error", time.perf_counter() - started, error=failed))
        raise failed from exc
    except BaseException as exc:  # CancelledError (asyncio is imported lazily, hence no except clause)
        if not _is_cancellation(exc):
            raise  # the process is stopping
        cancelled = ToolCancelled(f"tool {tool.name!r} was cancelled before it finished", tool=tool.name)
        # A call the caller cancels (e.g. an MCP client's notifications/cancelled) is audited too.
        await run_after(hooks, call, ToolCallOutcome("error", time.perf_counter() - started, error=cancelled))
        if _caller_cancelled():
            raise  # the caller's own cancellation propagates unchanged: never swallow that
        raise cancelled from None
    if hooks.after:
        await run_after(hooks, call, ToolCallOutcome("ok", time.perf_counter() - started, result=result))
    return result


async def dispatch_tool(
    registry: ToolRegistry,
    name: str,
    args: Mapping[str, Any] | str | bytes | None,
    ctx: ToolContext,
    *,
    surface: str | None = None,
    exclude: Iterable[str] = (),
    allowed_ops: Iterable[str] | None = None,
) -> dict[str, Any]:
    """``invoke_tool`` for model-facing surfaces: never raises for a tool failure.

    Returns ``{"status": "ok", "data": <JSON-safe result>}`` or
    ``{"status": "error", "error": {"kind": ..., "message": ...}}`` (plus ``layer`` for gate refusals
    and ``errors`` with JSON pointers for invalid arguments). No tracebacks reach the model.
    """
    try:
        result = await invoke_tool(
            registry, name, args, ctx, surface=surface, exclude=exclude, allowed_ops=allowed_ops
        )
    except ToolError as exc:
        return exc.to_envelope()
    try:
        data = to_jsonable(result)
    except Exception as exc:  # e.g. a self-referencing result: report it, never raise
        tool = name if isinstance(name, str) else "?"
        return ToolExecutionError(
            f"tool {tool!r} returned a result that cannot be sent as JSON: {describe(exc)}", tool=tool
        ).to_envelope()
    return {"status": "ok", "data": data}
