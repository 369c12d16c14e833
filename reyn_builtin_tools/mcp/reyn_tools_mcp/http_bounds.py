"""Every byte a streamable-HTTP MCP server sends, bounded per message (``max_message_bytes``).

The SDK reads a JSON answer whole (``response.aread()``) and an event stream event by event; a
server that never ends either would make the host hold its bytes without bound. ``BoundedTransport``
wraps the HTTP client's transport, so every response of the connection — the POST answers, the
long-lived GET event stream, redirects, error bodies, the closing DELETE — is read through a count:

- an event stream the SDK reads event by event — a 2xx answer to a GET or POST whose type is
  ``text/event-stream`` — counts the bytes since the last event boundary (a blank line), so a stream
  of many small events lives on and one endless event is cut. Its charset must be UTF-8 (or absent):
  the SDK decodes with the declared charset, and only in UTF-8 is every blank line the count sees
  one the SDK's parser sees (in UTF-16 the bytes ``\n\n`` are no line end at all); another is refused;
- every other body counts all its bytes as one message — a JSON answer, an error page, a redirect
  (the SDK reads a followed redirect's body whole), the closing DELETE's answer — whatever its type;
- a compressed body (``Content-Encoding`` other than ``identity``) is refused: the client asks for
  ``identity``, and a count of compressed bytes would not bound what they inflate to.

Each message is bounded in JSON values too (``max_message_values``: parsing costs per value, not per
byte), counted as its bytes arrive (``reyn_core.host.JsonValueCount``, a string's state carried across
chunks and closed at each line end, so a quote in an ``id:`` line hides nothing); an event stream's
count restarts at each event boundary. (Its ``data:`` field names' colons count too: one a line.)
A message that is not UTF-8 JSON by its first bytes (UTF-16, UTF-32, a byte order mark:
``reyn_core.host.NotUtf8Json``) is cut likewise, naming what it is.

A message over either bound is a transport fault of the connection: ``on_fault`` gets Reyn's words
before anything else happens (the connection closes, the waiting request fails at once), then the
read raises ``MessageTooLarge`` into the SDK, which stops reading. Each chunk is scanned once with
``bytes`` methods (time linear in the bytes read); what is held is at most the bound plus a chunk.
"""

from __future__ import annotations

import codecs
from collections.abc import AsyncIterator, Callable

import httpx2

from reyn_core.host import JsonValueCount, NotUtf8Json

from .failures import not_utf8, over_bound, over_value_bound

OnFault = Callable[[str], None]


class MessageTooLarge(httpx2.StreamError):
    """A response was cut: a message over ``max_message_bytes``, or a compressed body. A
    ``StreamError``: the SDK's JSON reader turns it into an error answer instead of crashing."""


class BodyCount:
    """The bytes of one body (a JSON answer, an error page): all of them are one message."""

    def __init__(self) -> None:
        self.size = 0
        self._values = JsonValueCount()
        self.values = 1
        """The JSON values of the message so far."""

    def add(self, chunk: bytes) -> int:
        """Count ``chunk``; the size of the message it belongs to so far (its values: ``values``)."""
        self.size += len(chunk)
        self.values = self._values.add(chunk)
        return self.size


class EventCount:
    """The bytes of each event of an event stream: reset at each blank line, whatever the line ends
    (CRLF, LF or CR, split across chunks or not). Comment lines count too."""

    def __init__(self) -> None:
        self.size = 0  # the bytes of the event in progress (its line ends folded to one byte each)
        self._line_ended = True  # the stream starts at a line start: a first blank line ends nothing
        self._cr = False  # the previous chunk ended with CR: a LF opening this one completes it
        self._values = JsonValueCount()  # the values of the event in progress
        self.values = 1
        """The JSON values of the largest event the last chunk ended or left in progress."""

    def add(self, chunk: bytes) -> int:
        """Count ``chunk``; the largest event it ends or leaves in progress (its line ends included,
        the blank line after it not); its values likewise (``values``)."""
        self.values = self._values.add(b"")
        if not chunk:
            return self.size  # nothing to count; a CR ending the previous chunk still waits for its LF
        if self._cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]
        self._cr = chunk.endswith(b"\r")
        if not chunk:
            return self.size
        text = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        carried, largest, pos = self.size, 0, 0  # pos: where the event in progress starts in text
        if self._line_ended and text.startswith(b"\n"):
            carried, largest, pos = 0, carried, 1  # the previous chunk ended the event's last line
            self._values.restart()
        # each blank line ends an event; one search per event, each starting where the last ended
        while (blank := text.find(b"\n\n", max(pos - 1, 0))) >= 0:
            self.values = max(self.values, self._values.add(text[pos : blank + 1]))
            self._values.restart()
            carried, largest, pos = 0, max(largest, carried + blank + 1 - pos), blank + 2
        self.values = max(self.values, self._values.add(text[pos:]))
        self.size = carried + len(text) - pos
        self._line_ended = text.endswith(b"\n")
        return max(largest, self.size)


