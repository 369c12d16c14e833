"""The host's side of one isolated plugin: its worker, its calls, its restarts.

``WorkerClient.start()`` (at load) starts the worker, sends the load request and returns what the
worker loaded. ``await client.call(tool, args, ctx_data)`` sends one call and awaits its answer on the
caller's event loop (the pipe is watched with ``add_reader``: no thread hop per call). A worker that
dies, breaks the protocol or sends a frame over the result limit is stopped and its calls fail with
``execution_error``; the next call restarts it after a backoff (``runtime_missing`` meanwhile). A
restarted worker must describe exactly the tools it described at load: anything else is refused like
a rug pull, for good.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import errno
import hashlib
import os
import select
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from reyn_core import ToolExecutionError, ToolRuntimeMissing, canonical_json
from reyn_core.host import active_observer
from reyn_isolation.frames import FrameParser
from reyn_isolation.process import WorkerProcess
from reyn_isolation.protocol import FrameTooLarge, ProtocolError, encode, write_all
from reyn_isolation.wire import LOAD_FAILURE_CODES, error_from_reply, loaded_problem

LOAD_REPLY_LIMIT = 16 << 20


class WorkerStartError(Exception):
    """The worker did not load the plugin. ``code`` is the diagnostic code (the worker's own for a
    plugin failure such as ``RC001``, ``RJ005`` when the worker itself failed)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class WorkerSpec:
    """How to start one plugin's worker."""

    plugin_id: str
    argv: Callable[[int], Sequence[str]]  # given the read end of the launch's stop pipe
    env: Mapping[str, str]
    load_request: Mapping[str, Any]
    max_result_bytes: int = 1 << 20
    start_timeout_s: float = 60.0
    cancel_grace_s: float = 2.0
    backoff_s: Sequence[float] = field(default=(0.0, 0.5, 1.0, 2.0, 5.0, 15.0, 30.0))


def tools_signature(loaded: Mapping[str, Any]) -> str:
    """What a worker's ``loaded`` message describes (tools and hooks), as one sha256."""
    text = canonical_json({"tools": loaded.get("tools"), "hooks": loaded.get("hooks")})
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def start_worker(spec: WorkerSpec) -> tuple[WorkerProcess, dict[str, Any]]:
    """Start a worker and load the plugin in it (blocking); raises ``WorkerStartError``."""
    process = WorkerProcess(spec.argv, spec.env, spec.plugin_id)
    try:
        process.start()
    except OSError as exc:
        raise WorkerStartError(
            "RJ005", f"the worker of plugin {spec.plugin_id!r} could not start: {exc}"
        ) from None
    try:
        write_all(process.stdin, encode(dict(spec.load_request)))
        reply = _read_reply(process, spec)
    except (OSError, ProtocolError, FrameTooLarge) as exc:
        process.kill()
        raise WorkerStartError(
            "RJ005",
            f"the worker of plugin {spec.plugin_id!r} failed while loading ({exc}): "
            + process.describe_exit(),
        ) from None
    except BaseException:  # WorkerStartError, or anything else: no worker is left running
        process.kill()
        raise
    if reply.get("op") == "load_failed":
        process.kill()
        code = reply.get("code")
        raise WorkerStartError(
            code if code in LOAD_FAILURE_CODES else "RJ005", str(reply.get("message"))[:2000]
        )
    problem = loaded_problem(reply)
    if problem is not None:
        process.kill()
        raise WorkerStartError("RJ005", f"the worker of plugin {spec.plugin_id!r} {problem}")
    return process, reply


def _read_reply(process: WorkerProcess, spec: WorkerSpec) -> dict[str, Any]:
    parser = FrameParser(LOAD_REPLY_LIMIT)
    deadline = time.monotonic() + spec.start_timeout_s
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise WorkerStartError(
                "RJ005",
                f"the worker of plugin {spec.plugin_id!r} did not load within {spec.start_timeout_s:g} s",
            )
        ready, _, _ = select.select([process.stdout], [], [], left)
        if not ready:
            continue
        data = os.read(process.stdout, 1 << 16)
        if not data:
            raise WorkerStartError(
                "RJ005",
                f"the worker of plugin {spec.plugin_id!r} stopped before loading: {process.describe_exit()}",
            )
        messages = parser.feed(data)
        if messages:
            return messages[0]


def _in_thread(fn: Any, *args: Any) -> concurrent.futures.Future[Any]:
    """``fn(*args)`` in a daemon thread of its own (a restart must not block the event loop)."""
    future: concurrent.futures.Future[Any] = concurrent.futures.Future()

    def run() -> None:
        try:
            future.set_result(fn(*args))
        except BaseException as exc:
            future.set_exception(exc)

    threading.Thread(target=run, name="reyn-isolated-restart", daemon=True).start()
    return future


