"""A served tool's progress and log reports as MCP notifications.

``ctx.report_progress`` becomes ``notifications/progress`` when the client sent a progress token
with its ``tools/call`` (increasing values only, as the specification requires); ``ctx.log``
becomes ``notifications/message`` at the levels the client asked for: on handshake protocol
versions the connection's ``logging/setLevel`` (``info`` until the client sets one), on
2026-07-28 the request's own log-level opt-in (nothing without it). Both ride the stream of the
request they belong to and are delivered before its result; a report nobody asked for is dropped.
"""

from __future__ import annotations

import weakref
from typing import Any

import mcp_types as types
from mcp.server.connection import allowed_log_levels

from reyn_core.host import LOG_LEVELS, Progress, QueuedReporter, ToolLog, ToolReport

DEFAULT_LOG_LEVEL = "info"

# The level each handshake-era connection set with logging/setLevel, by the identity of the
# connection's client parameters (one object per connection; the entry goes when it does, so an id
# is never reused while its entry lives). The pydantic object itself is not hashable.
_LEVELS: dict[int, str] = {}


def set_level(request: Any, level: str) -> None:
    """Remember the connection's ``logging/setLevel`` (handshake protocol versions)."""
    key = request.session.client_params
    if key is None:
        return
    if id(key) not in _LEVELS:
        weakref.finalize(key, _LEVELS.pop, id(key), None)
    _LEVELS[id(key)] = level


def log_levels(request: Any) -> frozenset[str]:
    """The levels this request's client receives."""
    allowed = allowed_log_levels(request.protocol_version, request.meta)
    if len(allowed) == len(LOG_LEVELS):  # handshake era: the connection's logging/setLevel filters
        key = request.session.client_params
        floor = _LEVELS.get(id(key), DEFAULT_LOG_LEVEL) if key is not None else DEFAULT_LOG_LEVEL
        allowed = frozenset(LOG_LEVELS[LOG_LEVELS.index(floor) :])
    return frozenset(allowed)


class McpReports:
    """Delivers one call's reports to its client (the sink of a ``QueuedReporter``)."""

    def __init__(self, request: Any, *, levels: frozenset[str]) -> None:
        self._request = request
        self._levels = levels
        self._last: float | None = None

    async def __call__(self, event: ToolReport) -> None:
        if isinstance(event, Progress):
            if self._last is not None and event.done <= self._last:
                return
            self._last = event.done
            # A no-op when the client sent no progress token with the call (the SDK knows the
            # token in every dispatch mode; the request's _meta does not show it in all of them).
            await self._request.session.report_progress(event.done, event.total, event.message)
        elif isinstance(event, ToolLog) and event.level in self._levels:
            data: Any = {"message": event.message, **event.data} if event.data else event.message
            note = types.LoggingMessageNotification(
                params=types.LoggingMessageNotificationParams(level=event.level, data=data, logger=event.tool)
            )
            await self._request.session.send_notification(note, related_request_id=self._request.request_id)


def reporter_for(request: Any, tool: str) -> QueuedReporter | None:
    """The reporter of one ``tools/call`` (None in process, without a client)."""
    if request is None:
        return None
    return QueuedReporter(McpReports(request, levels=log_levels(request)), tool=tool)


__all__ = ["McpReports", "log_levels", "reporter_for", "set_level"]
