"""mcp settings: ${VAR} checked at load, expanded only for the spawn; transports, names, agent allowlist."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from reyn_tools_mcp import diagnostics
from reyn_tools_mcp.settings import McpSettings, expand_env


def test_missing_variable_is_a_load_error_naming_it(monkeypatch) -> None:
    monkeypatch.delenv("REYN_NOT_SET", raising=False)
    with pytest.raises(ValidationError, match=r"env\.TOKEN: environment variable 'REYN_NOT_SET' is not set"):
        McpSettings.model_validate({"servers": {"a": {"command": "x", "env": {"TOKEN": "${REYN_NOT_SET}"}}}})


def test_missing_variable_in_headers_is_a_load_error(monkeypatch) -> None:
    monkeypatch.delenv("REYN_NOT_SET", raising=False)
    with pytest.raises(ValidationError, match=r"headers\.Authorization"):
        McpSettings.model_validate(
            {
                "servers": {
                    "a": {"url": "https://x/mcp", "headers": {"Authorization": "Bearer ${REYN_NOT_SET}"}}
                }
            }
        )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain", "plain"),
        ("${A}", "1"),
        ("x${A}y${B}", "x1y2"),
        ("$${A}", "${A}"),
        ("$A", "$A"),
        ("", ""),
    ],
)
def test_expansion(text: str, expected: str) -> None:
    assert expand_env(text, "where", {"A": "1", "B": "2"}) == expected


@pytest.mark.parametrize("bad", ["${}", "${1A}", "${A-B}"])
def test_malformed_reference_is_an_error(bad: str) -> None:
    with pytest.raises(ValueError, match="not a valid"):
        expand_env(bad, "where", {})


@pytest.mark.parametrize(
    ("server", "message"),
    [
        ({}, "exactly one of"),
        ({"command": "x", "url": "https://x"}, "exactly one of"),
        ({"url": "ftp://x"}, "http:// or https://"),
        ({"url": "https://x", "args": ["a"]}, "stdio servers only"),
        ({"command": "x", "headers": {"A": "b"}}, "HTTP servers only"),
        ({"command": "x", "prefix": "bad prefix"}, "prefix"),
        ({"command": "x", "comand": "typo"}, "Extra inputs"),
    ],
)
def test_bad_server_tables_are_errors(server: dict, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        McpSettings.model_validate({"servers": {"a": server}})


def test_bad_server_name_and_unknown_agent_server_are_errors() -> None:
    with pytest.raises(ValidationError, match="server name"):
        McpSettings.model_validate({"servers": {"bad name": {"command": "x"}}})
    with pytest.raises(ValidationError, match=r"agent_servers\.bob names unknown servers \['nope'\]"):
        McpSettings.model_validate({"servers": {"a": {"command": "x"}}, "agent_servers": {"bob": ["nope"]}})


def test_servers_for_agents() -> None:
    s = McpSettings.model_validate({"servers": {"a": {"command": "x"}, "b": {"command": "y"}}})
    assert s.servers_for(None) == ["a", "b"]
    s = McpSettings.model_validate(
        {"servers": {"a": {"command": "x"}, "b": {"command": "y"}}, "agent_servers": {"alice": ["b"]}}
    )
    assert s.servers_for("alice") == ["b"] and s.servers_for("eve") == [] and s.servers_for(None) == []


def test_diagnostics_for_the_doctor(tmp_path) -> None:
    assert [d["code"] for d in diagnostics({})] == ["RM001"]
    found = diagnostics(
        {
            "servers": {"a": {"command": "x", "import_tools": True}},
            "snapshot_file": str(tmp_path / "none.json"),
        }
    )
    # then the kernel sandbox of the stdio server (RX001 confined / RX002 unavailable)
    assert found[0]["code"] == "RM002" and "reyn mcp refresh" in found[0]["message"]
    assert [d["code"] for d in found][1:] in (["RX001"], ["RX002"])


@pytest.mark.parametrize(
    ("server", "where"),
    [
        ({"command": "${REYN_NOT_SET}/bin/server"}, "command"),
        ({"command": "x", "cwd": "${REYN_NOT_SET}"}, "cwd"),
        ({"command": "x", "args": ["--t=${REYN_NOT_SET}"]}, r"args\[0\]"),
        ({"url": "${REYN_NOT_SET}"}, "url"),
    ],
)
def test_missing_variable_anywhere_is_a_load_error(monkeypatch, server: dict, where: str) -> None:
    monkeypatch.delenv("REYN_NOT_SET", raising=False)
    with pytest.raises(ValidationError, match=where + r": environment variable 'REYN_NOT_SET' is not set"):
        McpSettings.model_validate({"servers": {"a": server}})


def test_command_and_cwd_are_expanded_for_the_spawn_only(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("REYN_PY_DIR", "/opt/py")
    monkeypatch.setenv("REYN_WORK", str(tmp_path))
    config = McpSettings.model_validate(
        {"servers": {"a": {"command": "${REYN_PY_DIR}/bin/python", "cwd": "${REYN_WORK}/srv"}}}
    ).servers["a"]
    assert config.command == "${REYN_PY_DIR}/bin/python" and config.source() == "${REYN_PY_DIR}/bin/python"
    resolved = config.resolved()
    assert resolved.command == "/opt/py/bin/python" and resolved.cwd == f"{tmp_path}/srv"


def test_url_scheme_is_checked_on_the_expanded_value(monkeypatch) -> None:
    monkeypatch.setenv("REYN_MCP_URL", "ftp://x")
    with pytest.raises(ValidationError, match=r"http:// or https://.*\$\{REYN_MCP_URL\}"):
        McpSettings.model_validate({"servers": {"a": {"url": "${REYN_MCP_URL}"}}})
    monkeypatch.setenv("REYN_MCP_URL", "https://mcp.example/mcp")
    config = McpSettings.model_validate({"servers": {"a": {"url": "${REYN_MCP_URL}"}}}).servers["a"]
    assert config.source() == "${REYN_MCP_URL}" and config.resolved().url == "https://mcp.example/mcp"
