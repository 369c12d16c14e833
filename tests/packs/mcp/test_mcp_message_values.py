"""An upstream stdio server's messages are bounded in JSON values too (``max_message_values``, issue
24, invariant 6): parsing costs per value, not per byte, so a message of tiny values under
``max_message_bytes`` took the host to gigabytes and stalled its loop for seconds. Its values are
counted before it is parsed (``reyn_core.host.values_within``); over the bound it is a transport
fault, as over ``max_message_bytes``: the call fails at once naming the bound, the next call reopens
the server, another server is untouched. The positive controls: a message just under the bound, and
a text of many commas (one string: one value). Real servers (servers/misbehaving_server.py) through
the dispatcher."""

from __future__ import annotations

import sys

from reyn_core.host import dispatch_tool

from .test_mcp_degraded_servers import err, misbehaving
from .test_mcp_message_bound import reopened_beside_demo

VALUES = 1000  # the smallest max_message_values the settings take
WORDS = f"the server sent a message of over {VALUES} JSON values (max_message_values)"


def _settings(mcp_settings, server_script) -> object:
    demo = {"command": sys.executable, "args": [str(server_script)]}
    return mcp_settings({"big": misbehaving("oversize"), "demo": demo}, max_message_values=VALUES)


def _cells(**arguments: object) -> dict:
    return {"server": "big", "tool": "cells", "arguments": arguments}


async def test_an_answer_under_the_value_bound_is_read_and_one_over_it_is_refused(
    mcp_registry, mcp_settings, server_script, ctx
) -> None:
    reg = mcp_registry(_settings(mcp_settings, server_script))
    # each cell is three values (an object, a key, a number); the envelope a few dozen more
    under = await dispatch_tool(reg, "call_mcp_tool", _cells(cells=300), ctx)
    assert under["status"] == "ok", under  # the positive control
    kind, message = err(await dispatch_tool(reg, "call_mcp_tool", _cells(cells=400), ctx))
    assert kind == "execution_error"
    assert WORDS in message
    assert "timeout" not in message and "did not answer" not in message  # at once, not at the timeout


async def test_commas_inside_a_string_are_one_value(mcp_registry, mcp_settings, server_script, ctx) -> None:
    reg = mcp_registry(_settings(mcp_settings, server_script))
    result = await dispatch_tool(reg, "call_mcp_tool", _cells(commas=50 * VALUES), ctx)
    assert result["status"] == "ok", result
    assert result["data"]["text"] == "," * 50 * VALUES


async def test_a_notification_flood_fails_the_call_and_the_next_call_reopens(
    mcp_registry, mcp_settings, server_script, ctx
) -> None:
    settings = _settings(mcp_settings, server_script)
    reg = mcp_registry(settings)
    quiet = await dispatch_tool(reg, "call_mcp_tool", _cells(cells=10, notify=True), ctx)
    assert quiet["status"] == "ok", quiet  # the positive control: a small notification is fine
    kind, message = err(await dispatch_tool(reg, "call_mcp_tool", _cells(cells=20_000, notify=True), ctx))
    assert kind == "execution_error"
    assert WORDS in message
    await reopened_beside_demo(reg, ctx, settings)


def test_the_splitter_reports_a_line_over_the_value_bound_with_its_head() -> None:
    """The reader itself: a line over the value bound is one ``TooManyValues`` carrying its first
    ``HEAD`` bytes, and the lines around it come through whole."""
    from reyn_tools_mcp.lines import HEAD, LineSplitter, TooManyValues

    splitter = LineSplitter(1 << 20, values=1000)
    flood = b"[" + b"1," * 1000 + b"1]"
    commas = b'["' + b"," * 5000 + b'"]'
    out = splitter.feed(b"[1,2]\n" + flood + b"\n" + commas + b"\n")
    assert out == [b"[1,2]", TooManyValues(1000, flood[:HEAD]), commas]


def test_the_splitter_reports_a_line_that_is_not_utf8_json_naming_it() -> None:
    """A line with a byte order mark or in UTF-32 (issue 24, task E: the count reads UTF-8 only) is
    one ``NotUtf8Line`` naming what it is, never counted as UTF-8 nor parsed; the lines around it
    come through whole."""
    from reyn_tools_mcp.lines import HEAD, LineSplitter, NotUtf8Line

    splitter = LineSplitter(1 << 20, values=1000)
    marked = b"\xef\xbb\xbf[1,2]"
    wide = "[1,2]".encode("utf-32-be")  # no 0A byte in it: the splitter sees one line
    out = splitter.feed(b"[1]\n" + marked + b"\n" + wide + b"\n[2]\n")
    assert out[0] == b"[1]" and out[3] == b"[2]"
    words = "JSON in UTF-8 with a byte order mark; only UTF-8 JSON without a byte order mark is accepted"
    assert out[1] == NotUtf8Line(f"{words} (RFC 8259)", marked[:HEAD])
    assert isinstance(out[2], NotUtf8Line) and out[2].what.startswith("JSON in UTF-32-BE;"), out[2]
