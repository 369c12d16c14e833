"""A streamable-HTTP MCP server on raw asyncio (no SDK) whose answers misbehave on purpose, per tool,
for the mcp pack's message-bound tests. ``python hostile_http_server.py PORT``; it exits by itself
after ``LIFETIME_S`` seconds. HTTP/1.1, one request per connection (``Connection: close``).

Tools (``tools/call``):

- ``fine``: a short JSON answer ``ok``.
- ``json_body`` ``{"bytes": n}``: a JSON answer whose body is exactly ``n`` bytes.
- ``sse_event`` ``{"bytes": n}``: an event-stream answer of one event of exactly ``n`` bytes
  (``data: `` prefix and line end included, the blank line after it not).
- ``endless_json``: a JSON body that never ends (``ENDLESS`` bytes, then the connection is held).
- ``endless_event``: an event-stream answer whose one event never ends (same).
- ``gzip_json``: a JSON answer that inflates to ``ENDLESS`` bytes, sent gzip-compressed although
  the client asked for ``identity``.
- ``many_events`` ``{"count": n}``: an event-stream answer of ``n`` small log notifications
  (``EVENT`` bytes each), then the result.
- ``get_stream_sent``: waits until the GET stream has sent its ``GET_EVENTS`` events of ``EVENT``
  bytes each, then answers how many bytes they were.

- ``get_endless``: answers ``ok``, then the GET stream sends one endless event.

- ``redirected`` ``{"endless": bool}``: a same-origin 307 typed ``text/event-stream`` whose body is a
  few small comment events (``endless``: small events without end); the request it redirects to
  (``/moved``) is answered ``ok``.
- ``cells`` ``{"cells": n, "commas": m, "sse": bool, "events": k}``: an answer whose structured
  content holds ``n`` values ``{"a": 1}`` and a text of ``m`` commas; with ``sse``, an event stream
  of ``k`` log notifications carrying the same, then the answer — each event opened by an ``id:``
  line holding an unterminated quote. ``encoding`` (a JSON body only): the body's bytes in it.
- ``hang``: never answers (held until the client closes the connection).
- ``slow``: answers ``ok`` after ``SLOW_S`` seconds.
- ``utf16_events``: an event-stream answer declared ``charset=utf-16-le`` whose bytes ``\n\n`` come
  every kilobyte without end (in UTF-16 they end no line).

Any request (any method) at a path with ``/raw?`` is answered with the ``status`` and ``type`` of its
query, and a body repeating ``unit`` (``comment``: a small comment event; ``utf16``: a kilobyte
then ``\n\n``) without end (``ENDLESS`` bytes, then held) or ``count`` times.

``initialize`` at a URL ending in ``/endless-init`` answers with an endless JSON body. At a URL
ending in ``/silent-delete`` the session's closing ``DELETE`` is never answered (held until the
client closes the connection); everything else there answers as at any other URL. Elsewhere it
answers with a session id, so the client opens the long-lived GET stream, which
gets ``GET_EVENTS`` small log notifications and is then held open (until ``get_endless``).
"""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import sys
from typing import Any
from urllib.parse import parse_qs, urlsplit

LIFETIME_S = 120
ENDLESS = int(os.environ.get("HOSTILE_ENDLESS_BYTES", 1024 * 1024))  # larger for a memory measurement
EVENT = 1024
GET_EVENTS = 200
TOOLS = [
    "fine",
    "json_body",
    "sse_event",
    "endless_json",
    "endless_event",
    "gzip_json",
    "many_events",
    "get_stream_sent",
    "get_endless",
    "redirected",
    "utf16_events",
    "hang",
    "slow",
    "cells",
]
SLOW_S = 1.0
UNITS = {"comment": b":" + b"x" * 1000 + b"\n\n", "utf16": b"aa" * 500 + b"\n\n"}

get_stream_done = asyncio.Event()
get_endless = asyncio.Event()
get_stream_bytes = 0


