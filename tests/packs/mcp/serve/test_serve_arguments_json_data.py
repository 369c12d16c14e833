"""A client's arguments that are not JSON data never reach a served tool's handler (issue 24, task
H): the SDK parses a request with pydantic's ``from_json``, which reads ``NaN``, ``Infinity``,
``-Infinity`` and ``1e400`` (as Infinity), so a ``tools/call`` holding one arrives as a ``dict``
holding a float that is not finite. The dispatcher refuses it as ``invalid_arguments`` naming the
JSON pointer, and the session serves on. Before, ``probe_number`` got ``nan`` / ``inf``. Positive
controls in the same session: finite numbers, the largest float and ``-0.0`` reach the handler. The
same for a lone surrogate in a string argument, where the SDK keeps one. A real ``reyn mcp serve``
subprocess, over raw stdio pipes and raw HTTP on 127.0.0.1."""

from __future__ import annotations

import json
from typing import Any

import httpx

from .conftest import MODERN, ServeWorld
from .test_serve_http_limits import HEADERS, _session, open_session
from .test_serve_stop import stdio_serve

REFUSED = ["NaN", "Infinity", "-Infinity", "1e400", "-2.5E+999"]
FINITE = {
    "1.5": "1.5",
    "1.7976931348623157e308": "1.7976931348623157e+308",
    "-0.0": "-0.0",
    "5e-324": "5e-324",
}
WORDS = "/x: holds a number JSON cannot carry (NaN or Infinity); send a number or null"


def _call_line(request_id: int, literal: str) -> bytes:
    """A ``tools/call`` of ``probe_number`` with ``x`` written as ``literal``, byte for byte."""
    head = f'{{"jsonrpc": "2.0", "id": {request_id}, "method": "tools/call", '
    return f'{head}"params": {{"name": "probe_number", "arguments": {{"x": {literal}}}}}}}'.encode()


def _text(answer: dict[str, Any]) -> str:
    return "".join(c.get("text", "") for c in answer["result"]["content"])


def _check(answers: dict[int, dict[str, Any]]) -> None:
    for i, literal in enumerate(REFUSED):
        refused = answers[i + 1]
        assert refused["result"]["isError"], (literal, refused)
        assert WORDS in _text(refused) and "invalid arguments for 'probe_number'" in _text(refused), literal
    for i, (literal, got) in enumerate(FINITE.items()):
        served = answers[100 + i]["result"]
        assert not served.get("isError") and served["structuredContent"] == {"got": got}, (literal, served)


async def test_stdio_a_number_json_cannot_carry_is_refused_and_the_session_serves_on(
    serve_world: ServeWorld,
) -> None:
    with stdio_serve(serve_world) as server:
        server.initialize()
        assert server.proc.stdin is not None
        lines = [_call_line(i + 1, literal) for i, literal in enumerate(REFUSED)]
        lines += [_call_line(100 + i, literal) for i, literal in enumerate(FINITE)]
        server.proc.stdin.write(b"\n".join(lines) + b"\n")
        server.proc.stdin.flush()
        answers = server.answers(*range(1, len(REFUSED) + 1), *range(100, 100 + len(FINITE)))
        server.close_stdin()
        assert await server.exit_code() == 0
    _check(answers)


def _answer(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC answer of a POST: its JSON body, or the last ``data:`` event of its stream."""
    assert response.status_code == 200, response.text
    if response.headers["content-type"].startswith("application/json"):
        return response.json()
    events = [line[len("data: ") :] for line in response.text.splitlines() if line.startswith("data: ")]
    return json.loads(events[-1])


async def test_http_a_number_json_cannot_carry_is_refused_and_the_session_serves_on(
    serve_world: ServeWorld,
) -> None:
    with serve_world.http() as server:
        async with httpx.AsyncClient(timeout=60) as http:
            sid = await open_session(http, server.url)
            headers = {**HEADERS, **_session(sid)}
            answers: dict[int, dict[str, Any]] = {}
            for i, literal in enumerate(REFUSED):
                answers[i + 1] = _answer(
                    await http.post(server.url, content=_call_line(i + 1, literal), headers=headers)
                )
            for i, literal in enumerate(FINITE):
                posted = await http.post(server.url, content=_call_line(100 + i, literal), headers=headers)
                answers[100 + i] = _answer(posted)
    _check(answers)


def _modern_call(request_id: int, arguments: str) -> bytes:
    """A 2026-07-28 ``tools/call`` of ``probe_echo`` (no session: its version in ``_meta``)."""
    prefix = '"io.modelcontextprotocol/'
    meta = f'{{{prefix}protocolVersion":"{MODERN}",{prefix}clientCapabilities":{{}}}}'
    params = f'{{"name":"probe_echo","arguments":{arguments},"_meta":{meta}}}'
    return f'{{"jsonrpc":"2.0","id":{request_id},"method":"tools/call","params":{params}}}'.encode()


async def test_http_a_lone_surrogate_in_a_string_argument_never_reaches_the_handler(
    serve_world: ServeWorld,
) -> None:
    # the 2026-07-28 generation parses a body with json.loads, which keeps "\udce9" as a lone
    # surrogate (stdio and the handshake generation's parser refuse it before Reyn sees it); before,
    # probe_echo ran and only its result was refused
    headers = {
        **HEADERS,
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/call",
        "Mcp-Name": "probe_echo",
    }
    with serve_world.http() as server:
        async with httpx.AsyncClient(timeout=60) as http:
            lone = _answer(
                await http.post(server.url, content=_modern_call(1, '{"text":"caf\\udce9"}'), headers=headers)
            )
            fine = _answer(
                await http.post(server.url, content=_modern_call(2, '{"text":"caf\\u00e9"}'), headers=headers)
            )
    assert lone["result"]["isError"], lone
    words = "invalid arguments for 'probe_echo': /text: holds text UTF-8 cannot carry (a lone surrogate)"
    assert words in _text(lone)
    assert not fine["result"].get("isError") and fine["result"]["structuredContent"]["text"] == "café", fine
