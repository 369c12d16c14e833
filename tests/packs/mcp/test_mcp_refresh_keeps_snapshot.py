"""``reyn mcp refresh`` never erases pins it did not replace: a snapshot it cannot read is left as it
is (with an error saying what to do), and a refresh writes only what it listed, keeping every other
server's entry — a failed run changes nothing. Real servers (``server_script``), real files."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from reyn_tools_mcp.cli import refresh_snapshot
from reyn_tools_mcp.snapshot import SnapshotError

from reyn_core.cli import main as reyn_main

GITHUB = {
    "source": "npx github-mcp",
    "transport": "stdio",
    "tools": [{"name": "create_issue", "served": {"name": "create_issue"}, "sha256": "sha256:0"}],
}


def snapshot(path: Path, version: int = 1) -> bytes:
    """A snapshot pinning server ``github``, written compactly (a rewrite would change its bytes)."""
    path.write_text(json.dumps({"version": version, "servers": {"github": GITHUB}}, separators=(",", ":")))
    return path.read_bytes()


def profile(tmp_path: Path, snap: Path, server_script: Path) -> Path:
    path = tmp_path / "reyn.toml"
    path.write_text(
        f'[plugins]\nenable = ["mcp"]\n[plugins.mcp.settings]\nsnapshot_file = {json.dumps(str(snap))}\n'
        f"[plugins.mcp.settings.servers.demo]\ncommand = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(server_script))}]\nimport_tools = true\n"
    )
    return path


def test_a_snapshot_of_another_format_is_not_replaced_by_a_failed_refresh(server_script, tmp_path, capsys):
    snap = tmp_path / "mcp-tools.json"
    before = snapshot(snap, version=2)
    code = reyn_main(
        [
            "mcp",
            "refresh",
            "--server",
            "nosuch",
            "--profile-file",
            str(profile(tmp_path, snap, server_script)),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "format version 2" in err and "move it aside" in err
    assert snap.read_bytes() == before


@pytest.mark.parametrize("text", ["{not json", '{"version": 1, "servers": []}', "[]"])
async def test_an_unreadable_snapshot_is_not_replaced_even_by_a_refresh_that_lists(
    mcp_settings, server_script, tmp_path, text
):
    snap = tmp_path / "mcp-tools.json"
    snap.write_text(text)
    settings = mcp_settings(
        {"demo": {"command": sys.executable, "args": [str(server_script)], "import_tools": True}},
        snapshot_file=str(snap),
    )
    with pytest.raises(SnapshotError, match="does not replace it"):
        await refresh_snapshot(settings, snap, protected={})
    assert snap.read_text() == text


async def test_a_refresh_where_every_server_failed_writes_nothing(mcp_settings, tmp_path):
    snap = tmp_path / "mcp-tools.json"
    before = snapshot(snap)
    settings = mcp_settings(
        {"broken": {"command": str(tmp_path / "missing-server")}}, snapshot_file=str(snap)
    )
    reports = await refresh_snapshot(settings, snap, protected={}, servers=["broken", "nosuch"])
    assert [r["status"] for r in reports] == ["error", "error"]
    assert snap.read_bytes() == before


async def test_a_refresh_writes_what_it_listed_and_keeps_every_other_server(
    mcp_settings, server_script, tmp_path
):
    snap = tmp_path / "mcp-tools.json"
    snapshot(snap)
    settings = mcp_settings(
        {
            "demo": {"command": sys.executable, "args": [str(server_script)], "import_tools": True},
            "broken": {"command": str(tmp_path / "missing-server")},
        },
        snapshot_file=str(snap),
    )
    reports = await refresh_snapshot(settings, snap, protected={}, servers=["demo", "broken"])
    assert [r["status"] for r in reports] == ["changed", "error"]
    servers = json.loads(snap.read_text())["servers"]
    assert servers["github"] == GITHUB and "echo" in [t["name"] for t in servers["demo"]["tools"]]
    assert "broken" not in servers
