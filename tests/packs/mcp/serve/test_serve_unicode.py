"""Text UTF-8 cannot carry (a lone surrogate: a file name read with ``surrogateescape``) in what a
served tool sends back — its result, its error, its progress or log message — fails or is escaped
in that one call; the session serves on. Before, the SDK's writer raised while sending it: over
stdio the connection was lost, over HTTP that response never came. The real ``reyn mcp serve``,
driven by the SDK's ``Client``; the control is the same tool with ordinary non-ASCII text."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import mcp_types as types
from mcp import Client

from .conftest import ServeWorld
from .test_serve_reports import Heard

FINE = "café 😀"


def _text(result: types.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def _call(client: Client, where: str, lone: bool, heard: Heard | None = None) -> Any:
    progress = heard.progress if heard is not None else None
    call = client.call_tool("probe_unicode", {"where": where, "lone": lone}, progress_callback=progress)
    return await asyncio.wait_for(call, 60)


async def _still_serving(client: Client) -> None:
    after = await asyncio.wait_for(client.call_tool("probe_echo", {"text": "still here"}), 60)
    assert not after.is_error and after.structured_content["text"] == "still here"


async def _each_way_out(client: Client, heard: Heard) -> None:
    # the result: the call fails alone, naming where the text is; the control is sent as it is
    bad = await _call(client, "result", True)
    assert bad.is_error, _text(bad)
    assert "UTF-8 cannot carry (a lone surrogate) at /name" in _text(bad)
    assert "probe_unicode" in _text(bad) and "not sent" in _text(bad)
    await _still_serving(client)
    good = await _call(client, "result", False)
    assert not good.is_error and good.structured_content == {"name": FINE}
    # an error's text: still the error, the lone surrogate shown as its escape
    error = await _call(client, "error", True)
    assert error.is_error and _text(error).endswith("no such file: caf\\udce9")
    error = await _call(client, "error", False)
    assert error.is_error and _text(error).endswith(f"no such file: {FINE}")
    await _still_serving(client)
    # a progress and a log message: delivered, escaped; the call itself succeeds
    for where in ("progress", "log"):
        done = await _call(client, where, True, heard)
        assert not done.is_error and done.structured_content == {"done": where}, _text(done)
        await _call(client, where, False, heard)
    await _still_serving(client)
    assert [m for _, _, m in heard.of("progress")] == ["read caf\\udce9", f"read {FINE}"]
    assert [d for _, _, d in heard.of("log")] == ["read caf\\udce9", f"read {FINE}"]


async def test_stdio_session_serves_on_after_text_utf8_cannot_carry(serve_world: ServeWorld) -> None:
    heard = Heard()
    async with Client(serve_world.stdio(), mode="legacy", logging_callback=heard.log) as client:
        await _each_way_out(client, heard)


async def test_http_session_serves_on_after_text_utf8_cannot_carry(serve_world: ServeWorld) -> None:
    heard = Heard()
    with serve_world.http() as server:
        async with Client(server.url, mode="legacy", logging_callback=heard.log) as client:
            await _each_way_out(client, heard)


def test_reyn_tools_call_prints_the_failure_not_a_traceback(serve_world: ServeWorld) -> None:
    # the cli surface writes the envelope to stdout as UTF-8: it raised there, a traceback, no JSON
    bad = serve_world.reyn("tools", "call", "probe_unicode", "--args", '{"lone": true}', "--json")
    assert bad.returncode == 1, bad.stderr
    envelope = json.loads(bad.stdout)
    assert envelope["error"]["kind"] == "execution_error"
    assert "UTF-8 cannot carry (a lone surrogate) at /name" in envelope["error"]["message"]
    good = serve_world.reyn("tools", "call", "probe_unicode", "--args", '{"lone": false}', "--json")
    assert good.returncode == 0, good.stderr
    assert json.loads(good.stdout) == {"status": "ok", "data": {"name": FINE}}
