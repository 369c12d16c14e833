"""The one dispatcher: ``invoke_tool`` (raises typed errors) and ``dispatch_tool`` (model envelopes).

Every call goes through the same steps: lookup, gates re-checked (defense in depth: the renderers
already hid what a surface may not see), the call's own copy of the arguments parsed, validated with
the tool's one validator and bound to the lazily resolved handler, ``before`` policy hooks,
execution (sync handlers in a worker thread) under the tool's timeout, then ``after`` hooks — which
also see failures. The arguments are validated and bound before anything else can run, and the hooks
see a read-only snapshot of them: what was validated is exactly what the handler gets. What a call
needs prepared per tool (the gate layers the snapshot fixes, the validator, the handler shape) the
registry snapshot holds (``ToolRegistry.prepared``): there is no table of the dispatcher's own.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any, TypedDict

from .. import gates, observation
from ..approvals.key import handler_arguments
from ..calls import ToolCall, ToolCallOutcome
from ..context import CallGates, ToolContext, as_names
from ..errors import (
    ToolCancelled,
    ToolError,
    ToolExecutionError,
    ToolGateRefused,
    ToolNotFound,
    ToolRuntimeMissing,
)
from ..own_check import CheckFailed
from ..registry import ToolRegistry
from ..registry.prepared import PreparedTool
from ..tool import ToolDefinition
from .audit import argument_hash
from .bound_arguments import arguments_in_thread, invalid, own_arguments, own_small, read_only
from .hooks import run_after, run_before
from .runner import HandlerThreads, describe, handler_exit, run_handler
from .sendable import Finish, sendable

if TYPE_CHECKING:
    from typing import Unpack

# --------------------------------------------------------------------------- the snapshot's prepared tool

_NO_NAMES: frozenset[str] = frozenset()
_NO_CALL: Any = None  # the ``call`` of a registry without hooks: never read
_UNDECIDED: Any = object()  # a surface the snapshot has no answer for yet


def _call_context(
    prepared: PreparedTool, registry: ToolRegistry, ctx: ToolContext, surface: str
) -> ToolContext:
    """``ctx`` as the tool sees it, when it is not ``ctx`` itself (``PreparedTool.plain``: a host
    tool, no host files; the call's surface is ``ctx.surface``): ``context_for``, on ``surface``."""
    call_ctx = registry.context_for(prepared.definition, ctx)
    if call_ctx.surface != surface:
        call_ctx = call_ctx.with_surface(surface)  # type: ignore[arg-type]
    return call_ctx


def _carrying(
    ctx: ToolContext, surface: str, exclude: frozenset[str], allowed_ops: tuple[str, ...] | None
) -> ToolContext:
    """``ctx`` carrying the call's ``exclude`` / ``allowed_ops`` (``ToolContext.call_gates``), so the
    gates of the call and every question its handler asks of them (``registry.visible_names(
    ctx.surface, ctx)``) read one key. What ``ctx`` already says is not copied again: a loop whose
    context holds its exclusions or its phase's list pays nothing per call."""
    carried = ctx.call_gates
    said = carried.exclude if carried is not None else _NO_NAMES
    rs = ctx.router_state
    if surface == "router" and rs is not None and rs.exclude:
        said = said | rs.exclude
    ex = exclude if not exclude <= said else _NO_NAMES
    ops = allowed_ops
    if ops is not None:
        ps = ctx.phase_state
        current = carried.allowed_ops if carried is not None else None
        if current is None and ps is not None:
            current = ps.allowed_ops
        if current == ops:
            ops = None
    if not ex and ops is None:
        return ctx
    if carried is not None:  # a call made from a handler: its caller's exclusions stay
        ex = ex | carried.exclude
        ops = ops if ops is not None else carried.allowed_ops
    return replace(ctx, call_gates=CallGates(ex, ops))


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
    exclude: Iterable[str] = frozenset(),
    allowed_ops: Iterable[str] | None = None,
    approval: str | None = None,
    _finish: Finish | None = None,
) -> Any:
    """Run one tool call and return the handler's result, or raise a typed ``ToolError``.

    ``args`` may be a dict or the JSON string a model sent. ``surface`` defaults to ``ctx.surface``.
    ``exclude`` / ``allowed_ops`` must be what the renderer was given, so the gates agree.

    ``after`` hooks observe every outcome of a call to a registered tool, refusals included;
    ``before`` hooks see only calls that passed the gates and argument validation. Both see a
    read-only snapshot of the arguments; the handler gets its own copy, validated and bound before
    any hook runs, so neither a hook nor the caller changing ``args`` meanwhile reaches it. A caller
    that cancels this coroutine gets its ``CancelledError`` back unchanged.

    A call the registry's approval policy selects is checked after binding and before the hooks
    (``reyn_core.approvals``): it runs only by consuming an approval of exactly this call
    (``approval`` names the request a surface resumes; without it, an approved request with this
    call's key is used), else raises ``ToolApprovalRequired`` or ``ApprovalRefused``. With an observer
    installed (``reyn_core.observation``; reyn-otel's tracing) the call runs inside it (its span).

    The result is returned as the handler gave it; what ``after`` hooks, the audit log, an approval's
    ``executed`` line and the span record is this outcome (``dispatch_tool`` records the one it sends).

    ``_finish`` is ``dispatch_tool``'s, not a host's: with it the result is ``_finish(tool, result)``,
    the one place a call's final outcome is decided. It runs inside the call, before anything records
    the outcome (approval line, ``after`` hooks — the audit log is one — and the observer's span), so
    a result ``_finish`` refuses is recorded as the error the caller receives.
    """
    if observation.active is not None and observation.opens_call():  # observed: the call inside it
        return await observation.observed(
            invoke_tool if _finish is None else partial(invoke_tool, _finish=_finish),
            registry,
            name,
            args,
            ctx,
            surface,
            exclude,
            allowed_ops,
            arguments=own_arguments,
            argument_hash=argument_hash,
            approval=approval,
        )
    surface = surface or ctx.surface
    if type(exclude) is not frozenset:
        # host mistakes raise TypeError here, not as a tool error
        exclude = _NO_NAMES if exclude == () else frozenset(as_names(exclude, "exclude"))
    if allowed_ops is not None:
        allowed_ops = as_names(allowed_ops, "allowed_ops")
    if exclude or allowed_ops is not None:  # the context carries them: the gates read nothing else
        ctx = _carrying(ctx, surface, exclude, allowed_ops)
    try:
        prepared = registry.prepared(name)
    except ToolNotFound:
        # the caller's own view: "did you mean" never names a tool hidden from it
        raise registry.not_found(name, surface, ctx) from None
    tool = prepared.definition
    hooks = registry.call_hooks  # None: no hooks, decided when the snapshot was made
    # ``ctx`` as the tool sees it: with its plugin's settings, on the surface of this call
    call_ctx = (
        ctx if prepared.plain and ctx.surface == surface else _call_context(prepared, registry, ctx, surface)
    )
    admitted: Any = None
    parsed, problems, is_small = own_small(args)  # the call's own: no one else can change them
    if hooks is None:  # the common host: no hook sees the call, none is timed
        started, call = 0.0, _NO_CALL
    else:  # what the policy hooks see (read-only)
        started = time.perf_counter()
        call = ToolCall(tool, read_only(parsed), call_ctx, surface, prepared.digest)
    try:
        # The gates again (available() sees this surface), decided by gates.check: the layers the
        # snapshot fixes were decided once, by it, and the snapshot holds the answer per surface.
        # The call's exclude / allowed_ops are in call_ctx (``_carrying``): nothing is passed beside it.
        if tool.available is None:
            decision = _gate_decision(prepared, registry, surface, call_ctx)
        else:  # its own check may take its deadline: asked off the event loop, as a call's other waits
            import asyncio

            decision = await asyncio.to_thread(_gate_decision, prepared, registry, surface, call_ctx)
        if not decision.allowed:
            raise _refusal(tool, surface, decision)
        # the handler first: resolving a lazy one settles the tool's one validator with it
        shape = prepared.shape or prepared.resolved()
        if problems:  # the arguments could not be parsed
            raise invalid(tool, problems)
        if is_small:
            kwargs, problems = prepared.arguments(parsed, call_ctx, True)
        else:  # a large call: validated and bound in a worker thread
            kwargs, problems = await arguments_in_thread(prepared, parsed, call_ctx)
        if problems:
            raise invalid(tool, problems)
        # Bound before any hook runs: what a hook (or the caller meanwhile) does cannot reach the
        # handler's arguments. The approval check sees exactly these, as the handler will.
        gate = registry.approvals
        if gate is not None and gate.selects(tool):
            bound = handler_arguments(kwargs, shape.model_param, shape.ctx_param, parsed)
            admitted = await gate.admit(tool, bound, call_ctx, surface, approval)
        if hooks is not None and hooks.before:
            await run_before(hooks, call)
        # the common case, awaited here (a host counting its calls' handlers has run_handler count it)
        if shape.is_async and tool.timeout_s is None and HandlerThreads.current() is None:
            try:
                result = await shape.fn(**kwargs)
            except SystemExit as exc:
                raise handler_exit(exc) from None
        else:
            result = await run_handler(shape.fn, shape.is_async, tool, kwargs, call)
        if _finish is not None:  # what the caller will receive, decided before anything records it
            result = _finish(tool.name, result)
    except ToolError as exc:
        failed = exc
        if isinstance(exc, CheckFailed):  # its check failed in its worker: logged as one failing here
            failed = _refusal(tool, surface, gates.failed_check(tool, exc.failure, registry.failures))
        failed.tool = failed.tool or tool.name
        if admitted is not None or hooks is not None:
            await _ended(registry, admitted, call, ToolCallOutcome("error", _since(started), error=failed))
        if failed is exc:
            raise
        raise failed from None
    except Exception as exc:
        failed = ToolExecutionError(f"tool {tool.name!r} failed: {describe(exc)}", tool=tool.name)
        if admitted is not None or hooks is not None:
            await _ended(registry, admitted, call, ToolCallOutcome("error", _since(started), error=failed))
        raise failed from exc
    except BaseException as exc:  # CancelledError (asyncio is imported lazily, hence no except clause)
        if not _is_cancellation(exc):
            raise  # the process is stopping
        cancelled = ToolCancelled(f"tool {tool.name!r} was cancelled before it finished", tool=tool.name)
        # A call the caller cancels (e.g. an MCP client's notifications/cancelled) is audited too.
        if admitted is not None or hooks is not None:
            outcome = ToolCallOutcome("error", _since(started), error=cancelled)
            await _ended(registry, admitted, call, outcome)
        if _caller_cancelled():
            raise  # the caller's own cancellation propagates unchanged: never swallow that
        raise cancelled from None
    if admitted is not None or (hooks is not None and hooks.after):
        await _ended(registry, admitted, call, ToolCallOutcome("ok", _since(started), result=result))
    return result


