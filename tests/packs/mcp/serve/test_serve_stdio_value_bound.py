"""``reyn mcp serve`` over stdio bounds a request line by ``--max-request-values`` too (issue 24,
invariant 6): parsing costs per JSON value, not per byte, so a line of tiny values under
``--max-request-bytes`` (4 MiB: ~600 MB and over a second of parsing) is counted before it is parsed
and, over the bound, answered with JSON-RPC -32600 naming the bound and the line's id, logged, and
skipped; the next request is answered. A string full of commas is one value (the positive control
beside a request under the bound). A real ``reyn`` subprocess over pipes."""

from __future__ import annotations

import json

from .conftest import ServeWorld
from .test_serve_stop import stdio_serve


async def test_a_line_over_the_value_bound_is_answered_skipped_and_the_next_request_served(
    serve_world: ServeWorld,
) -> None:
    with stdio_serve(serve_world, "--max-request-values", "1000") as server:
        server.initialize()
        under = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {"x": [1] * 500}}}
        server.send(under)
        assert "result" in server.answer(1)  # the positive control: a request under the bound
        commas = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": {"x": "," * 50_000}}}
        server.send(commas)
        assert "result" in server.answer(2)  # a string of commas is one value
        flood = {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/list",
            "params": {"_meta": {"x": [{"a": 1}] * 2000}},
        }
        assert server.proc.stdin is not None
        server.proc.stdin.write(json.dumps(flood).encode() + b"\n")
        server.send({"jsonrpc": "2.0", "id": 4, "method": "tools/list"})
        answers = server.answers(3, 4)
        refused, answered = answers[3], answers[4]
        server.close_stdin()
        assert await server.exit_code() == 0
    assert refused["error"]["code"] == -32600, refused
    assert "of over 1000 JSON values (--max-request-values)" in refused["error"]["message"]
    assert "result" in answered and answered["result"]["tools"]
    assert "of over 1000 JSON values (--max-request-values) was skipped unparsed" in server.log.read_text()


def test_the_value_bound_has_a_floor(serve_world: ServeWorld) -> None:
    with stdio_serve(serve_world, "--max-request-values", "999") as server:
        assert server.proc.wait(timeout=60) == 2
    assert "--max-request-values must be at least 1000" in server.log.read_text()
