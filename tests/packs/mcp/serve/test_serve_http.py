"""``reyn mcp serve --http``: the same registry over streamable HTTP on 127.0.0.1, and its safety:
Host validation (DNS rebinding), bearer tokens, refusal of unsafe binds, bounded bodies, SIGTERM."""

from __future__ import annotations

import asyncio
import json
import signal
import socket

import httpx
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from .conftest import ServeWorld, free_port

TOKEN = "t0k3n-for-the-serve-tests-0123456789"
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _text(result: types.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


def _authed(token: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)


async def test_list_and_calls_over_http(serve_world: ServeWorld) -> None:
    rendered = [e for e in serve_world.router_render() if e["function"]["name"] != "probe_deferred"]
    with serve_world.http() as server:
        async with Client(server.url) as client:
            tools = (await client.list_tools()).tools
            ok = await client.call_tool("probe_echo", {"text": "over http"})
            bad = await client.call_tool("probe_echo", {"text": 1})
            refused = await client.call_tool("shell", {"command": "id"})
            raised = await client.call_tool("probe_raise", {})
            slow = await client.call_tool("probe_slow", {})
            with pytest.raises(MCPError) as unknown:
                await client.call_tool("nope", {})
    # the mcp render target keeps a schema's "$schema"; the router (openai) render drops it
    assert [(t.name, t.description, _without_dialect(t.input_schema)) for t in tools] == [
        (e["function"]["name"], e["function"]["description"], e["function"]["parameters"]) for e in rendered
    ]
    assert ok.structured_content == {"text": "over http", "agent": "mcp"}
    assert bad.is_error and _text(bad).startswith("invalid arguments for 'probe_echo'")
    assert refused.is_error and "role gate" in _text(refused)
    assert raised.is_error and "Traceback" not in _text(raised)
    assert slow.is_error and "did not finish" in _text(slow)
    assert unknown.value.code == types.INVALID_PARAMS
    statuses = [(r["tool"], r["status"]) for r in serve_world.audit_lines()]
    assert statuses == [
        ("probe_echo", "ok"),
        ("probe_echo", "invalid_arguments"),
        ("shell", "gate_refused"),
        ("probe_raise", "execution_error"),
        ("probe_slow", "timeout"),
    ]


async def test_two_hundred_concurrent_calls_without_cross_talk(serve_world: ServeWorld) -> None:
    with serve_world.http() as server:
        async with Client(server.url) as client:
            results = await asyncio.gather(
                *(
                    client.call_tool("probe_echo", {"text": f"call-{i}", "delay_ms": i % 7 * 5})
                    for i in range(200)
                )
            )
    assert [r.structured_content["text"] for r in results] == [f"call-{i}" for i in range(200)]
    assert not any(r.is_error for r in results)
    assert len([r for r in serve_world.audit_lines() if r["tool"] == "probe_echo"]) == 200


async def test_cancellation_over_http_stops_the_handler(serve_world: ServeWorld) -> None:
    markers = serve_world.markers
    with serve_world.http() as server:
        async with Client(server.url) as client:
            call = asyncio.ensure_future(client.call_tool("probe_wait", {"tag": "h1"}))
            for _ in range(1000):
                if (markers / "h1.started").exists():
                    break
                await asyncio.sleep(0.02)
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            for _ in range(1000):
                if (markers / "h1.cancelled").exists():
                    break
                await asyncio.sleep(0.02)
    assert (markers / "h1.cancelled").exists() and not (markers / "h1.finished").exists()


@pytest.mark.parametrize("host", ["evil.example", "evil.example:80", "127.0.0.1.evil.example"])
async def test_a_foreign_host_header_is_refused(serve_world: ServeWorld, host: str) -> None:
    with serve_world.http() as server:
        async with httpx.AsyncClient(timeout=30) as http:
            foreign = await http.post(server.url, json=INIT, headers={**HEADERS, "Host": host})
            origin = await http.post(
                server.url, json=INIT, headers={**HEADERS, "Origin": "http://evil.example"}
            )
            own = await http.post(server.url, json=INIT, headers=HEADERS)
    assert foreign.status_code == 421
    assert origin.status_code == 403
    assert own.status_code == 200


async def test_a_foreign_host_header_is_refused_on_the_right_port_only(serve_world: ServeWorld) -> None:
    with serve_world.http() as server:
        async with httpx.AsyncClient(timeout=30) as http:
            other_port = await http.post(
                server.url, json=INIT, headers={**HEADERS, "Host": f"127.0.0.1:{server.port + 1}"}
            )
    assert other_port.status_code == 421


async def test_with_a_token_missing_or_wrong_tokens_get_401(serve_world: ServeWorld) -> None:
    with serve_world.http("--auth-token-env", "SERVE_TOKEN", SERVE_TOKEN=TOKEN) as server:
        async with httpx.AsyncClient(timeout=30) as http:
            missing = await http.post(server.url, json=INIT, headers=HEADERS)
            wrong = await http.post(
                server.url, json=INIT, headers={**HEADERS, "Authorization": "Bearer nope"}
            )
            prefix = await http.post(
                server.url, json=INIT, headers={**HEADERS, "Authorization": f"Bearer {TOKEN[:-1]}"}
            )
            basic = await http.post(
                server.url, json=INIT, headers={**HEADERS, "Authorization": f"Basic {TOKEN}"}
            )
            other_path = await http.get(f"http://127.0.0.1:{server.port}/")
        from mcp.client.streamable_http import streamable_http_client

        async with _authed(TOKEN) as http:
            async with Client(streamable_http_client(server.url, http_client=http)) as client:
                result = await client.call_tool("probe_echo", {"text": "authorised"})
    for response in (missing, wrong, prefix, basic, other_path):
        assert response.status_code == 401
        assert response.headers["www-authenticate"] == "Bearer"
    assert result.structured_content["text"] == "authorised"


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["--http", "0.0.0.0:{port}"], {}, "not a loopback address) without a bearer token"),
        (["--http", "[::]:{port}"], {}, "without a bearer token"),
        (["--http", "192.0.2.10:{port}"], {}, "without a bearer token"),
        (["--http", "0.0.0.0:{port}", "--auth-token-env", "SERVE_TOKEN"], {}, "which is not set"),
        (
            ["--http", "0.0.0.0:{port}", "--auth-token-env", "SERVE_TOKEN"],
            {"SERVE_TOKEN": "short"},
            "at least 16",
        ),
        (
            ["--http", "0.0.0.0:{port}", "--auth-token-env", "SERVE_TOKEN"],
            {"SERVE_TOKEN": TOKEN},
            "--allow-host",
        ),
        (["--http", "localhost"], {}, "expected HOST:PORT"),
        (["--http", "::1:{port}"], {}, "in brackets"),
        (["--http", "127.0.0.1:0"], {}, "1-65535"),
        (["--http", "127.0.0.1:{port}", "--max-request-bytes", "10"], {}, "--max-request-bytes"),
    ],
)
def test_unsafe_or_unusable_http_options_are_refused_before_binding(
    serve_world: ServeWorld, args: list[str], env: dict[str, str], message: str
) -> None:
    port = free_port()
    proc = serve_world.reyn("mcp", "serve", *(a.format(port=port) for a in args), timeout=120, **env)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr


