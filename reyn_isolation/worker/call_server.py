"""The worker's calls: frames in, handlers run, one reply frame per call out.

A sync handler runs inline, as its frame arrives, one at a time: a thread cannot be stopped, but this
process can (the host stops the worker when a cancelled call does not end within its grace), and no
thread hop is paid per call. An async handler runs as a task, concurrently with others; a ``cancel``
frame cancels it. The call's context arrives only when it changed since the previous call (frames
are ordered, so the last one received is the one in force). A reply whose frame would exceed the
result limit is replaced by an ``execution_error`` saying so (the host enforces the same limit).
"""

from __future__ import annotations

import asyncio
import inspect
from typing import TYPE_CHECKING, Any

from reyn_core import InvalidToolArguments, ToolContext, ToolError, ToolGateRefused, ToolRuntimeMissing
from reyn_core.host import CheckFailed, WorkerPlugin, depth_within, describe_exception, values_within
from reyn_isolation.frames import FrameParser
from reyn_isolation.protocol import (
    HEADER,
    MAX_DEPTH,
    MAX_VALUES,
    FrameTooLarge,
    ProtocolError,
    encode,
    write_all,
)
from reyn_isolation.wire import context_from_data

if TYPE_CHECKING:
    from reyn_isolation.worker.spans import CallSpan

CALL_LIMIT = 64 << 20


class CallServer(asyncio.Protocol):
    """Reads call and cancel frames from the host's pipe and answers each call."""

    def __init__(self, loaded: WorkerPlugin, out: int, limit: int, closed: asyncio.Future[int]) -> None:
        self.loaded = loaded
        self.out = out
        self.limit = limit
        self.closed = closed
        self.parser = FrameParser(CALL_LIMIT)
        self.tasks: dict[int, asyncio.Task[None]] = {}
        self.ctx: ToolContext | None = None

    def data_received(self, data: bytes) -> None:
        try:
            messages = self.parser.feed(data)
        except (FrameTooLarge, ProtocolError):
            self._close(2)
            return
        for message in messages:
            op = message.get("op")
            if op == "call":
                self._call(message)
            elif op == "cancel":
                task = self.tasks.get(message.get("id"))  # type: ignore[arg-type]
                if task is not None:
                    task.cancel()

    def eof_received(self) -> bool | None:
        self._close(0)
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self._close(0)

    def _close(self, status: int) -> None:
        for task in self.tasks.values():
            task.cancel()
        if not self.closed.done():
            self.closed.set_result(status)

    def _call(self, message: dict[str, Any]) -> None:
        call_id = message.get("id")
        name = message.get("tool")
        span: CallSpan | None = None
        try:
            if "ctx" in message:
                self.ctx = context_from_data(message["ctx"], self.loaded.settings)
            # a traced call of a tool it has: only then is OpenTelemetry imported
            if "trace" in message and isinstance(name, str) and name in self.loaded.tools:
                from reyn_isolation.worker.spans import call_span

                span = call_span(message["trace"], name)
            if self.ctx is None:
                raise ToolRuntimeMissing("the call came without a context")
            if span is not None:
                span.enter()  # current while the handler runs; a task copies it when created
            try:
                # a call the host's dispatcher decided: a sync handler here and now, an async one as a task
                data = self.loaded.run_decided_call(name, message.get("args") or {}, self.ctx)
                if inspect.isawaitable(data):
                    task = asyncio.ensure_future(self._await(call_id, data, span))
                    self.tasks[call_id] = task  # type: ignore[index]
                    task.add_done_callback(lambda _t: self.tasks.pop(call_id, None))  # type: ignore[arg-type]
                    return
            finally:
                if span is not None:
                    span.exit()
            self._reply(call_id, {"ok": True, "data": data}, span)
        except BaseException as exc:
            self._reply(call_id, _failure(exc), span)

    async def _await(self, call_id: Any, work: Any, span: CallSpan | None) -> None:
        try:
            reply: dict[str, Any] = {"ok": True, "data": await work}
        except BaseException as exc:
            reply = _failure(exc)
        self._reply(call_id, reply, span)

    def _reply(self, call_id: Any, reply: dict[str, Any], span: CallSpan | None = None) -> None:
        reply = {"op": "result", "id": call_id, **reply}
        if not depth_within(reply, MAX_DEPTH):
            reply = _error(call_id, f"the result nests deeper than the {MAX_DEPTH} levels a reply may")
        frame = self._frame(call_id, reply)
        if span is not None:  # tracing never costs the call its answer: spans that do not fit are dropped
            try:
                traced = encode({**reply, "spans": span.finish(reply)})
            except Exception:
                traced = frame
            if len(traced) - HEADER.size <= self.limit:
                frame = traced
        size = len(frame) - HEADER.size
        if size <= self.limit and not values_within(frame[HEADER.size :], MAX_VALUES):
            frame = encode(
                _error(call_id, f"the result holds more than the {MAX_VALUES} JSON values a reply may")
            )
        elif size > self.limit:
            frame = encode(
                _error(
                    call_id, f"the result of {size} bytes is over the plugin's limit of {self.limit} bytes"
                )
            )
        write_all(self.out, frame)

    def _frame(self, call_id: Any, reply: dict[str, Any]) -> bytes:
        try:
            return encode(reply)
        except (TypeError, ValueError) as exc:
            return encode(_error(call_id, f"the result cannot be sent as JSON: {exc}"))


def _error(call_id: Any, message: str) -> dict[str, Any]:
    return {"op": "result", "id": call_id, "ok": False, "kind": "execution_error", "message": message}


def _failure(exc: BaseException) -> dict[str, Any]:
    if isinstance(exc, asyncio.CancelledError):
        return {"ok": False, "kind": "cancelled", "message": "cancelled"}
    if isinstance(exc, InvalidToolArguments):
        problems = [{"pointer": p.pointer, "message": p.message} for p in exc.problems]
        return {"ok": False, "kind": exc.kind, "message": exc.message, "problems": problems}
    if isinstance(exc, CheckFailed):  # what failed crosses in a field the host logs, never shows
        return {"ok": False, "kind": exc.kind, "message": "", "layer": "call", "check_failure": exc.failure}
    if isinstance(exc, ToolGateRefused):
        return {
            "ok": False,
            "kind": exc.kind,
            "message": exc.message,
            "layer": exc.layer,
            "reason": exc.reason,
        }
    if isinstance(exc, ToolError):
        return {"ok": False, "kind": exc.kind, "message": exc.message}
    if isinstance(exc, Exception):
        return {"ok": False, "kind": "execution_error", "message": describe_exception(exc)}
    raise exc  # KeyboardInterrupt and the like: the worker stops


__all__ = ["CallServer"]
