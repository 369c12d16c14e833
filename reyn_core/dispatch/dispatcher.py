"""The one dispatcher: ``invoke_tool`` (raises typed errors) and ``dispatch_tool`` (model envelopes).

Every call goes through the same steps: lookup, gates re-checked (defense in depth: the renderers
already hid what a surface may not see), the call's own copy of the arguments parsed, validated with
the tool's cached validator and bound to the lazily resolved handler, ``before`` policy hooks,
execution (sync handlers in a worker thread) under the tool's timeout, then ``after`` hooks — which
also see failures. The arguments are validated and bound before anything else can run, and the hooks
see a read-only snapshot of them: what was validated is exactly what the handler gets. What the
dispatcher prepares per tool (validator, handler shape) it caches per registry snapshot, here.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

from .. import gates
from ..calls import NO_HOOKS, ToolCall, ToolCallOutcome
from ..context import ToolContext, as_names
from ..errors import (
    ToolCancelled,
    ToolError,
    ToolExecutionError,
    ToolGateRefused,
    ToolRuntimeMissing,
)
from ..jsondata import to_jsonable
from ..registry import ToolRegistry
from ..tool import ToolDefinition
from . import tracing
from .arguments import ArgumentCheck, own_arguments, read_only
from .handlers import CallShape, resolve_handler
from .hooks import run_after, run_before
from .runner import describe, handler_exit, run_handler

if TYPE_CHECKING:
    from typing import Unpack

# --------------------------------------------------------------------------- per-snapshot caches


@dataclass(slots=True)
class _PreparedTool:
    """One tool as the dispatcher calls it in one registry snapshot (made at its first call).

    ``gate`` decides the layers the snapshot fixes once and the call layer on every call; it is None
    for a registry that is not exactly a ``ToolRegistry`` (its tools and policy are not known to be
    frozen) or whose policy or definition is not of the exact immutable types
    (``gates.fixed_by_snapshot``): such a call looks its tool up again and runs ``gates.check`` in
    full. ``plain``: the snapshot has no plugin settings for the tool, so ``context_for`` would return
    the caller's context unchanged. ``shape`` stays None until the handler resolves (an unimportable
    handler is retried on every call).

    Nothing here holds a caller's context: a context may hold the registry (``extras``), and this
    cache must not keep its own snapshot alive."""

    tool: ToolDefinition
    gate: gates.ToolGate | None
    check: ArgumentCheck
    plain: bool
    shape: CallShape | None = None


@dataclass(slots=True)
class _SnapshotCache:
    """What the dispatcher prepared for one registry snapshot, by tool name (filled lazily)."""

    tools: dict[str, _PreparedTool] = field(default_factory=dict)


_NO_NAMES: frozenset[str] = frozenset()
_NO_CALL: Any = None  # the ``call`` of a registry without hooks: never read
_CACHES: weakref.WeakKeyDictionary[ToolRegistry, _SnapshotCache] = weakref.WeakKeyDictionary()
_CACHE_LOCK = threading.Lock()
# The snapshot of the latest call and its cache: a host dispatches against one registry at a time,
# and this skips the weak-key lookup. A weak reference, so it keeps no registry alive.
_latest: tuple[weakref.ref[ToolRegistry], _SnapshotCache] | None = None


def _by_identity(cls: type) -> bool:
    """Whether instances of ``cls`` are equal only to themselves (what a cache key must be)."""
    return cls.__eq__ is object.__eq__ and cls.__hash__ is object.__hash__


def _cache(registry: ToolRegistry) -> _SnapshotCache:
    global _latest
    latest = _latest
    if latest is not None and latest[0]() is registry:
        return latest[1]
    if type(registry) is not ToolRegistry and not _by_identity(type(registry)):
        # A subclass with its own equality could equal (or be unhashable like) another snapshot:
        # nothing prepared for one registry may serve another, so this call prepares afresh.
        return _SnapshotCache()
    cache = _CACHES.get(registry)
    if cache is None:
        with _CACHE_LOCK:
            cache = _CACHES.setdefault(registry, _SnapshotCache())
    _latest = (weakref.ref(registry), cache)
    return cache


def _prepare(cache: _SnapshotCache, registry: ToolRegistry, tool: ToolDefinition) -> _PreparedTool:
    """The entry of ``tool`` as ``registry.get`` returned it now: the cached one when it was prepared
    for this very definition, else a new one (a registry subclass may hand out another definition
    under the same name; its schema, handler and gates are then that definition's)."""
    prepared = cache.tools.get(tool.name)
    if prepared is not None and prepared.tool is tool:
        return prepared
    gate, plain = None, False
    # frozen: its policy, names and settings cannot change; and nothing it holds computes an answer
    if type(registry) is ToolRegistry and gates.fixed_by_snapshot(
        tool, registry.operator, registry.original_names
    ):
        try:
            gate = gates.ToolGate(tool, registry.operator, registry.original_names)
        except Exception:  # gates.check raises it again inside the call, refused and audited there
            gate = None
        plain = gate is not None and registry.settings_for(tool) is None
    prepared = cache.tools[tool.name] = _PreparedTool(tool, gate, ArgumentCheck(tool.parameters), plain)
    return prepared


def _call_context(
    prepared: _PreparedTool, registry: ToolRegistry, ctx: ToolContext, surface: str
) -> ToolContext:
    """``ctx`` as the tool sees it: with its plugin's settings, on the surface of this call."""
    if prepared.plain and ctx.surface == surface:
        return ctx
    call_ctx = registry.context_for(prepared.tool, ctx)
    if call_ctx.surface != surface:
        call_ctx = call_ctx.with_surface(surface)  # type: ignore[arg-type]
    return call_ctx


def _shape(prepared: _PreparedTool) -> CallShape:
    shape = prepared.shape
    if shape is None:
        shape = prepared.shape = resolve_handler(prepared.tool)
    return shape


# --------------------------------------------------------------------------- invoke


def _refusal(tool: ToolDefinition, surface: str, decision: gates.Decision) -> ToolError:
    if decision.layer == "runtime":
        return ToolRuntimeMissing(decision.reason, tool=tool.name)
    return ToolGateRefused(
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
    ``before`` hooks see only calls that passed the gates and argument validation. Both see a
    read-only snapshot of the arguments; the handler gets its own copy, validated and bound before
    any hook runs, so neither a hook nor the caller changing ``args`` meanwhile reaches it. A caller
    that cancels this coroutine gets its ``CancelledError`` back unchanged. With tracing on
    (``configure_tracing``) the call runs inside its ``execute_tool`` span.
    """
    if tracing.active is not None:  # tracing on: the same call, inside its span
        return await tracing.traced(_invoke, registry, name, args, ctx, surface, exclude, allowed_ops)
    return await _invoke(registry, name, args, ctx, surface=surface, exclude=exclude, allowed_ops=allowed_ops)


async def _invoke(
    registry: ToolRegistry,
    name: str,
    args: Mapping[str, Any] | str | bytes | None,
    ctx: ToolContext,
    *,
    surface: str | None = None,
    exclude: Iterable[str] = (),
    allowed_ops: Iterable[str] | None = None,
) -> Any:
    """``invoke_tool`` itself (outside any span)."""
    surface = surface or ctx.surface
    if type(exclude) is not frozenset:
        # host mistakes raise TypeError here, not as a tool error
        exclude = _NO_NAMES if exclude == () else frozenset(as_names(exclude, "exclude"))
    if allowed_ops is not None:
        allowed_ops = as_names(allowed_ops, "allowed_ops")
    cache = _cache(registry)
    prepared = cache.tools.get(name) if type(name) is str else None
    if prepared is None or prepared.gate is None:  # not prepared, or nothing of it decided ahead
        prepared = _prepare(cache, registry, registry.get(name))
    tool = prepared.tool
    hooks = registry.hooks or NO_HOOKS
    call_ctx = _call_context(prepared, registry, ctx, surface)
    started = time.perf_counter()
    parsed, problems = own_arguments(args)  # the call's own: no one else can change them
    # What the policy hooks see (read-only); built only when there are hooks (the common host has none).
    call = ToolCall(tool, read_only(parsed), call_ctx, surface) if hooks.before or hooks.after else _NO_CALL
    try:
        # the gates again (available() sees this surface)
        gate = prepared.gate
        if gate is not None:
            decision = gate.check(surface, call_ctx, exclude, allowed_ops)
        else:
            decision = gates.check(
                tool, surface, call_ctx, registry=registry, exclude=exclude, allowed_ops=allowed_ops
            )
        if not decision.allowed:
            raise _refusal(tool, surface, decision)
        check = prepared.check
        shape = prepared.shape
        kwargs = None
        if not problems and check.single_undecided_or_eligible:
            if shape is None:
                try:
                    shape = _shape(prepared)
                except ToolError:  # reported in the full path's order (after argument problems)
                    shape = None
            if shape is not None:
                kwargs = check.single(shape, parsed, call_ctx)
        if kwargs is None:  # the full path: schema validator, then pydantic binding
            validated = check.validate(tool, parsed, problems)
            shape = _shape(prepared)
            kwargs = check.bind(shape, tool, validated, call_ctx)
        # Bound on both paths before the first await: what a hook (or the caller meanwhile) does
        # cannot reach the handler's arguments.
        if hooks.before:
            await run_before(hooks, call)
        assert shape is not None  # both paths resolved it
        if shape.is_async and tool.timeout_s is None:  # the common case, awaited here
            try:
                result = await shape.fn(**kwargs)
            except SystemExit as exc:
                raise handler_exit(exc) from None
        else:
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


class CallOptions(TypedDict, total=False):
    """``invoke_tool``'s keyword options, which ``dispatch_tool`` passes on."""

    surface: str | None
    exclude: Iterable[str]
    allowed_ops: Iterable[str] | None


async def dispatch_tool(
    registry: ToolRegistry,
    name: str,
    args: Mapping[str, Any] | str | bytes | None,
    ctx: ToolContext,
    **options: Unpack[CallOptions],
) -> dict[str, Any]:
    """``invoke_tool`` (with the same ``surface`` / ``exclude`` / ``allowed_ops``) for model-facing
    surfaces: never raises for a tool failure.

    Returns ``{"status": "ok", "data": <JSON-safe result>}`` or
    ``{"status": "error", "error": {"kind": ..., "message": ...}}`` (plus ``layer`` for gate refusals
    and ``errors`` with JSON pointers for invalid arguments). No tracebacks reach the model.
    """
    try:
        result = await invoke_tool(registry, name, args, ctx, **options)
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
