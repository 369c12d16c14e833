"""``reyn mcp serve --max-request-bytes`` over stdio answers a refused line with the request's own
id, so an SDK client's call fails at once (issue 24). The id is taken from the line's first bytes
(``line_id``: SDK clients write ``jsonrpc``, ``id``, ``method`` first); before, the answer had
``id: null``, the SDK client dropped it and waited out its whole timeout. The limit does not count
the line's newline, ``\\r\\n`` included: a line of exactly the limit ending ``\\r\\n`` is served, one
byte more is refused (before, the ``\\r`` counted). Positive controls: a small call in the same
session is answered. A real ``reyn`` subprocess: the SDK's ``ClientSession`` over ``stdio_client``,
and raw pipes (``test_serve_stop.StdioServe``)."""

from __future__ import annotations

import json

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

from .conftest import ServeWorld
from .test_serve_stop import stdio_serve

LIMIT = 1024
CALL_TIMEOUT_S = 60  # what the refused call would wait for before


async def test_an_sdk_client_gets_the_refusal_at_once_and_the_next_call_is_served(
    serve_world: ServeWorld,
) -> None:
    params = serve_world.stdio("--max-request-bytes", str(LIMIT))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        with pytest.raises(MCPError) as refused:
            await session.call_tool("probe_echo", {"text": "x" * 4000}, read_timeout_seconds=CALL_TIMEOUT_S)
        small = await session.call_tool("probe_echo", {"text": "small"}, read_timeout_seconds=CALL_TIMEOUT_S)
    assert refused.value.error.code == -32600, refused.value.error
    assert f"over {LIMIT} bytes (--max-request-bytes)" in refused.value.error.message
    assert not small.is_error and "small" in str(small.structured_content or small.content)


def _call_line(request_id: int, size: int) -> bytes:
    """A ``tools/call`` of ``probe_echo`` that is exactly ``size`` bytes long (no newline)."""

    def line(text: str) -> bytes:
        params = {"name": "probe_echo", "arguments": {"text": text}}
        return json.dumps(
            {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
        ).encode()

    return line("x" * (size - len(line(""))))


async def test_a_crlf_newline_is_not_counted(serve_world: ServeWorld) -> None:
    with stdio_serve(serve_world, "--max-request-bytes", str(LIMIT)) as server:
        server.initialize()
        assert server.proc.stdin is not None
        server.proc.stdin.write(_call_line(1, LIMIT) + b"\r\n")  # exactly the limit, then \r\n
        server.proc.stdin.write(_call_line(2, LIMIT + 1) + b"\r\n")  # one byte more
        server.proc.stdin.flush()
        answers = server.answers(1, 2)  # the refusal may come first
        at_limit, over = answers[1], answers[2]
        server.close_stdin()
        assert await server.exit_code() == 0
    assert "result" in at_limit and not at_limit["result"].get("isError"), at_limit
    assert over["error"]["code"] == -32600, over  # answered with its own id


@pytest.mark.parametrize(
    ("head", "found"),
    [
        (b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"x', 7),
        (b'{"params": {"id": 3}, "id": "a\\"b", "me', 'a"b'),  # nested ids are not the request's
        (b'{"x": "\\"id\\": 1", "id": -2,', -2),  # nor one inside a string
        (b'{"a": [1, {"id": 2}], "id": 9}', 9),
        (b'{"jsonrpc": "2.0", "id": 12', None),  # cut off: maybe 123
        (b'{"id": "ab', None),
        (b'{"id": 1.5, ', None),
        (b'{"id": null, ', None),
        (b'[{"id": 1}]', None),  # a batch
        (b'{"method": "tools/call", "params": {"text": "xxxx', None),  # the id comes later
    ],
)
def test_the_id_is_read_only_at_the_top_level(head: bytes, found: object) -> None:
    from reyn_tools_mcp.line_id import request_id

    assert request_id(head) == found
