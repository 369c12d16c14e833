"""Events the surfaces emit while they run, so a host can show progress or write a transcript."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reyn_core import ToolContext
    from reyn_core.host import ToolReport

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


async def with_reports(
    callback: EventCallback | None,
    ctx: ToolContext,
    run: Callable[[ToolContext], Awaitable[dict[str, Any]]],
    *,
    tool: str,
    **call: Any,
) -> dict[str, Any]:
    """Run one tool call (``run``, a dispatch with the context it is given) so that what the tool
    reports becomes events: each ``ctx.report_progress`` a ``tool_progress`` event (``done``,
    ``total``, ``message``), each ``ctx.log`` a ``tool_log`` event (``level``, ``message``,
    ``data``), both with ``tool`` and the ``call`` identifiers (the router's call ``id``, the phase's
    ``op``), in the order reported and all before this returns (so before the call's result event).

    A report also still reaches the reporter the loop's context already had (a loop running inside a
    served tool passes its tools' reports on). Without a listener the call runs with ``ctx`` as is.
    """
    if callback is None:
        return await run(ctx)
    from reyn_core.host import Progress, QueuedReporter

    outer = ctx.reporter

    async def sink(event: ToolReport) -> None:
        if isinstance(event, Progress):
            emit(callback, "tool_progress", tool=tool, **call, done=event.done, total=event.total,
                 message=event.message)  # fmt: skip
        else:
            emit(callback, "tool_log", tool=tool, **call, level=event.level, message=event.message,
                 data=dict(event.data))  # fmt: skip
        if outer is not None:
            outer.report(event)

    reporter = QueuedReporter(sink, tool=tool)
    try:
        return await run(ctx.with_reporter(reporter))
    finally:
        await reporter.drain()
