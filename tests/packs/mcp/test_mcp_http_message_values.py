"""A streamable-HTTP server's messages are bounded in JSON values too (``max_message_values``, issue
24, invariant 6), counted as their bytes arrive (servers/hostile_http_server.py, raw HTTP on
127.0.0.1): a JSON body, or one event of an event stream, over the bound is a transport fault — the
call fails at once naming the bound, the next call reopens — while a body under the bound, a text of
many commas (one value) and an event stream of many events each under the bound (their total far
over it) work. Each event opens with an ``id:`` line holding an unterminated quote: a line end closes
it, so it hides nothing of the event's data."""

from __future__ import annotations

import pytest

from .test_mcp_http_message_bound import CALL_TIMEOUT_S, call, fault, hostile_url, sessions, text

__all__ = ["hostile_url"]  # the fixture, used by name

VALUES = 1000  # the smallest max_message_values the settings take
WORDS = f"the server sent a message of over {VALUES} JSON values (max_message_values)"


@pytest.fixture
def hostile(mcp_registry, mcp_settings, hostile_url):
    settings = mcp_settings(
        {"bad": {"url": hostile_url}}, call_timeout_s=CALL_TIMEOUT_S, max_message_values=VALUES
    )
    return mcp_registry(settings), settings


@pytest.mark.parametrize("sse", [False, True])
async def test_a_message_over_the_value_bound_is_a_fault_and_the_next_call_reopens(hostile, ctx, sse) -> None:
    reg, settings = hostile
    assert text(await call(reg, ctx, "bad", "cells", {"cells": 300, "sse": sse})) == "cells"  # under
    message = fault(await call(reg, ctx, "bad", "cells", {"cells": 400, "sse": sse}))
    assert WORDS in message
    assert "timeout" not in message and "did not answer" not in message
    assert text(await call(reg, ctx, "bad", "fine")) == "ok"
    assert sessions(settings, "bad") == 2


@pytest.mark.parametrize("sse", [False, True])
async def test_commas_inside_a_string_are_one_value(hostile, ctx, sse) -> None:
    reg, _ = hostile
    assert text(await call(reg, ctx, "bad", "cells", {"commas": 50 * VALUES, "sse": sse})) == "cells"


async def test_the_count_restarts_at_each_event(hostile, ctx) -> None:
    reg, _ = hostile
    many = {"cells": 100, "sse": True, "events": 30}  # ~300 values an event, ~9,000 in all
    assert text(await call(reg, ctx, "bad", "cells", many)) == "cells"
    message = fault(await call(reg, ctx, "bad", "cells", {"cells": 400, "sse": True, "events": 1}))
    assert WORDS in message  # the first event is over: the quote in its id line hid nothing


def test_the_event_count_carries_a_string_across_chunks_and_closes_it_at_a_line_end() -> None:
    """The count itself: a string (and an escape) cut by a chunk boundary is carried; a quote left
    open on an ``id:`` line ends with its line."""
    from reyn_tools_mcp.http_bounds import EventCount

    count = EventCount()
    for chunk in (b'data: ["a,b', b"\\", b'",,', b'"]\n\n'):
        count.add(chunk)
    assert count.values == 3  # the "data:" colon, the array, one string (the commas are inside it)
    count.add(b'id: "\ndata: [1,2,3')
    assert count.values >= 5  # the quote did not swallow the data line


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-32"])
async def test_a_body_that_is_not_utf8_json_is_a_fault_naming_it(hostile, ctx, encoding) -> None:
    """Counted only as UTF-8 JSON (issue 24, task E): a body in UTF-16 or UTF-32 is a transport fault
    naming what it is (before: a parse fault); its UTF-8 twin is read and the next call reopens."""
    reg, settings = hostile
    message = fault(await call(reg, ctx, "bad", "cells", {"cells": 10, "encoding": encoding}))
    assert f"the server sent a message that is JSON in {encoding.upper()}; only UTF-8 JSON" in message
    assert text(await call(reg, ctx, "bad", "cells", {"cells": 10})) == "cells"  # the UTF-8 twin
    assert sessions(settings, "bad") == 2
