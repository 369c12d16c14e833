"""A secret reaches a model in no form (issue 21): an MCP server whose environment holds ``${TOK}``
leaks it in every encoding (plain, URL-encoded, JSON-escaped, base64, upper-cased, split across
lines, reversed, hex, rot13, spaced) on stderr or in a JSON-RPC error, then fails. The model sees
Reyn's wording (what failed, which server, where the details are); the operator's log has the raw
text (the positive control that the leak happened); the next call and other servers keep working."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from reyn_core.host import dispatch_tool

from .test_mcp_degraded_servers import sessions

LEAKY = Path(__file__).parent / "servers" / "leaky_server.py"


@pytest.fixture(autouse=True)
def _token(monkeypatch: pytest.MonkeyPatch, secret_forms) -> None:
    monkeypatch.setenv("REYN_TEST_TOK", secret_forms.token)
    monkeypatch.setenv("REYN_TEST_FORMS", secret_forms.json())


def _leaky(mode: str) -> dict:
    env = {"TOK": "${REYN_TEST_TOK}", "LEAK_FORMS": "${REYN_TEST_FORMS}"}
    return {"command": sys.executable, "args": [str(LEAKY), mode], "env": env}


def error(envelope: dict) -> str:
    assert envelope["status"] == "error", envelope
    return json.dumps(envelope, ensure_ascii=False)


async def test_a_server_leaking_on_stderr_and_failing_at_start(
    mcp_registry, mcp_settings, ctx, server_script, operator_log, secret_forms
) -> None:
    settings = mcp_settings(
        {"leaky": _leaky("start"), "demo": {"command": sys.executable, "args": [str(server_script)]}}
    )
    reg = mcp_registry(settings)
    for name, args in [
        ("list_mcp_tools", {"server": "leaky"}),
        ("call_mcp_tool", {"server": "leaky", "tool": "ok"}),
    ]:
        message = error(await dispatch_tool(reg, name, args, ctx))
        secret_forms.assert_absent(message)
        assert "cannot open MCP server 'leaky'" in message and "reyn.remote.mcp, ref " in message
    log = operator_log.text()
    secret_forms.assert_logged(log)
    half = len(secret_forms.token) // 2
    # the operator keeps the raw text, each line after the first begun with "  | " (shown_raw)
    assert f"split: {secret_forms.token[:half]}\n  | {secret_forms.token[half:]}" in log
    other = await dispatch_tool(
        reg, "call_mcp_tool", {"server": "demo", "tool": "echo", "arguments": {"text": "alive"}}, ctx
    )
    assert other["status"] == "ok" and other["data"]["text"] == "alive"


async def test_a_server_leaking_on_stderr_and_dying_mid_call(
    mcp_registry, mcp_settings, ctx, operator_log, secret_forms
) -> None:
    reg = mcp_registry(mcp_settings({"leaky": _leaky("serve")}))
    first = await dispatch_tool(reg, "call_mcp_tool", {"server": "leaky", "tool": "ok"}, ctx)
    assert first["status"] == "ok", first  # positive control: the server works until it leaks
    message = error(await dispatch_tool(reg, "call_mcp_tool", {"server": "leaky", "tool": "crash"}, ctx))
    secret_forms.assert_absent(message)
    assert "was lost during tools/call 'crash'" in message
    secret_forms.assert_logged(operator_log.text())
    again = await dispatch_tool(reg, "call_mcp_tool", {"server": "leaky", "tool": "ok"}, ctx)
    assert again["status"] == "ok" and again["data"]["text"] == "fine"  # reopened


async def test_a_json_rpc_error_carrying_the_secret_keeps_the_session(
    mcp_registry, mcp_settings, ctx, operator_log, secret_forms
) -> None:
    settings = mcp_settings({"leaky": _leaky("serve")})
    reg = mcp_registry(settings)
    message = error(await dispatch_tool(reg, "call_mcp_tool", {"server": "leaky", "tool": "rpc_error"}, ctx))
    secret_forms.assert_absent(message)
    assert "JSON-RPC error -32001" in message
    secret_forms.assert_logged(operator_log.text())
    again = await dispatch_tool(reg, "call_mcp_tool", {"server": "leaky", "tool": "ok"}, ctx)
    assert again["status"] == "ok"
    assert sessions(settings, "leaky") == 1


async def test_an_unreachable_http_server_with_the_secret_in_its_url(
    mcp_registry, mcp_settings, ctx, operator_log, secret_forms
) -> None:
    reg = mcp_registry(mcp_settings({"down": {"url": "http://127.0.0.1:1/mcp?key=${REYN_TEST_TOK}"}}))
    message = error(await dispatch_tool(reg, "list_mcp_tools", {"server": "down"}, ctx))
    secret_forms.assert_absent(message)
    assert "cannot open MCP server 'down' (http://127.0.0.1:1/mcp?key=${REYN_TEST_TOK})" in message


@pytest.mark.parametrize("sandbox", ["required", "off"])
async def test_a_missing_command_named_by_the_secret(
    mcp_registry, mcp_settings, ctx, operator_log, secret_forms, sandbox
) -> None:
    server = {"command": "/nonexistent/${REYN_TEST_TOK}/server", "sandbox": sandbox}
    reg = mcp_registry(mcp_settings({"missing": server}))
    message = error(await dispatch_tool(reg, "list_mcp_tools", {"server": "missing"}, ctx))
    secret_forms.assert_absent(message)
    assert "cannot open MCP server 'missing'" in message
    if sandbox == "off":
        # started directly, the OS error's name is reported, not its text (which quotes the path);
        # in the sandbox the launcher is what starts, and its own stderr line goes to the log
        assert "ENOENT" in message
    assert secret_forms.token in operator_log.text()
