"""``reyn mcp serve`` over stdin/stdout, until the client closes stdin or SIGTERM/SIGINT; then it
stops as streamable HTTP does (``serve_stop``).

Three things the SDK's ``stdio_server`` does differently are changed here, two for the stop:

- stdin is read by the event loop, without a thread, when it is a pipe or a socket (what MCP
  clients give their servers): the SDK's reads run in a worker thread that cannot be cancelled, so
  a signal with stdin still open could never end the transport. fd 0 points at the null device
  meanwhile, as the SDK's own claim does (a tool reading stdin reads nothing of the client's).
  Any other stdin (a file: its reads end) is left to the SDK.
- the end of stdin is held (``_EndHeld``): the SDK would answer every running call "Connection
  closed" at once; held, the calls get the ``--shutdown-grace`` and a call that finishes in it is
  answered (stdout is still open).
- a line is bounded (``--max-request-bytes``, as an HTTP body; its newline, ``\n`` or ``\r\n``, not
  counted): a longer one is never held — read in time linear in its size (``lines.LineSplitter``),
  answered with a JSON-RPC error -32600 naming the limit, logged, and skipped; the next line is
  served. The error carries the request's top-level ``"id"`` when the line's first ``lines.HEAD``
  bytes hold it (``line_id``; SDK clients write it first), so the client's call fails at once;
  else ``id: null``. A line of more than ``--max-request-values`` JSON values (counted before it is
  parsed, as the line is split: parsing costs per value) is answered and skipped the same way. (A
  stdin that is not
  a pipe or a socket — a file the operator chose — is left to the SDK's reader, unbounded.)
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import stat
import sys
from collections.abc import AsyncIterator
from typing import Any

from .lines import CHUNK, LineSplitter, NotUtf8Line, Overlong, Refused, read_lines
from .serve_stop import StopSignals, closed, wait_for_calls

log = logging.getLogger("reyn.mcp.serve")
OVERLONG_CODE = -32600
"""JSON-RPC "invalid request" answers a line over the limit: it was refused unread, not found to be
invalid JSON (-32700 would claim that) — docs/decisions.md."""


class _EndHeld:
    """The client's messages as the SDK reads them (stdio's read stream), but their end is held:
    it sets ``ended`` and waits until the stop cancels the server."""

    def __init__(self, inner: Any, ended: asyncio.Event) -> None:
        self._inner, self._ended = inner, ended

    @property
    def last_context(self) -> Any:
        return self._inner.last_context

    async def receive(self) -> Any:
        import anyio

        try:
            return await self._inner.receive()
        except anyio.EndOfStream:
            self._ended.set()
            await anyio.sleep_forever()

    def __aiter__(self) -> _EndHeld:
        return self

    async def __anext__(self) -> Any:
        return await self.receive()

    def __getattr__(self, name: str) -> Any:  # close, aclose, clone, ...: the stream's own
        return getattr(self._inner, name)

    async def __aenter__(self) -> _EndHeld:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._inner.aclose()


class _Refusals:
    """Where a stdin line over a limit (``limit`` bytes, ``values`` JSON values) is answered: the
    server's write stream, once it exists."""

    def __init__(self, limit: int, values: int | None = None) -> None:
        self.limit = limit
        self.values = values
        self.write_stream: Any = None
        self.count = 0

    async def refuse(self, line: Refused) -> None:
        """Log the refused line and answer it: JSON-RPC -32600 naming the limit, with the id found
        in the line's first bytes (else ``id: null``); the next line is read as usual."""
        import mcp_types

        from .line_id import request_id

        self.count += 1
        if isinstance(line, Overlong):
            what = f"a request line over {line.limit} bytes (--max-request-bytes) was skipped unread"
        elif isinstance(line, NotUtf8Line):
            what = f"a request line that is {line.what} was skipped unparsed"
        else:
            what = (
                f"a request line of over {line.limit} JSON values (--max-request-values) was skipped unparsed"
            )
        head = line.head
        log.warning("%s (%d so far)", what, self.count)
        if self.write_stream is None:
            return
        from mcp.shared.message import SessionMessage

        error = mcp_types.ErrorData(code=OVERLONG_CODE, message=f"invalid request: {what}")
        await self.write_stream.send(
            SessionMessage(mcp_types.JSONRPCError(jsonrpc="2.0", id=request_id(head), error=error))
        )


@contextlib.asynccontextmanager
async def _stdin_lines(refusals: _Refusals) -> AsyncIterator[AsyncIterator[str] | None]:
    """stdin's lines read by the event loop (a read a stop can cancel), with fd 0 diverted to the
    null device meanwhile; None (the SDK reads it) when stdin is not a pipe or a socket. A line
    over ``refusals.limit`` bytes is never held (``lines.LineSplitter``): it is answered by
    ``refusals`` and skipped."""
    try:
        pipe = stat.S_ISFIFO(mode := os.fstat(0).st_mode) or stat.S_ISSOCK(mode)
    except OSError:
        pipe = False
    if not pipe or sys.platform == "win32":
        yield None
        return
    import fcntl

    private = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=CHUNK)  # the pipe is paused while CHUNK * 2 wait unread
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(private, "rb", buffering=0, closefd=False)
    )

    async def lines() -> AsyncIterator[str]:
        async for line in read_lines(reader.read, LineSplitter(refusals.limit, refusals.values)):
            if not isinstance(line, bytes):
                await refusals.refuse(line)
            else:
                yield line.decode("utf-8", "replace")

    try:
        yield lines()
    finally:
        transport.close()
        os.set_blocking(private, True)  # the loop made it non-blocking: fd 0's description is shared
        os.dup2(private, 0)
        os.close(private)


async def serve_stdio(
    server: Any, served: Any, grace_s: float, max_request_bytes: int, max_request_values: int | None = None
) -> None:
    """Serve over stdin/stdout until the client closes stdin, or SIGTERM/SIGINT; then stop as
    ``serve_stop`` says (the grace for running calls, then the rest cancelled and audited). A stdin
    line over ``max_request_bytes`` or ``max_request_values`` JSON values is answered with an error
    and skipped (see ``_Refusals``)."""
    from mcp.server.stdio import stdio_server

    ended = asyncio.Event()
    refusals = _Refusals(max_request_bytes, max_request_values)

    async def serve() -> None:
        async with _stdin_lines(refusals) as lines, stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
            refusals.write_stream = write_stream
            held = _EndHeld(read_stream, ended)
            await server.run(held, write_stream, server.create_initialization_options())

    with StopSignals().installed() as signals:
        serving = asyncio.ensure_future(serve())
        stopping = {serving, asyncio.ensure_future(signals.stop.wait()), asyncio.ensure_future(ended.wait())}
        try:
            await asyncio.wait(stopping, return_when=asyncio.FIRST_COMPLETED)
            why = "signal received" if signals.stop.is_set() else "the client closed stdin"
            await wait_for_calls(served, grace_s, signals.hurry, why)
        finally:
            for task in stopping:
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await closed(served, serving, grace_s, signals)


__all__ = ["serve_stdio"]