class BoundedStream(httpx2.AsyncByteStream):
    """A response body read through a count; over ``limit`` bytes or ``values`` JSON values (None: no
    value bound): ``on_fault``, then ``MessageTooLarge``. ``refused``: a reason to cut the body before
    its first byte (a compressed one)."""

    def __init__(
        self,
        inner: httpx2.AsyncByteStream,
        count: BodyCount | EventCount,
        limit: int,
        on_fault: OnFault,
        refused: str | None = None,
        values: int | None = None,
    ) -> None:
        self._inner = inner
        self._count = count
        self._limit = limit
        self._values = values
        self._on_fault = on_fault
        self._refused = refused

    def _cut(self, why: str) -> MessageTooLarge:
        self._on_fault(why)
        return MessageTooLarge(why)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if self._refused is not None:
            raise self._cut(self._refused)
        async for chunk in self._inner:
            try:
                size = self._count.add(chunk)
            except NotUtf8Json as exc:
                raise self._cut(not_utf8(str(exc))) from None
            if size > self._limit:
                raise self._cut(over_bound(self._limit))
            if self._values is not None and self._count.values > self._values:
                raise self._cut(over_value_bound(self._values))
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class BoundedTransport(httpx2.AsyncBaseTransport):
    """``inner`` with every response body read through a ``BoundedStream`` (module docstring)."""

    def __init__(
        self, inner: httpx2.AsyncBaseTransport, limit: int, on_fault: OnFault, values: int | None = None
    ) -> None:
        self._inner = inner
        self.limit = limit
        self.values = values
        self._on_fault = on_fault

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self._inner.handle_async_request(request)
        assert isinstance(response.stream, httpx2.AsyncByteStream)
        events = _read_per_event(request, response)
        refused = _refusal(response, self.limit, events)
        count = EventCount() if events else BodyCount()
        stream = BoundedStream(response.stream, count, self.limit, self._on_fault, refused, self.values)
        return httpx2.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=stream,
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._inner.aclose()


def _read_per_event(request: httpx2.Request, response: httpx2.Response) -> bool:
    """Whether the SDK reads ``response`` event by event (``EventSource``): a 2xx answer to a GET or
    POST typed ``text/event-stream``. Anything else it reads whole (``aread``) or not at all."""
    kind = response.headers.get("content-type", "").partition(";")[0].strip().lower()
    return (
        kind == "text/event-stream"
        and request.method in ("GET", "POST")
        and 200 <= response.status_code < 300
    )


def _utf8(charset: str) -> bool:
    """Whether a body declared in ``charset`` is decoded as UTF-8 (none declared: the client's UTF-8)."""
    try:
        return codecs.lookup(charset).name == "utf-8"
    except LookupError:  # an unknown name: not one the count can vouch for
        return False


def _refusal(response: httpx2.Response, limit: int, events: bool) -> str | None:
    """Why the body is cut before it is read: a coding other than identity, an event stream in a
    charset other than UTF-8, or (one message, not an event stream) a declared length over the
    bound — an early answer; the count cuts the rest."""
    codings = [c.strip().lower() for c in response.headers.get_list("content-encoding", split_commas=True)]
    compressed = sorted({c for c in codings if c not in ("", "identity")})
    if compressed:
        return (
            f"the server sent a compressed body (Content-Encoding: {', '.join(compressed)[:60]}) though "
            "Reyn asks for identity: compressed bytes do not bound what they inflate to"
        )
    charset = response.charset_encoding
    if events and charset is not None and not _utf8(charset):
        return (
            f"the server sent an event stream in charset {charset[:40]!r}; event streams are UTF-8 "
            "(Server-Sent Events), the only charset in which Reyn's count of each event is the SDK's"
        )
    declared = response.headers.get("content-length", "")
    if not events and declared.isdigit() and len(declared) < 20 and int(declared) > limit:
        return f"{over_bound(limit)}: it declared Content-Length {int(declared)}"
    return None


def bounded_client(
    headers: dict[str, str],
    timeout: httpx2.Timeout,
    limit: int,
    on_fault: OnFault,
    values: int | None = None,
    around: Callable[[httpx2.AsyncBaseTransport], httpx2.AsyncBaseTransport] | None = None,
) -> httpx2.AsyncClient:
    """An ``AsyncClient`` whose every response is bounded (``BoundedTransport``: ``limit`` bytes and
    ``values`` JSON values a message), asking for
    uncompressed bodies; no environment proxies or ``.netrc``, no redirect following (the SDK
    follows same-origin redirects itself). ``around`` wraps the bounded transport (it reads bodies
    through the bounds)."""
    sent = httpx2.Headers(headers)
    sent["accept-encoding"] = "identity"  # whatever the configured headers say: see _refusal
    transport: httpx2.AsyncBaseTransport = BoundedTransport(
        httpx2.AsyncHTTPTransport(trust_env=False), limit, on_fault, values
    )
    if around is not None:
        transport = around(transport)
    return httpx2.AsyncClient(
        headers=sent, timeout=timeout, trust_env=False, follow_redirects=False, transport=transport
    )


__all__ = [
    "BodyCount",
    "BoundedStream",
    "BoundedTransport",
    "EventCount",
    "MessageTooLarge",
    "bounded_client",
]