def head(status: str, content_type: str | None, length: int | None, extra: str = "") -> bytes:
    lines = [f"HTTP/1.1 {status}", "Connection: close", "mcp-session-id: s1"]
    if content_type:
        lines.append(f"Content-Type: {content_type}")
    if length is not None:
        lines.append(f"Content-Length: {length}")
    return ("\r\n".join(lines) + "\r\n" + extra + "\r\n").encode()


def answer(request_id: Any, result: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode()


def text_answer(request_id: Any, text: str) -> bytes:
    return answer(request_id, {"content": [{"type": "text", "text": text}]})


def padded(request_id: Any, total: int, framing: int = 0) -> bytes:
    """A text answer of exactly ``total`` bytes, ``framing`` of which the caller adds around it."""
    empty = len(text_answer(request_id, "")) + framing
    return text_answer(request_id, "x" * (total - empty))


def log_event(size: int) -> bytes:
    """One ``notifications/message`` event of exactly ``size`` bytes (blank line included)."""
    note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": ""}}
    empty = len(b"data: " + json.dumps(note).encode() + b"\n\n")
    note["params"]["data"] = "y" * (size - empty)
    return b"data: " + json.dumps(note).encode() + b"\n\n"


async def hold(reader: asyncio.StreamReader) -> None:
    """Keep the connection open (the body never ends) until the client closes it."""
    await reader.read()


async def repeat(
    unit: bytes, count: int | None, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """``unit`` ``count`` times, or (``None``) for ``ENDLESS`` bytes and then the connection held."""
    for _ in range(count if count is not None else ENDLESS // len(unit)):
        writer.write(unit)
        await writer.drain()
    if count is None:
        await hold(reader)


async def raw_answer(target: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    query = {k: v[0] for k, v in parse_qs(urlsplit(target).query).items()}
    count = int(query["count"]) if "count" in query else None
    location = f"Location: {urlsplit(target).path}\r\n" if query["status"].startswith("3") else ""
    writer.write(head(query["status"], query["type"], None, location))
    await repeat(UNITS[query["unit"]], count, reader, writer)


async def call(
    name: str, args: dict[str, Any], rid: Any, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    sse = "text/event-stream"
    if name == "hang":
        await hold(reader)
    elif name == "slow":
        await asyncio.sleep(SLOW_S)
        body = text_answer(rid, "ok")
        writer.write(head("200 OK", "application/json", len(body)) + body)
    elif name == "redirected":
        writer.write(head("307 Temporary Redirect", sse, None, "Location: /mcp/moved\r\n"))
        await repeat(UNITS["comment"], None if args.get("endless") else 3, reader, writer)
    elif name == "utf16_events":
        writer.write(head("200 OK", sse + "; charset=utf-16-le", None))
        await repeat(UNITS["utf16"], None, reader, writer)
    elif name == "cells":
        data = {"cells": [{"a": 1}] * int(args.get("cells", 0)), "text": "," * int(args.get("commas", 0))}
        body = answer(rid, {"content": [{"type": "text", "text": "cells"}], "structuredContent": data})
        if not args.get("sse"):
            body = body.decode().encode(args.get("encoding", "utf-8"))
            writer.write(head("200 OK", "application/json", len(body)) + body)
            return
        writer.write(head("200 OK", sse, None))
        note = {
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": {"level": "info", "data": data},
        }
        for _ in range(int(args.get("events", 0))):
            writer.write(b'id: "\ndata: ' + json.dumps(note).encode() + b"\n\n")
            await writer.drain()
        writer.write(b'id: "\ndata: ' + body + b"\n\n")
    elif name == "fine":
        body = text_answer(rid, "ok")
        writer.write(head("200 OK", "application/json", len(body)) + body)
    elif name == "json_body":
        body = padded(rid, int(args["bytes"]))
        writer.write(head("200 OK", "application/json", len(body)) + body)
    elif name == "sse_event":
        event = b"data: " + padded(rid, int(args["bytes"]), len("data: \n")) + b"\n"
        writer.write(head("200 OK", sse, None) + event + b"\n")
    elif name in ("endless_json", "endless_event"):
        start = (
            b'{"jsonrpc": "2.0", "id": ' + json.dumps(rid).encode() + b', "result": {"content": [{"text": "'
        )
        writer.write(head("200 OK", sse if name == "endless_event" else "application/json", None))
        writer.write((b"data: " if name == "endless_event" else b"") + start)
        for _ in range(ENDLESS // 65536):
            writer.write(b"z" * 65536)
            await writer.drain()
        await hold(reader)
    elif name == "gzip_json":
        body = gzip.compress(padded(rid, ENDLESS))
        writer.write(head("200 OK", "application/json", len(body), "Content-Encoding: gzip\r\n") + body)
    elif name == "many_events":
        writer.write(head("200 OK", sse, None))
        for _ in range(int(args["count"])):
            writer.write(log_event(EVENT))
            await writer.drain()
        writer.write(b"data: " + text_answer(rid, "after many events") + b"\n\n")
    elif name == "get_endless":
        body = text_answer(rid, "ok")
        writer.write(head("200 OK", "application/json", len(body)) + body)
        await writer.drain()
        get_endless.set()
    elif name == "get_stream_sent":
        await asyncio.wait_for(get_stream_done.wait(), 30)
        body = text_answer(rid, str(get_stream_bytes))
        writer.write(head("200 OK", "application/json", len(body)) + body)


async def get_stream(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    global get_stream_bytes
    writer.write(head("200 OK", "text/event-stream", None))
    for _ in range(GET_EVENTS):
        event = log_event(EVENT)
        writer.write(event)
        await writer.drain()
        get_stream_bytes += len(event)
    get_stream_done.set()
    closed = asyncio.ensure_future(hold(reader))
    await asyncio.wait(
        [closed, asyncio.ensure_future(get_endless.wait())], return_when=asyncio.FIRST_COMPLETED
    )
    if not closed.done():
        writer.write(b"data: ")
        for _ in range(ENDLESS // 65536):
            writer.write(b"z" * 65536)
            await writer.drain()
        await closed


async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        raw = await reader.readuntil(b"\r\n\r\n")
        method = raw.split(b" ", 1)[0]
        length = 0
        for line in raw.split(b"\r\n")[1:]:
            key, _, value = line.partition(b":")
            if key.strip().lower() == b"content-length":
                length = int(value)
        body = json.loads(await reader.readexactly(length)) if length else {}
        target = raw.split(b" ", 2)[1].decode()
        if "/raw?" in target:
            await raw_answer(target, reader, writer)
        elif method == b"GET":
            await get_stream(reader, writer)
        elif method == b"DELETE" and target.endswith("/silent-delete"):
            await hold(reader)
        elif method == b"DELETE" or "id" not in body:
            writer.write(head("202 Accepted" if method == b"POST" else "200 OK", None, 0))
        elif body["method"] == "initialize" and raw.split(b" ", 2)[1].endswith(b"/endless-init"):
            await call("endless_json", {}, body["id"], reader, writer)
        elif body["method"] == "initialize":
            version = body["params"]["protocolVersion"]
            info = {"name": "hostile", "version": "1"}
            out = answer(
                body["id"], {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": info}
            )
            writer.write(head("200 OK", "application/json", len(out)) + out)
        elif body["method"] == "tools/list":
            tools = [{"name": n, "inputSchema": {"type": "object"}} for n in TOOLS]
            out = answer(body["id"], {"tools": tools})
            writer.write(head("200 OK", "application/json", len(out)) + out)
        elif body["method"] == "tools/call" and target.endswith("/moved"):
            writer.write(head("200 OK", "application/json", None) + text_answer(body["id"], "ok"))
        elif body["method"] == "tools/call":
            params = body["params"]
            await call(params["name"], params.get("arguments") or {}, body["id"], reader, writer)
        else:
            out = answer(body["id"], {})
            writer.write(head("200 OK", "application/json", len(out)) + out)
        await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        writer.close()


async def main(port: int) -> None:
    server = await asyncio.start_server(handle, "127.0.0.1", port)
    async with server:
        await asyncio.sleep(LIFETIME_S)


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1])))
