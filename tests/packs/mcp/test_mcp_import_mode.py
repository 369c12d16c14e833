"""Import mode: server tools as registry tools from a tools/list snapshot, and the rug pull."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from reyn_tools_mcp import plugin
from reyn_tools_mcp.cli import refresh_snapshot
from reyn_tools_mcp.settings import McpSettings
from reyn_tools_mcp.snapshot import read_snapshot

from reyn_core import ToolContext
from reyn_core.cli import main as reyn_main
from reyn_core.host import dispatch_tool, render_router


def import_settings(mcp_settings, server_script, snapshot, **server_extra):
    return mcp_settings(
        {
            "demo": {
                "command": sys.executable,
                "args": [str(server_script)],
                "import_tools": True,
                **server_extra,
            }
        },
        snapshot_file=str(snapshot),
    )


ECHO = {"name": "echo", "description": "Echo.", "input_schema": {"type": "object"}}


def write_snapshot(path: Path, *tools: dict) -> Path:
    """A ``tools/list`` snapshot (format version 1) holding ``tools`` for server ``demo``."""
    path.write_text(json.dumps({"version": 1, "servers": {"demo": {"tools": list(tools)}}}))
    return path


async def test_refresh_writes_a_snapshot_and_tools_are_registered(
    mcp_registry, mcp_settings, ctx, server_script, tmp_path
) -> None:
    snap = tmp_path / "mcp-tools.json"
    s = import_settings(mcp_settings, server_script, snap)
    assert [d.name for d in plugin.imported_definitions(s, read_snapshot(snap))] == []  # nothing yet
    reports = await refresh_snapshot(s, snap, protected={})
    assert reports[0]["status"] == "changed" and reports[0]["new"] and "echo" in reports[0]["added"]
    data = json.loads(snap.read_text())
    assert data["servers"]["demo"]["source"] == f"{sys.executable} {server_script}"
    reg = mcp_registry(s)
    names = [t["function"]["name"] for t in render_router(reg, ctx)]
    assert {"demo__add", "demo__echo", "demo__whoami", "call_mcp_tool"} <= set(names)
    add = reg.get("demo__add")
    assert add.cluster == "mcp" and add.description == "Add two integers."
    env = await dispatch_tool(reg, "demo__add", {"a": 1, "b": 2}, ctx)
    assert env["status"] == "ok" and env["data"]["structured_content"] == {"result": 3}
    bad = await dispatch_tool(reg, "demo__add", {"a": "x", "b": 2}, ctx)
    assert bad["error"]["kind"] == "invalid_arguments"  # the registry validates with the snapshot schema


def test_imported_definitions_carry_an_mcp_origin(mcp_settings, server_script, tmp_path) -> None:
    snap = write_snapshot(
        tmp_path / "s.json",
        {
            "name": "get.thing",
            "description": "",
            "input_schema": {"properties": {"kind": {"type": "string"}}},
        },
    )
    s = import_settings(mcp_settings, server_script, snap, prefix="d")
    (d,) = plugin.imported_definitions(s, read_snapshot(snap))
    assert d.name == "d__get_thing"
    assert d.gates.phase == "deny"  # a `kind` argument cannot be a phase op
    assert d.parameters["type"] == "object"
    assert d.origin.kind == "mcp" and d.origin.source_kind == "mcp-stdio"
    assert d.origin.source_url == f"{sys.executable} {server_script}" and len(d.origin.artifact_sha256) == 64
    assert "MCP server 'demo'" in d.description


def test_rendering_imported_tools_spawns_no_server(
    mcp_registry, mcp_settings, ctx, server_script, tmp_path
) -> None:
    from reyn_tools_mcp import pool

    snap = write_snapshot(tmp_path / "s.json", ECHO)
    pool.shutdown()
    render_router(mcp_registry(import_settings(mcp_settings, server_script, snap)), ctx)
    assert pool.existing_pool() is None


async def test_the_agent_allowlist_covers_imported_tools(
    mcp_registry, mcp_settings, server_script, tmp_path
) -> None:
    from reyn_tools_mcp import pool

    snap = tmp_path / "s.json"
    s = mcp_settings(
        {
            "demo": {"command": sys.executable, "args": [str(server_script)], "import_tools": True},
            "other": {"command": sys.executable, "args": [str(server_script)]},
        },
        snapshot_file=str(snap),
        agent_servers={"alice": ["demo"], "bob": ["other"]},
    )
    await refresh_snapshot(s, snap, protected={})
    reg = mcp_registry(s)
    pool.shutdown()
    for agent in ("bob", None):  # listed without demo; no agent at all (fails closed)
        ctx = ToolContext(surface="router", agent=agent)
        assert "demo__echo" not in [t["function"]["name"] for t in render_router(reg, ctx)]
        env = await dispatch_tool(reg, "demo__echo", {"text": "hi"}, ctx)
        assert env["error"]["kind"] == "gate_refused", env
        assert "may not use MCP server 'demo'" in env["error"]["message"]
    assert pool.existing_pool() is None  # refused before any server process was started
    alice = ToolContext(surface="router", agent="alice")
    assert (await dispatch_tool(reg, "demo__echo", {"text": "hi"}, alice))["data"]["text"] == "hi"


async def test_rug_pull_is_refused_at_call_time_and_found_by_check(
    mcp_registry, mcp_settings, ctx, server_script, tmp_path, capsys
) -> None:
    snap = tmp_path / "mcp-tools.json"
    s = import_settings(mcp_settings, server_script, snap)
    await refresh_snapshot(s, snap, protected={})
    reg = mcp_registry(s)
    assert (await dispatch_tool(reg, "demo__echo", {"text": "a"}, ctx))["status"] == "ok"
    await dispatch_tool(reg, "call_mcp_tool", {"server": "demo", "tool": "mutate", "arguments": {}}, ctx)
    env = await dispatch_tool(reg, "demo__echo", {"text": "a"}, ctx)
    assert env["error"]["kind"] == "denied"
    assert "changed tool 'echo' since it was imported" in env["error"]["message"]
    assert (await dispatch_tool(reg, "demo__add", {"a": 1, "b": 1}, ctx))[
        "status"
    ] == "ok"  # unchanged tools work
    reports = await refresh_snapshot(s, snap, protected={}, write=False)
    assert reports[0]["changed"] == ["echo"] and reports[0]["status"] == "changed"


def test_cli_check_exits_1_on_drift_and_refresh_writes(server_script, tmp_path, capsys) -> None:
    snap = tmp_path / "snap.json"
    profile = tmp_path / "reyn.toml"

    def write_profile(mutated: bool) -> None:
        env = '\nenv = { DEMO_MUTATED = "1" }' if mutated else ""
        profile.write_text(
            f'[features]\nplugins = true\n[plugins]\nenable = ["mcp"]\n'
            f"[plugins.mcp.settings]\nsnapshot_file = {json.dumps(str(snap))}\n"
            f"[plugins.mcp.settings.servers.demo]\ncommand = {json.dumps(sys.executable)}\n"
            f"args = [{json.dumps(str(server_script))}]\nimport_tools = true{env}\n"
        )

    write_profile(False)
    assert reyn_main(["mcp", "refresh", "--profile-file", str(profile)]) == 0
    assert "demo: changed" in capsys.readouterr().out and snap.exists()
    write_profile(True)  # (an unchanged server passing `check` is covered by test_install_alone.py)
    assert reyn_main(["mcp", "check", "--profile-file", str(profile), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["servers"][0]["changed"] == ["echo"]
    assert reyn_main(["mcp", "list", "--profile-file", str(profile), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["name"] == "demo"


def test_corrupt_snapshot_keeps_the_core_tools(
    mcp_registry, mcp_settings, ctx, server_script, tmp_path
) -> None:
    snap = tmp_path / "s.json"
    snap.write_text("{not json")
    reg = mcp_registry(import_settings(mcp_settings, server_script, snap))
    assert [t.name for t in reg.tools()] == ["call_mcp_tool", "list_mcp_servers", "list_mcp_tools"]
    from reyn_tools_mcp import diagnostics

    assert "unreadable" in diagnostics(import_settings(mcp_settings, server_script, snap))[0]["message"]


def test_lazy_imports_rendering_never_imports_mcp(server_script, tmp_path) -> None:
    snap = write_snapshot(tmp_path / "s.json", ECHO)
    script = f"""
