"""``reyn mcp serve`` over stdio bounds a request line by ``--max-request-bytes`` (issue 24): a line
over it is never held — the process's peak memory grows by far less than the line — it is answered
with JSON-RPC -32600 naming the limit (and the line's id), logged, and the next request is answered.
Before, stdin was read with no line limit: the whole line was kept, and it got no answer. A real
``reyn`` subprocess over pipes (``test_serve_stop.StdioServe``)."""

from __future__ import annotations

import asyncio

from .conftest import ServeWorld
from .test_serve_stop import stdio_serve

LINE = 128 * 1024 * 1024  # written to the server in one line; it may hold 4 KiB of it (and a chunk)


def _peak_rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise AssertionError("no VmHWM")


async def test_an_overlong_line_is_answered_skipped_and_the_next_request_served(
    serve_world: ServeWorld,
) -> None:
    with stdio_serve(serve_world, "--max-request-bytes", "4096") as server:
        server.initialize()
        server.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert "result" in server.answer(1)  # the positive control: a request under the limit
        peak_before = _peak_rss_kib(server.proc.pid)
        assert server.proc.stdin is not None
        chunk = b'{"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"x": "' + b"x" * (1 << 20)
        for _ in range(LINE // len(chunk)):
            await asyncio.to_thread(server.proc.stdin.write, chunk)
        server.proc.stdin.write(b'"}}\n')
        server.send({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
        answers = server.answers(2, 3)  # the refusal names the line's id, read from its first bytes
        refused, answered = answers[2], answers[3]
        peak_after = _peak_rss_kib(server.proc.pid)
        server.close_stdin()
        assert await server.exit_code() == 0
    assert refused["error"]["code"] == -32600, refused
    assert "over 4096 bytes (--max-request-bytes)" in refused["error"]["message"]
    assert "result" in answered and answered["result"]["tools"]
    assert peak_after - peak_before < 64 * 1024, (peak_before, peak_after)  # KiB: far below the line
    assert "over 4096 bytes (--max-request-bytes) was skipped unread" in server.log.read_text()
