"""Events the surfaces emit while they run, so a host can show progress or write a transcript."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

#: Event kinds. Router: model_call, text_delta, assistant, tool_call, tool_result, pending, turn_limit.
#: Phase: model_call, phase_reply (``continues``: True when its ops run and the phase goes on, False
#: when it ends the phase, None when the reply was rejected), contract_error, op, op_result,
#: suspended, phase_end.
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