import json, sys
from pathlib import Path
from reyn_core import ToolContext, ToolOrigin
from reyn_core.host import RegistryBuilder, ToolRegistry, render_phase, render_router
from reyn_tools_mcp import plugin
from reyn_tools_mcp.settings import McpSettings
s = McpSettings.model_validate({{"servers": {{"demo": {{"command": "x", "import_tools": True}}}},
                                 "snapshot_file": {str(snap)!r}}})
reg = RegistryBuilder(settings={{"mcp": s}})
origin = ToolOrigin(kind="plugin", plugin_id="mcp")
plugin.reyn_register_tools(lambda t: reg.register(t, origin=origin), s, Path.cwd())
reg = reg.freeze()
ctx = ToolContext(surface="router")
names = [t["function"]["name"] for t in render_router(reg, ctx)]
render_phase(reg, ctx.with_surface("phase"), ["mcp"]).prompt_text()
heavy = sorted(m for m in ("mcp", "mcp_types", "httpx", "httpx2") if m in sys.modules)
print(json.dumps({{"names": names, "heavy": heavy}}))
"""
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["names"] == ["call_mcp_tool", "demo__echo", "list_mcp_servers", "list_mcp_tools"]
    assert result["heavy"] == []


def test_the_loader_keeps_the_mcp_origin_but_stamps_the_verified_plugin_identity(
    server_script, tmp_path, monkeypatch
) -> None:
    from reyn_core.host import Profile, load

    snap = write_snapshot(tmp_path / "s.json", ECHO)
    monkeypatch.setenv("REYN_CACHE_DIR", str(tmp_path / "cache"))
    profile = Profile.from_toml_text(f"""
