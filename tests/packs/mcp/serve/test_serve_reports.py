"""A served tool's ``ctx.report_progress`` and ``ctx.log`` reach the real SDK client as
``notifications/progress`` and ``notifications/message`` — over stdio and HTTP, on the handshake
protocol (``logging/setLevel``) and on 2026-07-28 (the per-request log-level opt-in) — before the
call's result; a client that listens to neither gets the same result."""

from __future__ import annotations

import warnings
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPDeprecationWarning

from .conftest import MODERN, ServeWorld


class Heard:
    """What the client received, in order: progress triples and log entries."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.events.append(("progress", (progress, total, message)))

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.events.append(("log", (params.level, params.logger, params.data)))

    def of(self, kind: str) -> list[Any]:
        return [value for k, value in self.events if k == kind]


async def _set_level(client: Client, level: str) -> None:
    with warnings.catch_warnings():  # logging/setLevel is the handshake era's, deprecated in 2026-07-28
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        await client.set_logging_level(level)  # type: ignore[arg-type]


@pytest.mark.parametrize("tool", ["probe_progress", "probe_progress_sync"])
@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_progress_reaches_the_client_before_the_result(
    serve_world: ServeWorld, mode: str, tool: str
) -> None:
    heard = Heard()
    async with Client(serve_world.stdio(), mode=mode) as client:
        result = await client.call_tool(tool, {"steps": 3}, progress_callback=heard.progress)
    assert not result.is_error and result.structured_content == {"steps": 3}
    assert [p for p, _, _ in heard.of("progress")] == [1.0, 2.0, 3.0]
    assert all(total == 3.0 for _, total, _ in heard.of("progress"))
    assert heard.of("progress")[0][2].startswith("step 1")


async def test_handshake_logs_follow_set_level(serve_world: ServeWorld) -> None:
    heard = Heard()
    async with Client(serve_world.stdio(), mode="legacy", logging_callback=heard.log) as client:
        await client.call_tool("probe_progress", {"steps": 2})
        default = list(heard.of("log"))
        heard.events.clear()
        await _set_level(client, "warning")
        await client.call_tool("probe_progress", {"steps": 2})
        warned = list(heard.of("log"))
        heard.events.clear()
        await _set_level(client, "debug")
        await client.call_tool("probe_progress", {"steps": 1})
        everything = list(heard.of("log"))
    # until the client sets a level: info and above (the debug entry is not sent)
    assert [level for level, _, _ in default] == ["info", "info", "warning"]
    assert default[0] == ("info", "probe_progress", {"message": "did step 1", "step": 1})
    assert default[-1] == ("warning", "probe_progress", "all steps done")
    assert [level for level, _, _ in warned] == ["warning"]
    assert [level for level, _, _ in everything] == ["debug", "info", "warning"]


async def test_modern_logs_need_the_request_opt_in(serve_world: ServeWorld) -> None:
    heard = Heard()
    async with Client(serve_world.stdio(), mode=MODERN, logging_callback=heard.log) as client:
        silent = await client.call_tool("probe_progress", {"steps": 1})
    assert not silent.is_error and heard.of("log") == []
    async with Client(
        serve_world.stdio(), mode=MODERN, logging_callback=heard.log, log_level="warning"
    ) as client:
        await client.call_tool("probe_progress", {"steps": 2})
    assert heard.of("log") == [("warning", "probe_progress", "all steps done")]


@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_progress_and_logs_over_http(serve_world: ServeWorld, mode: str) -> None:
    from mcp.client.streamable_http import streamable_http_client

    heard = Heard()
    with serve_world.http() as server:
        async with Client(
            streamable_http_client(server.url), mode=mode, logging_callback=heard.log, log_level="info"
        ) as client:
            result = await client.call_tool("probe_progress", {"steps": 2}, progress_callback=heard.progress)
    assert not result.is_error
    assert [p for p, _, _ in heard.of("progress")] == [1.0, 2.0]
    assert [level for level, _, _ in heard.of("log")] == ["info", "info", "warning"]


@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_a_reporting_tool_works_for_a_client_that_listens_to_nothing(
    serve_world: ServeWorld, mode: str
) -> None:
    async with Client(serve_world.stdio(), mode=mode) as client:
        result = await client.call_tool("probe_progress", {"steps": 3})
        echo = await client.call_tool("probe_echo", {"text": "after"})
    assert not result.is_error and result.structured_content == {"steps": 3}
    assert echo.structured_content == {"text": "after", "agent": "mcp"}
