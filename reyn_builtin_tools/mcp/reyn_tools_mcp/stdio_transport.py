"""An upstream stdio MCP server's transport: Reyn's own, in place of the SDK's ``stdio_client``.

The contract for ``ClientSession`` is the SDK's: a pair of anyio memory object streams, one
receiving ``SessionMessage`` or ``Exception`` (a transport fault: the session hands it to its
``message_handler``), one taking ``SessionMessage`` to write as one line each. What differs:

- The server's stdout is split by ``lines.LineSplitter``: a line longer than ``max_message_bytes``
  is never held — it becomes one ``MessageTooLong`` fault, and its bytes are dropped as they arrive
  — and splitting is linear in what the server writes (the SDK re-copied a growing buffer at every
  chunk, on the session pool's loop). A line of more than ``max_message_values`` JSON values (counted
  before it is parsed: parsing costs per value) is one ``MessageTooManyValues`` fault. The pipe is
  read ``CHUNK`` at a time with the stream's flow control at ``CHUNK``, and each message is handed
  to the session before the next is read.
- The session starts a task for every server→client request (``ping``, ``sampling``, ...), whose
  answer waits for the writer; a server that floods requests and never reads its stdin would grow
  the host without bound. ``ServerRequests`` counts the requests whose answers the writer has not
  yet written: at ``MAX_UNANSWERED`` the reader stops reading stdout until one is written, so the
  server waits on its full pipe (backpressure, not a second queue).
  Output that ends inside a line (a server that crashed mid-message) is not a message: the session
  gets one ``OutputEndedMidMessage`` fault, then the end of the connection.
- A confined server is started on the launcher's stop pipe (``reyn_sandbox.StopPipe``, handed as
  ``--stop-fd``; the SDK's spawn closes every other descriptor): however the host dies — SIGKILL
  included — its end of the pipe closes and the launcher ends the sandbox and everything in it.

Closing follows the SDK's order (the MCP lifecycle's shutdown): stop taking messages, let the
writer flush for ``WRITER_FLUSH_S``, close the server's stdin and give it ``EXIT_GRACE_S`` to exit;
then ask the launcher to end the sandbox (the stop byte; unconfined: ``SIGTERM`` to the server's
process group), and ``SIGKILL`` its group ``KILL_AFTER_S`` later (as ``WorkerProcess.kill``). Last,
the process's pipes are closed whatever happened (a child of an unconfined server may hold them). The
close is shielded and bounded; if it is cut short anyway (a native cancellation), the context's last
step stops a server still running without waiting (the byte, or ``SIGKILL`` unconfined), so no
exit path leaves a process.

A server let go of because it failed (``let_go.Hurry``) is not closed gracefully: its stdin is
closed and, at once, the stop byte sent (unconfined: ``SIGKILL`` to its group) — with no flush and
no grace, whether its close had started or not; ``SIGKILL`` to its group follows ``KILL_AFTER_S``
later if the launcher has not ended it by then. A shutdown out of time sends ``SIGKILL`` at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections import Counter
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any, TextIO

import anyio
import anyio.lowlevel
import mcp_types
from mcp.client.stdio import get_default_environment
from mcp.shared.message import SessionMessage

from reyn_sandbox import StopPipe

from .failures import MessageNotUtf8, MessageTooLong, MessageTooManyValues, OutputEndedMidMessage
from .let_go import Hurry
from .lines import CHUNK, LineSplitter, NotUtf8Line, Overlong, Refused, TooManyValues, read_lines
from .sandbox import ServerGrants, confined_command

WRITER_FLUSH_S = 0.5  # the SDK's: accepted messages are written before stdin closes
EXIT_GRACE_S = 2.0  # the SDK's: a server exits by itself once its stdin closes
KILL_AFTER_S = StopPipe.KILL_AFTER_S  # after the stop byte (or SIGTERM): then SIGKILL
REAP_S = 2.0  # for the event loop to see a killed process exit
_POLL_S = 0.01
MAX_UNANSWERED = 32  # server→client requests whose answers are not yet written: then the reader waits


@dataclass(frozen=True)
class StdioSpawn:
    """How to start one server: ``argv`` (the launcher's when confined), its ``env`` (over the
    SDK's default environment, as ``stdio_client`` does), ``cwd``, and the launch's ``stop`` pipe
    (None unconfined)."""

    argv: list[str]
    env: dict[str, str]
    cwd: str | None
    stop: StopPipe | None

    @classmethod
    def confined(
        cls,
        name: str,
        grants: ServerGrants,
        argv: list[str],
        env: dict[str, str],
        cwd: str | None,
        protected: Mapping[str, str],
    ) -> StdioSpawn:
        """Server ``name``'s ``argv`` in the sandbox under its ``grants`` (``sandbox.confined_command``),
        on a stop pipe of its own so the host's death ends the sandbox; ``RuntimeError`` saying why
        it cannot be (nothing started)."""
        stop = StopPipe() if grants.sandbox != "off" else None
        try:
            fd = stop.launcher_fd if stop is not None else None
            confined = confined_command(name, grants, argv[0], argv[1:], env, cwd, protected, stop_fd=fd)
        except RuntimeError:
            if stop is not None:
                stop.close()
            raise
        return cls(confined, env, cwd, stop)


class ServerRequests:
    """The server→client requests the reader handed on whose answers the writer has not yet
    written (a request the server cancels needs none); ``room`` waits while ``bound`` are."""

    def __init__(self, bound: int = MAX_UNANSWERED) -> None:
        self.bound = bound
        self.outstanding = 0
        self.high_water = 0  # the most outstanding at once
        self._ids: Counter[str] = Counter()
        self._changed = asyncio.Event()
        self._open = False  # no more counting or waiting: the writer or the session is gone

    def received(self, item: SessionMessage | Exception) -> None:
        message = item.message if isinstance(item, SessionMessage) and not self._open else None
        if isinstance(message, mcp_types.JSONRPCRequest):
            self._ids[str(message.id)] += 1
            self.outstanding += 1
            self.high_water = max(self.high_water, self.outstanding)
        elif (
            isinstance(message, mcp_types.JSONRPCNotification) and message.method == "notifications/cancelled"
        ):
            self._release((message.params or {}).get("requestId"))

    def answered(self, message: Any) -> None:
        if isinstance(message, (mcp_types.JSONRPCResponse, mcp_types.JSONRPCError)):
            self._release(message.id)

    def _release(self, request_id: object) -> None:
        key = str(request_id)
        if request_id is not None and self._ids[key] > 0:
            self._ids[key] -= 1
            self.outstanding -= 1
            self._changed.set()

    def open(self) -> None:
        self._open = True
        self._changed.set()

    async def room(self) -> None:
        while self.outstanding >= self.bound and not self._open:
            self._changed.clear()
            await self._changed.wait()


@contextlib.asynccontextmanager
async def stdio_transport(
    spawn: StdioSpawn,
    errlog: TextIO,
    splitter: LineSplitter,
    requests: ServerRequests | None = None,
    hurry: Hurry | None = None,
) -> AsyncIterator[Any]:
    """Start the server (stderr to ``errlog``) and yield ``(read_stream, write_stream)``; the server
    is stopped on exit (see the module docstring). ``splitter`` bounds and splits its stdout;
    ``requests`` (a new one if None) bounds the server's requests waiting for an answer; ``hurry``
    (a new one if None) stops it hard when told to."""
    requests = ServerRequests() if requests is None else requests
    hurry = Hurry() if hurry is None else hurry
    stop = spawn.stop
    try:
        proc = await asyncio.create_subprocess_exec(
            *spawn.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=errlog,
            env=get_default_environment() | spawn.env,
            cwd=spawn.cwd,
            start_new_session=True,
            close_fds=True,
            pass_fds=() if stop is None or stop.launcher_fd is None else (stop.launcher_fd,),
            limit=CHUNK,
        )
    except BaseException:
        if stop is not None:
            stop.stop()  # a launcher that started anyway ends at once
        raise
    if stop is not None:
        stop.launched()
    hurry.when(lambda: _hurried(proc, stop), lambda: _signal_group(proc, signal.SIGKILL))
    try:
        async with _streams(proc, splitter, requests, stop, hurry) as streams:
            yield streams
    finally:
        if proc.returncode is None:  # the close was cut short: stop it without waiting
            _force_stop(proc, stop)
        elif stop is not None:
            stop.close()  # reaped: nothing left to stop
        _close_pipes(proc)


@contextlib.asynccontextmanager
async def _streams(
    proc: asyncio.subprocess.Process,
    splitter: LineSplitter,
    requests: ServerRequests,
    stop: StopPipe | None,
    hurry: Hurry,
) -> AsyncIterator[Any]:
    assert proc.stdin is not None and proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    writer_done = anyio.Event()

    async def reader() -> None:
        with contextlib.suppress(OSError):
            async with read_writer:
                async for item in read_lines(stdout.read, splitter, last_unended=False):
                    message = _message(item)
                    requests.received(message)
                    try:
                        await read_writer.send(message)
                    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                        break  # the session is gone
                    await requests.room()  # stdout is not read while too many answers wait
                else:
                    if splitter.unended:
                        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                            await read_writer.send(OutputEndedMidMessage())
            # what the server still writes is dropped, so it never blocks on a full pipe while it
            # is asked to exit; cancelled once the server is stopped
            while await stdout.read(CHUNK):
                pass

    async def writer() -> None:
        try:
            async with write_reader:
                async for session_message in write_reader:
                    text = session_message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    stdin.write(text.encode() + b"\n")
                    await stdin.drain()
                    requests.answered(session_message.message)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await read_writer.aclose()  # the session sees the connection end, not a hang
        finally:
            requests.open()  # no answer will be written any more: the reader must not wait for one
            writer_done.set()

    async def shutdown() -> None:
        requests.open()
        read_stream.close()  # the reader goes on to drop what the server still writes
        write_stream.close()
        with anyio.move_on_after(0 if hurry.urgent else WRITER_FLUSH_S):
            await writer_done.wait()
        await _stop(proc, stop, hurry)
        for stream in (read_stream, write_stream, read_writer, write_reader):
            await stream.aclose()
        await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as tg:
        tg.start_soon(reader)
        tg.start_soon(writer)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                await shutdown()
            tg.cancel_scope.cancel()


def _message(item: bytes | Refused) -> SessionMessage | Exception:
    """A line as a message, or the fault it is: over the byte bound, over the value bound, not UTF-8
    JSON, unparsable."""
    if isinstance(item, Overlong):
        return MessageTooLong(item.limit)
    if isinstance(item, TooManyValues):
        return MessageTooManyValues(item.limit)
    if isinstance(item, NotUtf8Line):
        return MessageNotUtf8(item.what)
    return _parse(item)


def _parse(line: bytes) -> SessionMessage | Exception:
    """One line as a JSON-RPC message, or the parser's error (a fault the session reports)."""
    try:
        return SessionMessage(mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:
        return exc


async def _stop(proc: asyncio.subprocess.Process, stop: StopPipe | None, hurry: Hurry) -> None:
    """Close stdin, wait ``EXIT_GRACE_S``; then the stop byte (or ``SIGTERM``), ``KILL_AFTER_S``;
    then ``SIGKILL`` to the group. Every wait is bounded. Hurried: no grace (``_hurried``)."""
    assert proc.stdin is not None
    with contextlib.suppress(OSError):
        proc.stdin.close()
    if hurry.urgent:
        _hurried(proc, stop)
    elif await _exited(proc, EXIT_GRACE_S):
        return
    elif stop is not None:
        stop.stop()
    else:
        _signal_group(proc, signal.SIGTERM)
    if await _exited(proc, KILL_AFTER_S):
        return
    _signal_group(proc, signal.SIGKILL)
    await _exited(proc, REAP_S)


def _hurried(proc: asyncio.subprocess.Process, stop: StopPipe | None) -> None:
    """A failed server's stop: its stdin closed, then at once the stop byte (unconfined: ``SIGKILL``
    to its group)."""
    assert proc.stdin is not None
    with contextlib.suppress(OSError, RuntimeError):
        proc.stdin.close()
    _force_stop(proc, stop)


def _force_stop(proc: asyncio.subprocess.Process, stop: StopPipe | None) -> None:
    """Stop a server still running, without waiting: the launcher ends the sandbox at the byte; an
    unconfined server's group is killed."""
    if stop is not None:
        stop.stop()
    else:
        _signal_group(proc, signal.SIGKILL)


def _close_pipes(proc: asyncio.subprocess.Process) -> None:
    """Close the process's transport and with it the host's ends of its pipes: a server that exited
    may leave a child (same group, ``sandbox = "off"``) holding its stdout, so the read end never
    sees its end of file and would stay open — a descriptor per session, and asyncio's "unclosed
    transport" at exit."""
    transport = getattr(proc, "_transport", None)  # asyncio keeps it private; the SDK closed it too
    if transport is not None:
        with contextlib.suppress(PermissionError, ProcessLookupError):
            transport.close()


def _signal_group(proc: asyncio.subprocess.Process, sig: int) -> None:
    """``sig`` to the server's process group (it leads its own session), if it still runs."""
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)


async def _exited(proc: asyncio.subprocess.Process, timeout_s: float) -> bool:
    """Whether the process exited within ``timeout_s``: its return code polled, not ``wait()``,
    which also waits for its pipes to close (a child holding them would look like a hung server)."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while proc.returncode is None:
        if asyncio.get_running_loop().time() >= deadline:
            return False
        await asyncio.sleep(_POLL_S)
    return True


__all__ = ["MAX_UNANSWERED", "ServerRequests", "StdioSpawn", "stdio_transport"]
