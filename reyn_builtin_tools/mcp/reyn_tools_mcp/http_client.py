"""The HTTP client of a streamable-HTTP MCP server, and how long its close may wait on the server.

Every response is bounded per message in bytes and JSON values (``http_bounds``). Timeouts are
explicit: the read timeout is long (the server may hold its event stream open; each request is
bounded by its call's deadline anyway). The session's closing ``DELETE`` — a courtesy that lets the
server free the session, sent by the SDK when a healthy connection closes — is bounded as a whole,
request and answer, by ``DELETE_WAIT_S`` (``CloseBound``): past it the SDK hears a timeout, logs it
and closes the connection, so a server that never answers it holds a shutdown that long, not the
owner's ``GRACEFUL_CLOSE_S`` (before, a silent server held ``close`` 10 s). A server let go of
because it failed gets no ``DELETE`` wait at all: its client is closed first (``let_go.Hurry``).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import httpx2
from mcp.client.streamable_http import streamable_http_client

from .http_bounds import bounded_client
from .let_go import Hurry, LetGo

DELETE_WAIT_S = 2.0  # the closing DELETE, request and answer: as long as a stdio server's exit grace


class CloseBound(httpx2.AsyncBaseTransport):
    """``inner``, with a ``DELETE`` exchange (its answer read whole, within the message bound)
    ending within ``DELETE_WAIT_S`` or failing with ``ReadTimeout``; other requests untouched."""

    def __init__(self, inner: httpx2.AsyncBaseTransport) -> None:
        self._inner = inner

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.method != "DELETE":
            return await self._inner.handle_async_request(request)
        with anyio.move_on_after(DELETE_WAIT_S):
            response = await self._inner.handle_async_request(request)
            try:
                assert isinstance(response.stream, httpx2.AsyncByteStream)
                body = b"".join([chunk async for chunk in response.stream])
            finally:
                await response.aclose()
            return httpx2.Response(
                status_code=response.status_code,
                headers=response.headers,
                stream=httpx2.ByteStream(body),
                extensions=response.extensions,
            )
        raise httpx2.ReadTimeout(
            f"the server did not answer the session's DELETE within {DELETE_WAIT_S:g} s", request=request
        )

    async def aclose(self) -> None:
        await self._inner.aclose()


def http_client(
    headers: dict[str, str],
    connect_timeout_s: float,
    bounds: tuple[int, int],
    on_fault: Callable[[str], None],
) -> httpx2.AsyncClient:
    """The client of one streamable-HTTP session (module docstring): ``bounds`` are
    ``(max_message_bytes, max_message_values)``; a message over either is a fault told to
    ``on_fault``. No environment proxies or ``.netrc``, no redirect following (the SDK follows
    same-origin redirects itself)."""
    timeout = httpx2.Timeout(connect=connect_timeout_s, read=300.0, write=30.0, pool=30.0)
    return bounded_client(headers, timeout, bounds[0], on_fault, values=bounds[1], around=CloseBound)


def http_transport(
    url: str,
    headers: dict[str, str],
    connect_timeout_s: float,
    bounds: tuple[int, int],
    on_fault: Callable[[str], None],
    hurry: Hurry,
    let_go: LetGo,
) -> contextlib.AbstractAsyncContextManager[Any]:
    """The SDK's streamable-HTTP transport to ``url`` over its own ``http_client``; told to
    ``hurry`` (a failed server), the client is closed (in ``let_go``), so the session's ``DELETE`` at
    its close fails at once."""
    http = http_client(headers, connect_timeout_s, bounds, on_fault)
    hurry.when(lambda: let_go.start(http.aclose()))
    # the SDK's own event limit is off: the client's transport bounds every byte (http_bounds)
    sdk = streamable_http_client(url, http_client=http, max_sse_event_size=None)
    return _owning_client(http, sdk)


@contextlib.asynccontextmanager
async def _owning_client(
    http: httpx2.AsyncClient, transport: contextlib.AbstractAsyncContextManager[Any]
) -> AsyncIterator[Any]:
    """The SDK's ``transport`` over ``http``, both closed on exit (the transport first: its
    ``DELETE`` goes out on the client)."""
    async with http, transport as streams:
        yield streams


__all__ = ["DELETE_WAIT_S", "CloseBound", "http_client", "http_transport"]
