"""list_mcp_servers / list_mcp_tools / call_mcp_tool against real MCP servers, through the dispatcher."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from reyn_core import ToolContext
from reyn_core.host import dispatch_tool, render_phase, render_router

SERVER = Path(__file__).parent / "servers" / "demo_server.py"


async def call(reg, ctx, server: str, tool: str, arguments: dict | None = None) -> dict:
    args = {"server": server, "tool": tool}
    if arguments is not None:
        args["arguments"] = arguments
    return await dispatch_tool(reg, "call_mcp_tool", args, ctx)


def ok(env: dict) -> dict:
    assert env["status"] == "ok", env
    return env["data"]


def err(env: dict) -> tuple[str, str]:
    assert env["status"] == "error", env
    return env["error"]["kind"], env["error"]["message"]


async def test_tools_are_on_both_surfaces_in_the_mcp_cluster(mcp_registry, mcp_settings, ctx) -> None:
    reg = mcp_registry(mcp_settings())
    names = [t["function"]["name"] for t in render_router(reg, ctx)]
    assert names == ["call_mcp_tool", "list_mcp_servers", "list_mcp_tools"]
    phase = render_phase(reg, ctx.with_surface("phase"), ["mcp"])
    assert sorted(op.kind for op in phase.ops) == names
    enum = next(t for t in render_router(reg, ctx) if t["function"]["name"] == "call_mcp_tool")
    assert enum["function"]["parameters"]["properties"]["server"]["enum"] == ["demo"]


async def test_without_servers_the_tools_are_unavailable_and_say_how(mcp_registry, mcp_settings, ctx) -> None:
    reg = mcp_registry(mcp_settings({}))
    assert render_router(reg, ctx) == []
    kind, message = err(await dispatch_tool(reg, "list_mcp_servers", {}, ctx))
    assert kind == "gate_refused" and "[plugins.mcp.settings.servers.NAME]" in message


def demo_server(script: Path, **extra: Any) -> dict[str, Any]:
    """Servers setting ``demo``: the demo server over stdio, with ``extra`` keys."""
    return {"demo": {"command": sys.executable, "args": [str(script)], **extra}}


async def test_list_servers_shows_source_but_never_env_values(
    mcp_registry, mcp_settings, ctx, server_script, monkeypatch
) -> None:
    monkeypatch.setenv("REYN_TEST_SECRET", "s3cret-value")
    s = mcp_settings(demo_server(server_script, env={"DEMO_TOKEN": "${REYN_TEST_SECRET}"}))
    data = ok(await dispatch_tool(mcp_registry(s), "list_mcp_servers", {}, ctx))
    assert data["servers"] == [
        {
            "name": "demo",
            "transport": "stdio",
            "source": f"{sys.executable} {server_script}",
            "connected": False,
            "import_tools": False,
        }
    ]
    assert "s3cret" not in str(data)


async def test_list_tools_and_call(mcp_registry, mcp_settings, ctx) -> None:
    reg = mcp_registry(mcp_settings())
    tools = ok(await dispatch_tool(reg, "list_mcp_tools", {"server": "demo"}, ctx))["tools"]
    by_name = {t["name"]: t for t in tools}
    assert by_name["add"]["description"] == "Add two integers."
    assert by_name["add"]["input_schema"]["required"] == ["a", "b"]
    data = ok(await call(reg, ctx, "demo", "add", {"a": 2, "b": 40}))
    assert data["is_error"] is False and data["text"] == "42"
    assert data["structured_content"] == {"result": 42}
    assert ok(await call(reg, ctx, "demo", "echo", {"text": "hi"}))["content"] == [
        {"type": "text", "text": "hi"}
    ]
    servers = ok(await dispatch_tool(reg, "list_mcp_servers", {}, ctx))["servers"]
    assert servers[0]["connected"] is True  # the session is reused, not reopened per call


async def test_tool_error_keeps_the_servers_error_flag_and_text(mcp_registry, mcp_settings, ctx) -> None:
    data = ok(await call(mcp_registry(mcp_settings()), ctx, "demo", "fail", {"reason": "nope"}))
    assert data["is_error"] is True and "failed on purpose: nope" in data["text"]


async def test_image_results_are_summarised(mcp_registry, mcp_settings, ctx) -> None:
    data = ok(await call(mcp_registry(mcp_settings()), ctx, "demo", "picture", {}))
    assert data["content"] == [
        {
            "type": "image",
            "mime_type": "image/png",
            "bytes": 68,
            "summary": "[image image/png, 68 bytes, not shown]",
        }
    ]


async def test_unknown_tool_and_bad_arguments_are_refused_before_calling(
    mcp_registry, mcp_settings, ctx
) -> None:
    reg = mcp_registry(mcp_settings())
    kind, message = err(await call(reg, ctx, "demo", "no_such_tool", {}))
    assert kind == "invalid_arguments" and "has no tool 'no_such_tool'" in message and "'echo'" in message
    env = await call(reg, ctx, "demo", "add", {"a": "two"})
    kind, message = err(env)
    assert kind == "invalid_arguments"
    paths = sorted(e["path"] for e in env["error"]["errors"])
    assert paths == ["/arguments/a", "/arguments/b"]  # a wrong type, b missing (the core's pointers)
    assert ok(await call(reg, ctx, "demo", "add", {"a": 1, "b": 1}))["text"] == "2"  # still fine


async def test_unknown_server_is_invalid(mcp_registry, mcp_settings, ctx) -> None:
    kind, message = err(await call(mcp_registry(mcp_settings()), ctx, "nope", "echo", {}))
    assert kind == "invalid_arguments" and "no MCP server named 'nope'" in message


@pytest.mark.parametrize(
    "args", [{"server": "demo"}, {"server": 1, "tool": "x"}, {"server": "demo", "tool": "x", "arguments": []}]
)
async def test_malformed_call_arguments_are_rejected_by_schema(mcp_registry, mcp_settings, ctx, args) -> None:
    assert (
        err(await dispatch_tool(mcp_registry(mcp_settings()), "call_mcp_tool", args, ctx))[0]
        == "invalid_arguments"
    )


async def test_per_agent_server_allowlist(mcp_registry, mcp_settings, server_script) -> None:
    cmd = {"command": sys.executable, "args": [str(server_script)]}
    s = mcp_settings({"demo": cmd, "other": cmd}, agent_servers={"researcher": ["demo"], "*": ["other"]})
    reg = mcp_registry(s)
    researcher = ToolContext(surface="router", agent="researcher")
    listed = ok(await dispatch_tool(reg, "list_mcp_servers", {}, researcher))["servers"]
    assert [x["name"] for x in listed] == ["demo"]
    kind, message = err(await call(reg, researcher, "other", "echo", {"text": "x"}))
    assert kind == "denied" and "may not use MCP server 'other'" in message
    guest = ToolContext(surface="router", agent="guest")
    assert [x["name"] for x in ok(await dispatch_tool(reg, "list_mcp_servers", {}, guest))["servers"]] == [
        "other"
    ]
    nobody = mcp_registry(mcp_settings({"demo": cmd}, agent_servers={"researcher": ["demo"]}))
    kind, message = err(await dispatch_tool(nobody, "list_mcp_servers", {}, guest))
    assert kind == "gate_refused" and "may use no MCP server" in message


UNCONFINED_DEMO = {"demo": {"command": sys.executable, "args": [str(SERVER)], "sandbox": "off"}}
# The tests that compare server pids run the server unconfined: in the sandbox's PID namespace
# every server is pid 2, and the host cannot see it by that pid.


async def test_server_crash_mid_call_then_next_call_reconnects(
    mcp_registry, mcp_settings, ctx, operator_log
) -> None:
    reg = mcp_registry(mcp_settings(UNCONFINED_DEMO))
    first_pid = ok(await call(reg, ctx, "demo", "whoami", {}))["text"].split()[-1]
    kind, message = err(await call(reg, ctx, "demo", "crash", {}))
    assert kind == "execution_error" and "was lost" in message and "operator's log" in message
    assert "crashing now" not in message and "crashing now" in operator_log.text()  # its stderr
    second_pid = ok(await call(reg, ctx, "demo", "whoami", {}))["text"].split()[-1]
    assert second_pid != first_pid


async def test_hanging_server_times_out_and_is_restarted(mcp_registry, mcp_settings, ctx) -> None:
    reg = mcp_registry(mcp_settings(UNCONFINED_DEMO, call_timeout_s=1.5))
    first_pid = ok(await call(reg, ctx, "demo", "whoami", {}))["text"].split()[-1]
    kind, message = err(await call(reg, ctx, "demo", "hang", {}))
    assert kind == "timeout" and "within 1.5 s" in message
    assert ok(await call(reg, ctx, "demo", "whoami", {}))["text"].split()[-1] != first_pid


async def test_server_that_changes_its_tools_between_listings(mcp_registry, mcp_settings, ctx) -> None:
    reg = mcp_registry(mcp_settings())
    before = {
        t["name"]: t for t in ok(await dispatch_tool(reg, "list_mcp_tools", {"server": "demo"}, ctx))["tools"]
    }
    assert ok(await call(reg, ctx, "demo", "mutate", {}))["text"] == "mutated"
    after = {
        t["name"]: t for t in ok(await dispatch_tool(reg, "list_mcp_tools", {"server": "demo"}, ctx))["tools"]
    }
    assert (
        "attacker.example" in after["echo"]["description"] and "attacker" not in before["echo"]["description"]
    )
    assert "loud" in after["echo"]["input_schema"]["properties"]
    assert ok(await call(reg, ctx, "demo", "echo", {"text": "x", "loud": True}))["text"] == "X"


async def test_env_expansion_reaches_the_server(
    mcp_registry, mcp_settings, ctx, server_script, monkeypatch
) -> None:
    monkeypatch.setenv("REYN_TEST_TOKEN", "tok-1")
    s = mcp_settings(demo_server(server_script, env={"DEMO_TOKEN": "pre-${REYN_TEST_TOKEN}-$${literal}"}))
    assert ok(await call(mcp_registry(s), ctx, "demo", "whoami", {}))["text"].startswith(
        "pre-tok-1-${literal} "
    )


async def test_server_that_cannot_start_is_an_error_and_others_keep_working(
    mcp_registry, mcp_settings, ctx, server_script
) -> None:
    s = mcp_settings(
        {
            "broken": {"command": sys.executable, "args": ["-c", "import sys; sys.exit('no way')"]},
            "missing": {"command": "/nonexistent/reyn-mcp-server"},
            "demo": {"command": sys.executable, "args": [str(server_script)]},
        }
    )
    reg = mcp_registry(s)
    kind, message = err(await dispatch_tool(reg, "list_mcp_tools", {"server": "broken"}, ctx))
    assert kind == "execution_error" and "'broken'" in message
    kind, message = err(await dispatch_tool(reg, "list_mcp_tools", {"server": "missing"}, ctx))
    assert kind == "execution_error" and "cannot open MCP server 'missing'" in message
    assert ok(await call(reg, ctx, "demo", "echo", {"text": "alive"}))["text"] == "alive"


async def test_shutdown_stops_the_server_process(mcp_registry, mcp_settings, ctx) -> None:
    from reyn_tools_mcp import pool

    reg = mcp_registry(mcp_settings(UNCONFINED_DEMO))
    pid = int(ok(await call(reg, ctx, "demo", "whoami", {}))["text"].split()[-1])
    pool.shutdown()
    with pytest.raises(ProcessLookupError):
        for _ in range(100):
            os.kill(pid, 0)
            import time

            time.sleep(0.05)


async def test_streamable_http_server(mcp_registry, mcp_settings, ctx, http_mcp_server) -> None:
    s = mcp_settings({"remote": {"url": http_mcp_server, "headers": {"X-Test": "1"}}})
    reg = mcp_registry(s)
    names = [
        t["name"] for t in ok(await dispatch_tool(reg, "list_mcp_tools", {"server": "remote"}, ctx))["tools"]
    ]
    assert "echo" in names
    assert ok(await call(reg, ctx, "remote", "add", {"a": 20, "b": 22}))["structured_content"] == {
        "result": 42
    }
    assert ok(await call(reg, ctx, "remote", "whoami", {}))["text"].startswith("over-http ")
    listed = ok(await dispatch_tool(reg, "list_mcp_servers", {}, ctx))["servers"]
    assert listed[0]["transport"] == "http" and listed[0]["source"] == http_mcp_server


async def test_text_that_utf8_cannot_carry_fails_that_call_alone(mcp_registry, mcp_settings, ctx) -> None:
    # a lone surrogate (what JSON's "\ud800" decodes to) cannot be written to the server: the SDK's
    # writer raised while serialising and the whole connection was lost; now the call's arguments
    # are refused by the dispatcher (every tool's, this one's nested too) before the handler runs,
    # naming where, and the session lives on (control: the same echo, valid text)
    reg = mcp_registry(mcp_settings())
    assert ok(await call(reg, ctx, "demo", "echo", {"text": "hi"}))["text"] == "hi"
    env = await call(reg, ctx, "demo", "echo", {"text": "a\ud800b"})
    kind, message = err(env)
    assert kind == "invalid_arguments" and "/arguments/text: holds text UTF-8 cannot carry" in message
    assert [e["path"] for e in env["error"]["errors"]] == ["/arguments/text"]
    assert ok(await call(reg, ctx, "demo", "echo", {"text": "still here"}))["text"] == "still here"
    servers = ok(await dispatch_tool(reg, "list_mcp_servers", {}, ctx))["servers"]
    assert servers[0]["connected"] is True
