"""mcp settings: ${VAR} expansion at load time, transports, names, the per-agent allowlist."""

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
        McpSettings.model_validate({"servers": {"a": {"url": "https://x/mcp",
                                                      "headers": {"Authorization": "Bearer ${REYN_NOT_SET}"}}}})


@pytest.mark.parametrize(("text", "expected"), [
    ("plain", "plain"), ("${A}", "1"), ("x${A}y${B}", "x1y2"), ("$${A}", "${A}"), ("$A", "$A"), ("", ""),
])
def test_expansion(text: str, expected: str) -> None:
    assert expand_env(text, "where", {"A": "1", "B": "2"}) == expected


@pytest.mark.parametrize("bad", ["${}", "${1A}", "${A-B}"])
def test_malformed_reference_is_an_error(bad: str) -> None:
    with pytest.raises(ValueError, match="not a valid"):
        expand_env(bad, "where", {})


@pytest.mark.parametrize(("server", "message"), [
    ({}, "exactly one of"),
    ({"command": "x", "url": "https://x"}, "exactly one of"),
    ({"url": "ftp://x"}, "http:// or https://"),
    ({"url": "https://x", "args": ["a"]}, "stdio servers only"),
    ({"command": "x", "headers": {"A": "b"}}, "HTTP servers only"),
    ({"command": "x", "prefix": "bad prefix"}, "prefix"),
    ({"command": "x", "comand": "typo"}, "Extra inputs"),
])
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
    s = McpSettings.model_validate({"servers": {"a": {"command": "x"}, "b": {"command": "y"}},
                                    "agent_servers": {"alice": ["b"]}})
    assert s.servers_for("alice") == ["b"] and s.servers_for("eve") == [] and s.servers_for(None) == []


def test_diagnostics_for_the_doctor(tmp_path) -> None:
    assert [d["code"] for d in diagnostics({})] == ["RM001"]
    found = diagnostics({"servers": {"a": {"command": "x", "import_tools": True}},
                         "snapshot_file": str(tmp_path / "none.json")})
    assert [d["code"] for d in found] == ["RM002"] and "reyn mcp refresh" in found[0]["message"]