async def test_a_request_body_over_the_limit_gets_413(serve_world: ServeWorld) -> None:
    with serve_world.http("--max-request-bytes", "4096") as server:
        async with httpx.AsyncClient(timeout=30) as http:
            big = dict(INIT, params={**INIT["params"], "clientInfo": {"name": "x" * 10_000, "version": "0"}})
            response = await http.post(server.url, content=json.dumps(big), headers=HEADERS)
            small = await http.post(server.url, json=INIT, headers=HEADERS)
    assert response.status_code == 413
    assert small.status_code == 200


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
async def test_a_signal_stops_the_server_cleanly_letting_a_running_call_finish(
    serve_world: ServeWorld, sig: int
) -> None:
    with serve_world.http("--shutdown-grace", "20") as server:
        async with Client(server.url) as client:
            # The SDK client lists the tools after a call to check its structured result, unless it
            # has the list already: listed now, so nothing is asked of a server that has stopped.
            await client.list_tools()
            call = asyncio.ensure_future(client.call_tool("probe_echo", {"text": "last", "delay_ms": 1500}))
            for _ in range(1500):  # the signal must arrive while the call runs, however loaded the machine
                if (serve_world.markers / "echo-last.started").exists():
                    break
                await asyncio.sleep(0.02)
            server.proc.send_signal(sig)
            result = await call
        code = await asyncio.to_thread(server.proc.wait, 60)
    assert result.structured_content == {"text": "last", "agent": "mcp"}
    assert code == 0
    assert "Traceback" not in server.log.read_text()


def _without_dialect(schema: dict) -> dict:
    return {k: v for k, v in schema.items() if k != "$schema"}


def test_a_port_in_use_exits_2_saying_so(serve_world: ServeWorld) -> None:
    """The server cannot start (another socket holds the port): exit 2, as for every option it
    cannot use (before: uvicorn's own sys.exit(1), taken for a server failure). The control: the
    same command on a free port is listening (every other test here)."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        proc = serve_world.reyn("mcp", "serve", "--http", f"127.0.0.1:{port}", timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "address already in use" in proc.stderr.lower(), proc.stderr