class WorkerClient:
    """Calls into one isolated plugin's worker, restarting it when it dies."""

    def __init__(self, spec: WorkerSpec) -> None:
        self.spec = spec
        self.signature: str | None = None
        self.refused: str | None = None
        self.restarts = 0
        self._process: WorkerProcess | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._parser = FrameParser(spec.max_result_bytes + 4096)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._cancelling: dict[int, float] = {}  # call id → when the worker must have answered
        self._outbox = bytearray()
        self._last_ctx: dict[str, Any] | None = None
        self._next_id = 0
        self._failures = 0
        self._next_start = 0.0
        self._last_stop = ""
        self._starting: concurrent.futures.Future[tuple[WorkerProcess, dict[str, Any]]] | None = None

    # ------------------------------------------------------------------ start and stop

    def start(self) -> dict[str, Any]:
        """Start the worker at load (blocking) and return its ``loaded`` message."""
        process, loaded = start_worker(self.spec)
        try:
            self.signature = tools_signature(loaded)
        except BaseException:
            process.kill()  # no worker outlives a start that failed
            raise
        self._adopt(process)
        return loaded

    def _adopt(self, process: WorkerProcess) -> None:
        # the worker goes when its client does (a dropped registry leaves no process behind)
        weakref.finalize(self, process.kill)
        os.set_blocking(process.stdout, False)
        os.set_blocking(process.stdin, False)
        self._process = process
        self._parser = FrameParser(self.spec.max_result_bytes + 4096)
        self._outbox.clear()
        self._last_ctx = None

    def close(self) -> None:
        """Stop the worker (its pending calls fail)."""
        self._stop("the host closed it")

    def _stop(self, why: str) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        if self._loop is not None and not self._loop.is_closed():
            self._loop.remove_reader(process.stdout)
            self._loop.remove_writer(process.stdin)
        process.kill()
        self._last_stop = why
        self._failures += 1
        delays = self.spec.backoff_s
        self._next_start = time.monotonic() + delays[min(self._failures - 1, len(delays) - 1)]
        error = ToolExecutionError(f"the isolated worker of plugin {self.spec.plugin_id!r} stopped: {why}")
        pending, self._pending = self._pending, {}
        self._cancelling.clear()
        for future in pending.values():
            if not future.done():
                future.set_exception(error)

    # ------------------------------------------------------------------ calls

    async def call(self, tool: str, args: Mapping[str, Any], ctx: Mapping[str, Any]) -> Any:
        """One call; returns the result data or raises the worker's ``ToolError``."""
        if self.refused is not None:
            raise ToolRuntimeMissing(self.refused, tool=tool)
        loop = asyncio.get_running_loop()
        now = time.monotonic()
        if self._process is not None and any(deadline <= now for deadline in self._cancelling.values()):
            self._stop(f"it did not stop a cancelled call within {self.spec.cancel_grace_s:g} s")
        if self._process is None:
            await self._restart(tool)
        if self._loop is not loop:
            self._attach(loop)
        assert self._process is not None
        self._next_id += 1
        call_id = self._next_id
        future: asyncio.Future[dict[str, Any]] = loop.create_future()
        self._pending[call_id] = future
        message: dict[str, Any] = {"op": "call", "id": call_id, "tool": tool, "args": dict(args)}
        if ctx != self._last_ctx:  # the worker keeps the last context it was sent (frames are ordered)
            message["ctx"] = self._last_ctx = dict(ctx)
        observer = active_observer()
        if observer is not None:  # the worker continues this call's observation (reyn-otel: its trace)
            carrier = observer.carrier()
            if carrier is not None:
                message["trace"] = carrier
        self._send(encode(message))
        try:
            reply = await future
        except asyncio.CancelledError:
            if not future.done() or future.cancelled():  # a result that already came needs no cancel
                self._cancel(call_id)
            raise
        finally:
            self._pending.pop(call_id, None)
        self._failures = 0
        observer = active_observer()
        if "spans" in reply and observer is not None:
            observer.adopt(reply["spans"])  # (never raises: malformed spans are dropped)
        if reply.get("ok") is True:
            return reply.get("data")
        raise error_from_reply(tool, reply)

    async def _restart(self, tool: str) -> None:
        now = time.monotonic()
        if self._starting is None and now < self._next_start:
            raise ToolRuntimeMissing(
                f"the isolated worker of plugin {self.spec.plugin_id!r} stopped ({self._last_stop}); "
                f"it is restarted in {self._next_start - now:.1f} s",
                tool=tool,
            )
        if self._starting is None:
            self._starting = _in_thread(start_worker, self.spec)
        starting = self._starting
        try:
            process, loaded = await asyncio.wrap_future(starting)
        except WorkerStartError as exc:
            if self._starting is starting:
                self._starting = None
                self._failures += 1
                delays = self.spec.backoff_s
                self._next_start = time.monotonic() + delays[min(self._failures - 1, len(delays) - 1)]
                self._last_stop = exc.message
            raise ToolRuntimeMissing(
                f"the isolated worker of plugin {self.spec.plugin_id!r} could not be restarted: "
                + exc.message,
                tool=tool,
            ) from None
        if self._starting is starting:
            self._starting = None
            if tools_signature(loaded) != self.signature:
                process.kill()
                self.refused = (
                    f"the restarted worker of plugin {self.spec.plugin_id!r} describes its tools differently "
                    "from the definitions registered at load; refused like a rug pull (reload after review)"
                )
            else:
                self.restarts += 1
                self._loop = None
                self._adopt(process)
        if self.refused is not None:
            raise ToolRuntimeMissing(self.refused, tool=tool)

    def _attach(self, loop: asyncio.AbstractEventLoop) -> None:
        assert self._process is not None
        old = self._loop
        if old is not None and not old.is_closed():
            old.remove_reader(self._process.stdout)
            old.remove_writer(self._process.stdin)
        self._loop = loop
        loop.add_reader(self._process.stdout, self._readable, self._process)
        # a cancellation sent from another (maybe closed) loop is still watched, from this one
        now = time.monotonic()
        for call_id, deadline in self._cancelling.items():
            loop.call_later(max(0.0, deadline - now), self._overdue, call_id, self._process)
        if self._outbox:
            loop.add_writer(self._process.stdin, self._writable, self._process)

    def _send(self, frame: bytes) -> None:
        process = self._process
        assert process is not None and self._loop is not None
        if not self._outbox:
            try:
                written = os.write(process.stdin, frame)
            except BlockingIOError:
                written = 0
            except OSError as exc:
                self._stop(f"its input pipe failed ({exc.strerror or exc})")
                return
            if written == len(frame):
                return
            self._outbox += frame[written:]
            self._loop.add_writer(process.stdin, self._writable, process)
        else:
            self._outbox += frame

    def _writable(self, process: WorkerProcess) -> None:
        if process is not self._process:
            return
        try:
            written = os.write(process.stdin, self._outbox)
        except BlockingIOError:
            return
        except OSError as exc:
            self._stop(f"its input pipe failed ({exc.strerror or exc})")
            return
        del self._outbox[:written]
        if not self._outbox and self._loop is not None:
            self._loop.remove_writer(process.stdin)

    def _readable(self, process: WorkerProcess) -> None:
        if process is not self._process:
            return
        try:
            data = os.read(process.stdout, 1 << 20)
        except BlockingIOError:
            return
        except OSError as exc:
            if exc.errno == errno.EINTR:
                return
            data = b""
        if not data:
            self._stop(f"its pipe closed ({process.describe_exit()})")
            return
        try:
            messages = self._parser.feed(data)
        except FrameTooLarge as exc:
            self._stop(
                f"it sent a frame of {exc.size} bytes, over the plugin's result limit of "
                f"{self.spec.max_result_bytes} bytes"
            )
            return
        except ProtocolError as exc:
            self._stop(f"it broke the protocol ({exc})")
            return
        for message in messages:
            if message.get("op") != "result" or not isinstance(message.get("id"), int):
                self._stop(f"it sent an unexpected {str(message.get('op'))[:40]!r} message")
                return
            call_id = message["id"]
            future = self._pending.get(call_id)
            if future is not None and not future.done():
                future.set_result(message)
            elif self._cancelling.pop(call_id, None) is None and (future is None or not future.cancelled()):
                # one reply per call asked: a reply to a call never made, or a second one, is forged
                self._stop(f"it answered a call it was not asked (id {call_id})")
                return

    def _cancel(self, call_id: int) -> None:
        if self._process is None or self._loop is None:
            return
        self._cancelling[call_id] = time.monotonic() + self.spec.cancel_grace_s
        self._send(encode({"op": "cancel", "id": call_id}))
        self._loop.call_later(self.spec.cancel_grace_s, self._overdue, call_id, self._process)

    def _overdue(self, call_id: int, process: WorkerProcess) -> None:
        if process is self._process and call_id in self._cancelling:
            self._stop(f"it did not stop a cancelled call within {self.spec.cancel_grace_s:g} s")


__all__ = ["WorkerClient", "WorkerSpec", "WorkerStartError", "start_worker", "tools_signature"]