def _gate_decision(
    prepared: PreparedTool, registry: ToolRegistry, surface: str, ctx: ToolContext
) -> gates.Decision:
    """The gates' answer for one call: the layers the snapshot fixes, decided once by
    ``gates.check`` and then held per surface, and the rest (the tool's own check included)."""
    tool = prepared.definition
    refused = prepared.refusals.get(surface, _UNDECIDED)
    if refused is _UNDECIDED:  # this tool's first call on this surface (or an unknown surface)
        return gates.check(tool, surface, ctx, registry=registry)
    return gates.decide(tool, surface, ctx, registry.operator, refused, _NO_NAMES, None, registry.failures)


def _since(started: float) -> float:
    return time.perf_counter() - started


async def _ended(registry: ToolRegistry, admitted: Any, call: ToolCall, outcome: ToolCallOutcome) -> None:
    """What follows a call that ran or was refused, in this order: the approval's ``executed`` audit
    line (when an approval admitted the call; written off the event loop), then the ``after`` hooks
    (when the registry has hooks). The call has ended: a line that cannot be written is logged, like
    an ``after`` hook's failure, never turned into its result (the next call that needs approval is
    refused while the log cannot be written)."""
    if admitted is not None:
        import asyncio
        import logging

        gate = registry.approvals
        assert gate is not None
        try:
            await asyncio.to_thread(gate.executed, admitted, outcome.kind)
        except Exception as exc:
            logging.getLogger("reyn_core.dispatch").error(
                "approval %s ran but its executed line was not written: %s", admitted.approval, describe(exc)
            )
    if registry.call_hooks is not None:
        await run_after(registry.call_hooks, call, outcome)


class CallOptions(TypedDict, total=False):
    """``invoke_tool``'s keyword options, which ``dispatch_tool`` passes on."""

    surface: str | None
    exclude: Iterable[str]
    allowed_ops: Iterable[str] | None
    approval: str | None


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

    Whether the result can be sent is decided inside the call (``sendable``: JSON data, text UTF-8
    can carry), before its outcome is recorded: the audit log, the ``after`` hooks (which see the
    data sent), an approval's ``executed`` line and the span state what this envelope says.
    """
    try:
        data = await invoke_tool(registry, name, args, ctx, _finish=sendable, **options)
    except ToolError as exc:
        return exc.to_envelope()
    return {"status": "ok", "data": data}
