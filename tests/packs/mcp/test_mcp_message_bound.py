"""An upstream stdio server's messages are bounded by ``max_message_bytes`` (issue 24): a line over
it is a transport fault of that connection — the call fails at once naming the limit, the line's
bytes are never held (the reader's own high-water mark: at most the limit plus one chunk), the next
call reopens the server and another server is untouched. A line of exactly the limit is read (the
positive control). Before, the SDK's reader kept every byte of an unended line, re-copying it at
each chunk, and the call waited out its timeout. Real servers (servers/misbehaving_server.py, raw
JSON-RPC over stdio) through the dispatcher."""

from __future__ import annotations

from reyn_core.host import dispatch_tool

from .test_mcp_degraded_servers import err, misbehaving, server_pid, sessions

LIMIT = 64 * 1024  # the smallest max_message_bytes the settings take


def _settings(mcp_settings, server_script) -> object:
    demo = {"command": __import__("sys").executable, "args": [str(server_script)]}
    return mcp_settings({"big": misbehaving("oversize"), "demo": demo}, max_message_bytes=LIMIT)


async def reopened_beside_demo(reg, ctx, settings) -> None:
    """After a transport fault of ``big``: its next call reopens it (a second session), and the
    ``demo`` server beside it, never touched, answers."""
    await server_pid(reg, ctx, "big")
    assert sessions(settings, "big") == 2
    demo = await dispatch_tool(
        reg, "call_mcp_tool", {"server": "demo", "tool": "add", "arguments": {"a": 2, "b": 3}}, ctx
    )
    assert demo["status"] == "ok", demo


def _splitter(settings) -> object:
    from reyn_tools_mcp import pool

    key = pool.config_fingerprint("big", settings.servers["big"], {})
    return pool.get_pool()._connections[key].lines


async def test_a_line_of_exactly_the_limit_is_read_and_one_byte_more_is_refused(
    mcp_registry, mcp_settings, server_script, ctx
) -> None:
    settings = _settings(mcp_settings, server_script)
    reg = mcp_registry(settings)
    at_limit = await dispatch_tool(
        reg, "call_mcp_tool", {"server": "big", "tool": "sized", "arguments": {"bytes": LIMIT}}, ctx
    )
    assert at_limit["status"] == "ok", at_limit  # the positive control
    assert len(at_limit["data"]["text"]) > LIMIT - 200
    over = {"server": "big", "tool": "sized", "arguments": {"bytes": LIMIT + 1}}
    kind, message = err(await dispatch_tool(reg, "call_mcp_tool", over, ctx))
    assert kind == "execution_error"
    assert f"the server sent a message over {LIMIT} bytes (max_message_bytes)" in message


async def test_an_endless_line_fails_the_call_at_once_and_is_never_held(
    mcp_registry, mcp_settings, server_script, ctx
) -> None:
    from reyn_tools_mcp.lines import CHUNK

    settings = _settings(mcp_settings, server_script)
    reg = mcp_registry(settings)
    await server_pid(reg, ctx, "big")  # it answers (sandboxed, its pid is the same in every start)
    kind, message = err(await dispatch_tool(reg, "call_mcp_tool", {"server": "big", "tool": "flood"}, ctx))
    assert kind == "execution_error"
    assert f"the server sent a message over {LIMIT} bytes (max_message_bytes)" in message
    assert "timeout" not in message and "did not answer" not in message  # at once, not at the timeout
    assert 0 < _splitter(settings).held_high_water <= LIMIT + CHUNK  # never the server's 8 MiB
    await reopened_beside_demo(reg, ctx, settings)


def test_the_splitter_is_linear_and_drops_an_overlong_line() -> None:
    """The reader itself: a line over the limit fed a byte short of a chunk at a time is reported
    once, its bytes dropped, and the lines around it come through whole."""
    from reyn_tools_mcp.lines import LineSplitter, Overlong

    splitter = LineSplitter(10)
    out = splitter.feed(b"first\n" + b"y" * 7)
    for _ in range(1000):
        out += splitter.feed(b"y" * 7)
    out += splitter.feed(b"y\nlast\nta") + splitter.feed(b"il") + splitter.end()
    assert out == [b"first", Overlong(10, b"y" * 14), b"last", b"tail"]
    assert splitter.held_high_water <= 10 + 9


def test_a_crlf_newline_is_not_counted_and_an_overlong_line_keeps_its_head() -> None:
    """``\\r\\n`` ends a line like ``\\n`` (a line of exactly the limit with it is read, the ``\\r``
    split from its newline by the chunks or not); a ``\\r`` inside a line counts; an over-long
    line's report carries its first ``HEAD`` bytes."""
    from reyn_tools_mcp.lines import HEAD, LineSplitter, Overlong

    splitter = LineSplitter(10)
    out = splitter.feed(b"0123456789\r\n0123456789\r") + splitter.feed(b"\n0123456789\rX\n")
    assert out == [b"0123456789\r", b"0123456789\r", Overlong(10, b"0123456789\rX")]
    big = LineSplitter(HEAD * 2)
    assert big.feed(b"h" * HEAD + b"t" * HEAD * 2 + b"\n") == [Overlong(HEAD * 2, b"h" * HEAD)]
