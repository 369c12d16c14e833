"""``reyn mcp serve`` over stdio, spawned from the real ``reyn`` and driven by the SDK's ``Client``:
the list is the router render, every call goes through the dispatcher, errors are ``isError``."""

from __future__ import annotations

import asyncio
import json

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from .conftest import BASE_PROFILE, ServeWorld

PURITY_HINTS = {
    "read_only": (True, False, False),
    "side_effect": (False, True, False),
    "external": (False, False, True),
}


def _text(result: types.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_tools_list_is_the_router_render(serve_world: ServeWorld, mode: str) -> None:
    # a client without elicitation is offered everything but the deferred tools
    rendered = [e for e in serve_world.router_render() if e["function"]["name"] != "probe_deferred"]
    async with Client(serve_world.stdio(), mode=mode) as client:
        listed = (await client.list_tools()).tools
        again = (await client.list_tools()).tools
    assert [t.name for t in listed] == [e["function"]["name"] for e in rendered]
    for tool, entry in zip(listed, rendered, strict=True):
        assert tool.description == entry["function"]["description"]
        # the mcp render target keeps a schema's "$schema"; the router (openai) render drops it
        assert {k: v for k, v in tool.input_schema.items() if k != "$schema"} == entry["function"][
            "parameters"
        ]
        assert tool.title and tool.annotations is not None and tool.annotations.title == tool.title
    assert [t.model_dump() for t in again] == [t.model_dump() for t in listed]  # stable
    names = {t.name for t in listed}
    assert {"read_file", "probe_echo", "probe_raise"} <= names
    assert "shell" not in names and "probe_phase_only" not in names  # phase-only: not on the router
    assert "probe_deferred" not in names  # deferred, and this client declared no elicitation


async def test_annotations_follow_purity(serve_world: ServeWorld) -> None:
    async with Client(serve_world.stdio()) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    expected = {"probe_echo": "read_only", "probe_raise": "side_effect", "probe_slow": "external"}
    for name, purity in expected.items():
        a = tools[name].annotations
        assert (a.read_only_hint, a.destructive_hint, a.open_world_hint) == PURITY_HINTS[purity]
    assert tools["read_file"].annotations.read_only_hint is True


async def test_tools_list_is_the_same_across_runs(serve_world: ServeWorld) -> None:
    dumps = []
    for _ in range(2):
        async with Client(serve_world.stdio()) as client:
            dumps.append(json.dumps([t.model_dump(mode="json") for t in (await client.list_tools()).tools]))
    assert dumps[0] == dumps[1]


async def test_a_successful_call_returns_text_and_structured_content(serve_world: ServeWorld) -> None:
    async with Client(serve_world.stdio("--agent", "scout")) as client:
        result = await client.call_tool("probe_echo", {"text": "héllo"})
        text = await client.call_tool("probe_text", {})
        read = await client.call_tool("read_file", {"path": "notes.txt"})
    assert not result.is_error
    assert result.structured_content == {"text": "héllo", "agent": "scout"}  # --agent reaches the ctx
    assert json.loads(_text(result)) == result.structured_content
    assert not text.is_error and _text(text) == "just text"
    assert text.structured_content == {"result": "just text"}  # `-> str`: typed, wrapped
    assert not read.is_error and "hello from the workspace" in read.structured_content["content"]


async def test_invalid_arguments_are_an_error_result_naming_the_problem(serve_world: ServeWorld) -> None:
    async with Client(serve_world.stdio()) as client:
        missing = await client.call_tool("probe_echo", {})
        extra = await client.call_tool("read_file", {"path": "notes.txt", "pth": 1})
        wrong = await client.call_tool("probe_echo", {"text": 5})
    for result in (missing, extra, wrong):
        assert result.is_error
        assert _text(result).startswith("invalid arguments for ")
    assert "text" in _text(missing) and "pth" in _text(extra)


@pytest.mark.parametrize("name", ["shell", "probe_phase_only"])
async def test_a_phase_only_tool_is_refused_by_the_gate(serve_world: ServeWorld, name: str) -> None:
    async with Client(serve_world.stdio()) as client:
        result = await client.call_tool(name, {"command": "id"} if name == "shell" else {})
    assert result.is_error and "role gate" in _text(result)
    (line,) = [r for r in serve_world.audit_lines() if r["tool"] == name]
    assert line["status"] == "gate_refused"


async def test_an_unknown_tool_is_a_protocol_error(serve_world: ServeWorld) -> None:
    async with Client(serve_world.stdio()) as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool("no_such_tool", {})
        assert caught.value.code == types.INVALID_PARAMS and "no_such_tool" in caught.value.error.message
        assert not (await client.call_tool("probe_text", {})).is_error  # the server keeps serving


async def test_a_handler_that_raises_is_an_error_result_without_traceback(serve_world: ServeWorld) -> None:
    async with Client(serve_world.stdio()) as client:
        result = await client.call_tool("probe_raise", {"detail": "disk on fire"})
    assert result.is_error
    assert _text(result) == "tool 'probe_raise' failed: RuntimeError: disk on fire"
    assert "Traceback" not in _text(result) and ".py" not in _text(result)


async def test_a_timeout_is_the_tools_own(serve_world: ServeWorld) -> None:
    async with Client(serve_world.stdio()) as client:
        result = await client.call_tool("probe_slow", {})
    assert result.is_error and "did not finish within 0.5 s" in _text(result)
    assert [r["status"] for r in serve_world.audit_lines() if r["tool"] == "probe_slow"] == ["timeout"]


async def _until(predicate, what: str, timeout: float = 20) -> None:
    async def poll() -> None:
        while not predicate():
            await asyncio.sleep(0.02)

    try:
        await asyncio.wait_for(poll(), timeout)
    except asyncio.TimeoutError:
        raise AssertionError(f"never happened: {what}") from None


async def test_cancellation_really_stops_the_handler_and_is_audited(serve_world: ServeWorld) -> None:
    markers = serve_world.markers
    async with Client(serve_world.stdio()) as client:
        call = asyncio.ensure_future(client.call_tool("probe_wait", {"tag": "c1"}))
        await _until((markers / "c1.started").exists, "the handler started")
        call.cancel()  # the SDK sends notifications/cancelled for the request
        with pytest.raises(asyncio.CancelledError):
            await call
        await _until((markers / "c1.cancelled").exists, "the handler saw its cancellation")
        assert not (await client.call_tool("probe_text", {})).is_error
    assert not (markers / "c1.finished").exists()
    assert [r["status"] for r in serve_world.audit_lines() if r["tool"] == "probe_wait"] == ["cancelled"]


async def test_one_audit_line_per_call(serve_world: ServeWorld, audit_line_fields: frozenset[str]) -> None:
    async with Client(serve_world.stdio("--agent", "auditor")) as client:
        await client.call_tool("probe_echo", {"text": "a"})
        await client.call_tool("probe_echo", {})
        await client.call_tool("probe_raise", {})
    lines = serve_world.audit_lines()
    assert [(r["tool"], r["status"]) for r in lines] == [
        ("probe_echo", "ok"),
        ("probe_echo", "invalid_arguments"),
        ("probe_raise", "execution_error"),
    ]
    assert {r["agent"] for r in lines} == {"auditor"}
    assert all(r["plugin"] == "serve_probe" and r["digest"].startswith("sha256:") for r in lines)
    assert all(set(r) == audit_line_fields for r in lines)  # the arguments themselves are never logged


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_deferred_tool_is_served_through_elicitation(serve_world: ServeWorld, mode: str) -> None:
    asked: list[str] = []

    async def answer(ctx, params):
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"result": "done by a person"})

    async with Client(serve_world.stdio(), elicitation_callback=answer, mode=mode) as client:
        names = [t.name for t in (await client.list_tools()).tools]
    assert names == [e["function"]["name"] for e in serve_world.router_render()]  # all of it
    async with Client(serve_world.stdio(), elicitation_callback=answer, mode=mode) as client:
        result = await client.call_tool("probe_deferred", {"question": "ship it?"})
    assert "probe_deferred" in names
    assert not result.is_error and result.structured_content == {"result": "done by a person"}
    assert len(asked) == 1 and "ship it?" in asked[0]


