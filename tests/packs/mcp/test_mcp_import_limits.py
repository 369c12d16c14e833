"""Import mode re-sends an upstream server's descriptions to the model on every turn: each is cut to
a budget with a marker the model can read, and the core refuses any description past its own limit
(RT010) — so one server's listing cannot flood every prompt."""

from __future__ import annotations

import json

import pytest
from reyn_tools_mcp import plugin
from reyn_tools_mcp.snapshot import read_snapshot

from reyn_core import ToolDefinition, ToolRegistrationError
from reyn_core.host import RegistryBuilder

from .test_mcp_import_mode import import_settings


def _snapshot(tmp_path, tools):
    snap = tmp_path / "s.json"
    snap.write_text(json.dumps({"version": 1, "servers": {"demo": {"tools": tools}}}))
    return snap


def test_a_huge_upstream_description_is_cut_with_a_readable_marker(mcp_settings, server_script, tmp_path):
    huge = "Fetch things. " + "x" * 50_000
    snap = _snapshot(tmp_path, [{"name": "fetch", "description": huge, "input_schema": {"type": "object"}}])
    s = import_settings(mcp_settings, server_script, snap, prefix="d")
    (d,) = plugin.imported_definitions(s, read_snapshot(snap))
    assert len(d.description) < plugin.IMPORTED_DESCRIPTION_CHARS + 100
    assert d.description.startswith("Fetch things. ")
    assert d.description.endswith(
        f"[... {len(huge) - plugin.IMPORTED_DESCRIPTION_CHARS} more characters cut: description limit]"
    )
    RegistryBuilder().register(d)  # and it registers


def test_a_thousand_tools_with_long_descriptions_stay_bounded(mcp_settings, server_script, tmp_path):
    tools = [
        {"name": f"t{i}", "description": "y" * 10_000, "input_schema": {"type": "object"}}
        for i in range(1000)
    ]
    snap = _snapshot(tmp_path, tools)
    s = import_settings(mcp_settings, server_script, snap, prefix="d")
    defs = plugin.imported_definitions(s, read_snapshot(snap))
    assert len(defs) == 1000
    assert max(len(d.description) for d in defs) < plugin.IMPORTED_DESCRIPTION_CHARS + 100


def test_the_core_refuses_any_description_past_its_limit():
    too_long = ToolDefinition(
        name="wordy", description="z" * 20_000, parameters={"type": "object", "properties": {}}, handler=len
    )
    with pytest.raises(ToolRegistrationError) as info:
        RegistryBuilder().register(too_long)
    assert info.value.code == "RT010"
    assert "description of 20000 characters; the limit is 16384" in str(info.value)


def test_a_schema_whose_properties_are_not_an_object_is_refused_alone(mcp_settings, server_script, tmp_path):
    # `properties: null` from one upstream tool used to raise in the hook (RI005: the whole pack,
    # its own tools and every other server's, failed to load); now the core refuses that tool alone
    tools = [
        {"name": "nulled", "input_schema": {"type": "object", "properties": None}},
        {"name": "numbered", "input_schema": {"type": "object", "properties": 7}},
        {"name": "kind", "input_schema": {"type": "object", "properties": {"kind": {"type": "string"}}}},
        {"name": "echo", "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}}},
    ]
    s = import_settings(mcp_settings, server_script, _snapshot(tmp_path, tools), prefix="d")
    registered: list[ToolDefinition] = []
    plugin.reyn_register_tools(registered.append, s, tmp_path)
    imported = {d.name: d for d in registered if d.name.startswith("d__")}
    assert {"call_mcp_tool", "d__nulled", "d__numbered", "d__kind", "d__echo"} <= {d.name for d in registered}
    assert imported["d__kind"].gates.phase == "deny" and imported["d__echo"].gates.phase == "allow"
    builder = RegistryBuilder()
    for name in ("d__nulled", "d__numbered"):
        with pytest.raises(ToolRegistrationError):
            builder.register(imported[name])
    builder.register(imported["d__kind"])  # control: the well-formed tools of the same server register
    builder.register(imported["d__echo"])
