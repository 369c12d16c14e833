"""Events the surfaces emit while they run, so a host can show progress or write a transcript."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reyn_core import ToolContext
    from reyn_core.host import ToolRegistry, ToolReport

#: Event kinds. Router: model_call, text_delta, assistant, tool_call, tool_result, pending, turn_limit.
#: Phase: model_call, phase_reply (``continues``: True when its ops run and the phase goes on, False
#: when it ends the phase, None when the reply was rejected), contract_error, op, op_result,
#: suspended, phase_end. Both: tool_progress and tool_log, what a running tool reports through
#: ``ctx.report_progress`` / ``ctx.log`` (between its tool_call/op and its tool_result/op_result).
EVENT_KINDS: tuple[str, ...] = (
    "model_call",
    "text_delta",
    "assistant",
    "tool_call",
    "tool_result",
    "pending",
    "turn_limit",
    "phase_reply",
    "contract_error",
    "op",
    "op_result",
    "suspended",
    "phase_end",
    "tool_progress",
    "tool_log",
)


@dataclass(frozen=True)
class SurfaceEvent:
    """One thing that happened in a surface run: ``kind`` (see ``EVENT_KINDS``) and its data."""

    kind: str
    data: Mapping[str, Any] = field(default_factory=dict)


EventCallback = Callable[[SurfaceEvent], None]


def emit(callback: EventCallback | None, kind: str, **data: Any) -> None:
    """Send an event if someone listens; a listener that raises never breaks the run."""
    if callback is None:
        return
    try:
        callback(SurfaceEvent(kind, data))
    except Exception:
        return


async def dispatch_with_reports(
    callback: EventCallback | None,
    ctx: ToolContext,
    registry: ToolRegistry,
    tool: str,
    arguments: Any,
    *,
    ids: Mapping[str, Any],
    **options: Any,
) -> dict[str, Any]:
    """``dispatch_tool(registry, tool, arguments, ctx, **options)`` so that what the tool reports
    becomes events: each ``ctx.report_progress`` a ``tool_progress`` event (``done``, ``total``,
    ``message``), each ``ctx.log`` a ``tool_log`` event (``level``, ``message``, ``data``), both with
    ``tool`` and the call's ``ids`` (the router's call ``id``, the phase's ``op``), in the order
    reported and all before this returns (so before the call's result event).

    A report also still reaches the reporter the loop's context already had (a loop running inside a
    served tool passes its tools' reports on). Without a listener the call runs with ``ctx`` as is.
    """
    from reyn_core.host import Progress, QueuedReporter, dispatch_tool

    if callback is None:
        return await dispatch_tool(registry, tool, arguments, ctx, **options)

    outer = ctx.reporter

    async def sink(event: ToolReport) -> None:
        if isinstance(event, Progress):
            emit(callback, "tool_progress", tool=tool, **ids, done=event.done, total=event.total,
                 message=event.message)  # fmt: skip
        else:
            emit(callback, "tool_log", tool=tool, **ids, level=event.level, message=event.message,
                 data=dict(event.data))  # fmt: skip
        if outer is not None:
            outer.report(event)

    reporter = QueuedReporter(sink, tool=tool)
    try:
        return await dispatch_tool(registry, tool, arguments, ctx.with_reporter(reporter), **options)
    finally:
        await reporter.drain()
