"""The availability check of an import-mode server's tools: one check per server, shared by all its
tools, so a listing asks it once for them all (``own_check``: tools sharing a check in one ``ctx``
share one ask; the registry asks a plugin's tools in one context object). Before, each imported tool
had a check of its own (and each tool a context of its own): a listing asked once per tool — a thread
hand-off each, and a hung check one ask per tool. A real load of the mcp pack, with the snapshot a
real stdio server's ``tools/list`` wrote; the asks are counted by wrapping the pack's own check
factory (the check itself runs unchanged)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from reyn_tools_mcp import plugin
from reyn_tools_mcp.cli import refresh_snapshot

from reyn_core import ToolContext
from reyn_core.host import Profile, load, render_router

SERVERS = ("one", "two")


@pytest.fixture
async def asked(
    mcp_settings: Callable[..., Any], server_script: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Any, list[str]]:
    """A registry loaded from a profile with two import-mode stdio servers (the demo server twice, its
    snapshot written by ``tools/list``; agent ``a`` may use ``one`` only), and the list each ask of an
    imported tool's check appends its server to."""
    snap = tmp_path / "mcp-tools.json"
    server = {"command": sys.executable, "args": [str(server_script)], "import_tools": True}
    servers = dict.fromkeys(SERVERS, server)
    reports = await refresh_snapshot(mcp_settings(servers, snapshot_file=str(snap)), snap, protected={})
    assert [r["status"] for r in reports] == ["changed", "changed"], reports
    calls: list[str] = []
    made = plugin._agent_may_use

    def counted(server: str) -> Callable[[ToolContext], bool]:
        check = made(server)

        def available(ctx: ToolContext) -> bool:
            calls.append(server)
            return check(ctx)

        return available

    monkeypatch.setattr(plugin, "_agent_may_use", counted)
    monkeypatch.setenv("REYN_CACHE_DIR", str(tmp_path / "cache"))
    declared = "".join(
        f"[plugins.mcp.settings.servers.{s}]\ncommand = {sys.executable!r}\n"
        f"args = [{str(server_script)!r}]\nimport_tools = true\n"
        for s in SERVERS
    )
    result = load(
        Profile.from_toml_text(
            f'[plugins]\nenable = ["mcp"]\n[plugins.mcp.settings]\nsnapshot_file = {str(snap)!r}\n'
            f'agent_servers = {{ a = ["one"], "*" = ["one", "two"] }}\n{declared}'
        )
    )
    return result.registry, calls


def _listed(registry: Any, agent: str | None) -> dict[str, list[str]]:
    rendered = render_router(registry, ToolContext(surface="router", agent=agent))
    names = [t["function"]["name"] for t in rendered]
    return {s: [n for n in names if n.startswith(f"{s}__")] for s in SERVERS}


def test_a_servers_imported_tools_share_one_ask_per_listing(asked: tuple[Any, list[str]]) -> None:
    registry, calls = asked
    listed = _listed(registry, None)
    assert len(listed["one"]) >= 5 and len(listed["two"]) == len(listed["one"])  # echo, add, whoami, ...
    assert sorted(calls) == ["one", "two"]  # one ask per server, not one per tool
    calls.clear()
    _listed(registry, None)  # every listing asks anew: once per server again
    assert sorted(calls) == ["one", "two"]


def test_each_server_still_decides_for_its_own_tools(asked: tuple[Any, list[str]]) -> None:
    """Control: two servers' checks are two checks, each asked and deciding for its own server's
    tools only (so sharing stops at the server)."""
    registry, calls = asked
    listed = _listed(registry, "a")
    assert listed["one"] and listed["two"] == []  # a may use `one` only
    assert set(calls) == set(SERVERS)
    assert _listed(registry, "b") == _listed(registry, None) and all(_listed(registry, "b").values())
