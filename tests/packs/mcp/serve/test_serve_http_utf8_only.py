"""``reyn mcp serve --http`` reads a request body only as UTF-8 JSON (issue 24, task E; RFC 8259). The
SDK parses a body as bytes (``json.loads``), which detects UTF-16 and UTF-32, where the value count
read UTF-8: a UTF-16 body of 1.36M values was counted as 13 and parsed. Now a body that is not UTF-8
JSON — UTF-16, UTF-32, or one with a byte order mark — is answered 415 naming what it is, logged, and
never reaches the SDK, on either protocol generation; its UTF-8 twin under the bound is served (the
positive control) and over it is 413. A real ``reyn`` subprocess on 127.0.0.1, raw HTTP."""

from __future__ import annotations

import codecs

import httpx
import pytest

from .conftest import MODERN, ServeWorld
from .test_serve_http_limits import HEADERS, _session, open_session

BOUND = 1000


def _list(lists: int) -> str:
    """The reviewer's body: an escaped quote, then ``lists`` empty lists (two values each)."""
    prefix = '"io.modelcontextprotocol/'
    envelope = f'{prefix}protocolVersion":"{MODERN}",{prefix}clientCapabilities":{{}}'
    meta = "{" + envelope + ',"s":"\\"","x":[' + ",".join(["[]"] * lists) + "]}"
    return '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":' + meta + "}}"


async def _post(url: str, body: bytes, headers: dict[str, str]) -> httpx.Response:
    """One POST on a connection of its own: a refused body is left unread, and the server closes the
    connection it came on."""
    async with httpx.AsyncClient(timeout=60) as http:
        return await http.post(url, content=body, headers=headers)


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16", "utf-32"])
async def test_a_body_in_utf16_or_utf32_is_refused_415_and_its_utf8_twin_served(
    serve_world: ServeWorld, encoding: str
) -> None:
    modern = {**HEADERS, "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list"}
    with serve_world.http("--max-request-values", str(BOUND)) as server:
        foreign = await _post(server.url, _list(50_000).encode(encoding), modern)
        twin = await _post(server.url, _list(50_000).encode(), modern)
        under = await _post(server.url, _list(100).encode(), modern)
        async with httpx.AsyncClient(timeout=60) as http:
            sid = await open_session(http, server.url)  # the handshake generation, the same answer
        session = await _post(server.url, _list(100).encode(encoding), _session(sid))
        after = await _post(server.url, _list(100).encode(), _session(sid))
        log = server.log.read_text()
    words = f"the request body is JSON in {encoding.upper()}; only UTF-8 JSON without a byte order mark"
    assert foreign.status_code == 415 and words in foreign.text, foreign.text[:300]
    assert session.status_code == 415 and words in session.text, session.text[:300]
    assert f"{words} is accepted (RFC 8259), and was refused unparsed" in log
    assert twin.status_code == 413 and f"of over {BOUND} JSON values" in twin.text, twin.text[:300]
    assert under.status_code == 200 and '"tools"' in under.text, under.text[:300]  # the positive controls
    assert after.status_code == 200 and '"tools"' in after.text, after.text[:300]


async def test_a_body_with_a_utf8_byte_order_mark_is_refused_415(serve_world: ServeWorld) -> None:
    """The SDK reads a body with one on one generation (``json.loads`` of bytes ignores it) and not on
    the other: Reyn refuses it on both (docs/decisions.md), naming it; the same body without it is served."""
    modern = {**HEADERS, "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list"}
    with serve_world.http("--max-request-values", str(BOUND)) as server:
        marked = await _post(server.url, codecs.BOM_UTF8 + _list(10).encode(), modern)
        plain = await _post(server.url, _list(10).encode(), modern)
    assert marked.status_code == 415, marked.text[:300]
    assert "the request body is JSON in UTF-8 with a byte order mark" in marked.text
    assert plain.status_code == 200 and '"tools"' in plain.text, plain.text[:300]