[plugins]
enable = ["mcp"]
[plugins.mcp.settings]
snapshot_file = {str(snap)!r}
[plugins.mcp.settings.servers.demo]
command = {sys.executable!r}
args = [{str(server_script)!r}]
import_tools = true
""")
    result = load(profile)
    imported = result.registry.get("demo__echo").origin
    builtin = result.registry.get("call_mcp_tool").origin
    assert imported.kind == "mcp" and imported.source_kind == "mcp-stdio"
    assert imported.source_url == f"{sys.executable} {server_script}" and len(imported.artifact_sha256) == 64
    # identity and digest come from the verified distribution, never from the definition
    assert imported.plugin_id == "mcp" and imported.distribution == "reyn-tools-mcp"
    assert imported.tree_digest == builtin.tree_digest and builtin.kind == "plugin"


def test_snapshot_path_resolves_against_the_workspace(mcp_settings, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert mcp_settings({}).snapshot_path(tmp_path) == tmp_path / ".reyn" / "mcp-tools.json"
    assert mcp_settings({}, snapshot_file="/abs/s.json").snapshot_path(tmp_path) == Path("/abs/s.json")
    assert mcp_settings({}, snapshot_file="~/s.json").snapshot_path(tmp_path) == tmp_path / "home" / "s.json"


def test_refresh_with_workspace_writes_where_loading_in_that_workspace_reads(
    mcp_registry, server_script, tmp_path, monkeypatch, capsys
) -> None:
    ws = tmp_path / "ws"
    elsewhere = tmp_path / "elsewhere"
    ws.mkdir()
    elsewhere.mkdir()
    profile = ws / "reyn.toml"
    profile.write_text(
        f'[plugins]\nenable = ["mcp"]\n[plugins.mcp.settings.servers.demo]\n'
        f"command = {json.dumps(sys.executable)}\nargs = [{json.dumps(str(server_script))}]\n"
        "import_tools = true\n"
        # the server runs in the sandbox with its cwd (elsewhere) as read root: grant its script too
        f"read_roots = ['.', {json.dumps(str(server_script.parent))}]\n"
    )
    elsewhere.chmod(0o755)  # under root the sandbox's unprivileged user must read its cwd
    monkeypatch.chdir(elsewhere)
    assert reyn_main(["mcp", "refresh", "--profile-file", str(profile), "--workspace", str(ws)]) == 0
    assert (ws / ".reyn" / "mcp-tools.json").exists() and not (elsewhere / ".reyn").exists()
    s = McpSettings.model_validate(
        {"servers": {"demo": {"command": sys.executable, "args": [str(server_script)], "import_tools": True}}}
    )
    assert "demo__echo" not in [t.name for t in mcp_registry(s).tools()]  # loading in another directory
    monkeypatch.chdir(ws)
    assert "demo__echo" in [t.name for t in mcp_registry(s).tools()]
    assert reyn_main(["mcp", "check", "--profile-file", str(profile)]) == 0
    assert "demo: unchanged" in capsys.readouterr().out
