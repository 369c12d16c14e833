"""A scripted OpenAI-compatible Chat Completions server on 127.0.0.1.

It lets the real litellm client run offline: tests use it to prove the wire format (it records every
request body it receives), and the demo (``reyn-demo``) uses it as its model. Each request consumes the next
entry of a script; an entry is a ``ScriptedReply`` or a function of the request body returning one,
so a scripted model can react to the tool results it is sent. Streaming requests (``"stream": true``)
get server-sent events, tool-call arguments split across chunks as real providers do.

The server runs in a daemon thread, binds an ephemeral port on 127.0.0.1 only, and shuts itself down
after ``lifetime_s`` so a forgotten server can never outlive its test.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from reyn_core.host import parse_json

from .scripted_replies import (
    Responder,
    ScriptedReply,
    completion_body,
    load_script,
    stream_chunks,
    tool_names,
    tool_results,
)


@dataclass(frozen=True)
class ReceivedRequest:
    """A request as the server saw it: path, headers (lower-cased), the parsed JSON body and the raw
    bytes of that body exactly as they arrived (for byte-level wire checks)."""

    path: str
    headers: Mapping[str, str]
    body: dict[str, Any]
    raw: bytes = b""


class ScriptedModelServer:
    """An OpenAI-compatible ``/v1/chat/completions`` endpoint answering from a script.

    Use as a context manager; ``base_url`` is what litellm takes as ``api_base`` (with a model such as
    ``"openai/scripted"``). ``requests`` lists what was received, in order.
    """

    def __init__(
        self,
        script: Iterable[ScriptedReply | Responder],
        *,
        model: str = "scripted",
        lifetime_s: float = 300.0,
        chunk_size: int = 8,
        port: int = 0,
    ) -> None:
        self._script: list[ScriptedReply | Responder] = list(script)
        self.model = model
        self.lifetime_s = lifetime_s
        self.chunk_size = max(1, chunk_size)
        self.port = port
        self.requests: list[ReceivedRequest] = []
        self._lock = threading.Lock()
        self._sticky: ScriptedReply | None = None
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._timer: threading.Timer | None = None

    # ------------------------------------------------------------------ lifecycle

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``."""
        if self._server is None:
            raise RuntimeError("the scripted model server is not running; use it as a context manager")
        port = self._server.server_address[1]
        return f"http://127.0.0.1:{port}/v1"

    def start(self) -> ScriptedModelServer:
        """Bind 127.0.0.1 (``port``, or a free one when 0) and serve in a daemon thread."""
        handler = _make_handler(self)
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            name="reyn-scripted-model",
            kwargs={"poll_interval": 0.05},
            daemon=True,
        )
        self._thread.start()
        self._timer = threading.Timer(self.lifetime_s, self.stop)
        self._timer.daemon = True
        self._timer.start()
        return self

    def stop(self) -> None:
        """Stop serving (idempotent)."""
        server, self._server = self._server, None
        if self._timer is not None:
            self._timer.cancel()
        if server is not None:
            server.shutdown()
            server.server_close()

    def __enter__(self) -> ScriptedModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ script

    def add(self, *entries: ScriptedReply | Responder) -> None:
        """Append entries to the script."""
        with self._lock:
            self._script.extend(entries)

    @property
    def remaining(self) -> int:
        """Script entries not yet consumed."""
        return len(self._script)

    def _next(self, body: dict[str, Any]) -> ScriptedReply:
        with self._lock:
            if self._sticky is not None:
                return self._sticky
            if not self._script:
                n = len(self.requests)
                return ScriptedReply(
                    status=400, error_message=f"the scripted model has no reply left for request #{n}"
                )
            entry = self._script.pop(0)
        reply = entry if isinstance(entry, ScriptedReply) else entry(body)
        if reply.sticky and reply.status != 200:
            with self._lock:
                self._sticky = reply
        return reply

    def _record(self, path: str, headers: Mapping[str, str], body: dict[str, Any], raw: bytes = b"") -> int:
        with self._lock:
            self.requests.append(ReceivedRequest(path, dict(headers), body, raw))
            return len(self.requests)


def _make_handler(owner: ScriptedModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read requests, not logs
            return

        def _send_json(self, status: int, payload: Any, headers: Mapping[str, str] = {}) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in headers.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                self._send_json(200, {"object": "list", "data": [{"id": owner.model, "object": "model"}]})
            else:
                self._send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = parse_json(raw or b"{}")
            except ValueError:
                self._send_json(
                    400, {"error": {"message": "request body is not JSON", "type": "invalid_request"}}
                )
                return
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                return
            n = owner._record(self.path, {k.lower(): v for k, v in self.headers.items()}, body, raw)
            reply = owner._next(body)
            if reply.status != 200:
                self._send_json(
                    reply.status,
                    {
                        "error": {
                            "message": reply.error_message,
                            "type": "scripted_error",
                            "code": reply.status,
                        }
                    },
                    reply.headers,
                )
                return
            if body.get("stream"):
                self._stream(reply, n)
            else:
                self._send_json(200, completion_body(reply, n, owner.model), reply.headers)

        def _stream(self, reply: ScriptedReply, n: int) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            for c in stream_chunks(reply, n, owner.model, owner.chunk_size):
                self.wfile.write(f"data: {json.dumps(c)}\n\n".encode())
                self.wfile.flush()
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
            self.close_connection = True

    return Handler


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m reyn_loops.testing.scripted_server SCRIPT.json [--port N] [--lifetime S]``: serve a
    script on 127.0.0.1 until the lifetime ends or Ctrl-C (requests past its end get an HTTP 400)."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(
        prog="python -m reyn_loops.testing.scripted_server",
        description="A scripted OpenAI-compatible model on 127.0.0.1, for offline `reyn chat` trials.",
    )
    parser.add_argument("script", help="JSON array of replies (see load_script)")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--lifetime", type=float, default=600.0, help="stop after this many seconds")
    args = parser.parse_args(argv)
    try:
        script = load_script(args.script)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    server = ScriptedModelServer(script, lifetime_s=args.lifetime, port=args.port)
    try:
        server.start()
    except OSError as exc:
        print(f"error: cannot listen on 127.0.0.1:{args.port}: {exc.strerror}", file=sys.stderr)
        return 2
    print(f"serving {len(script)} scripted replies at {server.base_url}", flush=True)
    print(f"try: reyn chat --model openai/scripted --api-base {server.base_url}", flush=True)
    deadline = time.monotonic() + args.lifetime
    try:
        while time.monotonic() < deadline:
            time.sleep(0.1)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


__all__ = [
    "ReceivedRequest",
    "ScriptedModelServer",
    "ScriptedReply",
    "load_script",
    "main",
    "tool_names",
    "tool_results",
]


if __name__ == "__main__":
    raise SystemExit(main())
