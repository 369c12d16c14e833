"""``${VAR}`` values reach the spawned process / the HTTP request, and nothing else: not
list_mcp_servers, not error messages, not the snapshot file, not a tool's origin."""

from __future__ import annotations

import json
import sys

import pytest
from reyn_tools_mcp import plugin
from reyn_tools_mcp.cli import refresh_snapshot
from reyn_tools_mcp.snapshot import read_snapshot

from reyn_core.cli import main as reyn_main
from reyn_core.host import dispatch_tool

SECRET = "s3cr3t-TOKEN-9f81c2"


@pytest.fixture(autouse=True)
def _secret(monkeypatch) -> None:
    monkeypatch.setenv("REYN_TEST_SECRET", SECRET)


def ok(env: dict) -> dict:
    assert env["status"] == "ok", env
    return env["data"]


def error_message(env: dict) -> str:
    assert env["status"] == "error", env
    return env["error"]["message"]


async def test_stdio_secret_in_args_reaches_the_process_only(
    mcp_registry, mcp_settings, ctx, server_script, tmp_path
) -> None:
    snap = tmp_path / "snap.json"
    s = mcp_settings(
        {
            "demo": {
                "command": sys.executable,
                "args": [str(server_script), "--token=${REYN_TEST_SECRET}"],
                "import_tools": True,
            }
        },
        snapshot_file=str(snap),
    )
    reports = await refresh_snapshot(s, snap, protected={})
    assert reports[0]["status"] == "changed"
    text = snap.read_text()
    assert SECRET not in text and "--token=${REYN_TEST_SECRET}" in text
    reg = mcp_registry(s)
    origin = next(
        d for d in plugin.imported_definitions(s, read_snapshot(snap)) if d.name == "demo__echo"
    ).origin
    assert SECRET not in origin.source_url and origin.source_url.endswith("--token=${REYN_TEST_SECRET}")
    listed = ok(await dispatch_tool(reg, "list_mcp_servers", {}, ctx))
    assert SECRET not in json.dumps(listed) and "${REYN_TEST_SECRET}" in listed["servers"][0]["source"]
    # the spawned server did get the expanded value
    argv = ok(await dispatch_tool(reg, "demo__argv", {}, ctx))["structured_content"]
    assert argv == {"result": [f"--token={SECRET}"]}


def test_reyn_mcp_list_shows_the_raw_reference(server_script, tmp_path, capsys) -> None:
    profile = tmp_path / "reyn.toml"
    profile.write_text(
        f'[plugins]\nenable = ["mcp"]\n[plugins.mcp.settings.servers.demo]\n'
        f"command = {json.dumps(sys.executable)}\n"
        f'args = [{json.dumps(str(server_script))}, "--token=${{REYN_TEST_SECRET}}"]\n'
    )
    assert reyn_main(["mcp", "list", "--profile-file", str(profile), "--json"]) == 0
    out = capsys.readouterr().out
    assert SECRET not in out and "${REYN_TEST_SECRET}" in out


async def test_error_messages_never_show_the_secret(
    mcp_registry, mcp_settings, ctx, server_script, tmp_path, operator_log
) -> None:
    # a server that prints its argument to stderr and dies; a command path naming the secret
    s = mcp_settings(
        {
            "leaky": {
                "command": sys.executable,
                "args": [
                    "-c",
                    "import sys; print('got', sys.argv[1], file=sys.stderr); sys.exit(1)",
                    "${REYN_TEST_SECRET}",
                ],
                "import_tools": True,
            },
            "missing": {"command": "/nonexistent/${REYN_TEST_SECRET}/server"},
            "demo": {"command": sys.executable, "args": [str(server_script)]},
        },
        snapshot_file=str(tmp_path / "snap.json"),
    )
    reg = mcp_registry(s)
    leaky = error_message(await dispatch_tool(reg, "list_mcp_tools", {"server": "leaky"}, ctx))
    assert "cannot open MCP server 'leaky'" in leaky and "got ${" not in leaky  # stderr: operator only
    assert SECRET not in leaky and "${REYN_TEST_SECRET}" in leaky  # the source as written
    assert f"got {SECRET}" in operator_log.text()
    missing = error_message(
        await dispatch_tool(reg, "call_mcp_tool", {"server": "missing", "tool": "x"}, ctx)
    )
    assert "cannot open MCP server 'missing'" in missing and SECRET not in missing
    reports = await refresh_snapshot(s, tmp_path / "snap.json", protected={}, servers=["leaky"])
    assert reports[0]["status"] == "error" and SECRET not in json.dumps(reports)
    assert not (tmp_path / "snap.json").exists()  # every server failed: nothing written, nothing leaked
    assert (
        ok(
            await dispatch_tool(
                reg, "call_mcp_tool", {"server": "demo", "tool": "echo", "arguments": {"text": "alive"}}, ctx
            )
        )["text"]
        == "alive"
    )


async def test_http_secret_in_url_and_headers(
    mcp_registry, mcp_settings, ctx, http_mcp_server, tmp_path
) -> None:
    snap = tmp_path / "snap.json"
    headers = {"Authorization": "Bearer ${REYN_TEST_SECRET}"}
    s = mcp_settings(
        {
            "remote": {
                "url": http_mcp_server + "?token=${REYN_TEST_SECRET}",
                "headers": headers,
                "import_tools": True,
            },
            "down": {"url": "http://127.0.0.1:1/mcp?token=${REYN_TEST_SECRET}", "headers": headers},
        },
        snapshot_file=str(snap),
    )
    await refresh_snapshot(s, snap, protected={})
    assert SECRET not in snap.read_text()
    assert (
        read_snapshot(snap)["servers"]["remote"]["source"] == http_mcp_server + "?token=${REYN_TEST_SECRET}"
    )
    reg = mcp_registry(s)
    assert ok(await dispatch_tool(reg, "remote__add", {"a": 1, "b": 2}, ctx))["structured_content"] == {
        "result": 3
    }
    assert all(SECRET not in d.origin.source_url for d in plugin.imported_definitions(s, read_snapshot(snap)))
    listed = ok(await dispatch_tool(reg, "list_mcp_servers", {}, ctx))
    assert SECRET not in json.dumps(listed)
    down = error_message(await dispatch_tool(reg, "list_mcp_tools", {"server": "down"}, ctx))
    assert "cannot open MCP server 'down'" in down and SECRET not in down


def test_redact_replaces_longest_values_first(mcp_settings, monkeypatch) -> None:
    monkeypatch.setenv("REYN_A", "abcd")
    monkeypatch.setenv("REYN_AB", "abcdef")
    monkeypatch.setenv("REYN_SHORT", "x")
    config = mcp_settings(
        {"a": {"command": "run", "args": ["${REYN_A}", "${REYN_AB}", "${REYN_SHORT}"]}}
    ).servers["a"]
    assert config.redact("abcdef abcd x") == "${REYN_AB} ${REYN_A} x"
    assert config.source() == "run ${REYN_A} ${REYN_AB} ${REYN_SHORT}"
    assert config.resolved().args == ["abcd", "abcdef", "x"]