async def test_declined_elicitation_is_an_error_result(serve_world: ServeWorld) -> None:
    async def decline(ctx, params):
        return types.ElicitResult(action="decline")

    async with Client(serve_world.stdio(), elicitation_callback=decline) as client:
        result = await client.call_tool("probe_deferred", {"question": "ship it?"})
    assert result.is_error and "did not answer" in _text(result)


async def test_deferred_tool_without_elicitation_is_refused(serve_world: ServeWorld) -> None:
    async with Client(serve_world.stdio()) as client:
        result = await client.call_tool("probe_deferred", {"question": "ship it?"})
    assert result.is_error and "excluded" in _text(result)


async def test_find_tools_never_names_a_tool_this_client_is_refused(serve_world: ServeWorld) -> None:
    """A client without elicitation is refused the deferred tools (``exclude=`` of each call): the
    search pack's ``find_tools`` served to it does not name them either; a client that can answer
    finds them (the positive control)."""
    serve_world.write_profile(BASE_PROFILE.replace('"mcp"]', '"mcp", "search"]'))
    query = {"query": "hand a question to the host", "limit": 20}

    async def answer(ctx, params):
        return types.ElicitResult(action="decline")

    async with Client(serve_world.stdio()) as client:
        assert "find_tools" in {t.name for t in (await client.list_tools()).tools}
        refused = await client.call_tool("probe_deferred", {"question": "ship it?"})
        searched = await client.call_tool("find_tools", query)
    assert refused.is_error and "excluded" in _text(refused)
    assert not searched.is_error
    names = [t["name"] for t in searched.structured_content["tools"]]
    assert names and "probe_deferred" not in names and "probe_deferred" not in _text(searched)
    async with Client(serve_world.stdio(), elicitation_callback=answer) as client:
        searched = await client.call_tool("find_tools", query)
    assert "probe_deferred" in [t["name"] for t in searched.structured_content["tools"]]
