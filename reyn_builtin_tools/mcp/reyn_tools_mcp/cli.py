"""``reyn mcp``: refresh or check the tools/list snapshot behind import mode, list servers.

``reyn mcp refresh`` starts each import-mode server once, lists its tools and writes the snapshot
file that loading renders from (loading itself never spawns a server). ``reyn mcp check`` lists
again without writing and exits 1 when a server's tools differ from the snapshot — a server that
changed a tool's description or schema (the "rug pull") is named with the tools that changed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from reyn_core import command_parser, settings_as

from .settings import McpSettings
from .snapshot import (
    SnapshotError,
    read_snapshot,
    snapshot_tools,
    tool_sha256,
    write_snapshot,
)


def diff_tools(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Tool names added, removed and changed (different definition hash) between two listings."""
    before = {t["name"]: tool_sha256(t) for t in old}
    after = {t["name"]: tool_sha256(t) for t in new}
    return {
        "added": sorted(set(after) - set(before)),
        "removed": sorted(set(before) - set(after)),
        "changed": sorted(n for n in set(before) & set(after) if before[n] != after[n]),
    }


async def list_server_tools(
    settings: McpSettings, server: str, protected: Mapping[str, str]
) -> list[dict[str, Any]]:
    """A fresh tools/list of ``server`` as snapshot entries (with their ``sha256``), sorted by name;
    ``protected``: the host's own files, which the server's write roots may not cover."""
    from . import pool
    from .tools import tool_to_dict

    config = settings.servers[server]
    timeout = config.timeout_s or settings.call_timeout_s
    tools = await pool.get_pool().run(
        lambda conn: conn.list_tools(timeout, refresh=True),
        server,
        config,
        settings.connect_timeout_s,
        protected,
        settings.max_message_bytes,
        settings.max_message_values,
    )
    entries = [tool_to_dict(tools[n]) for n in sorted(tools)]
    for entry in entries:
        entry["sha256"] = tool_sha256(entry)
    return entries


async def refresh_snapshot(
    settings: McpSettings,
    path: Path,
    *,
    protected: Mapping[str, str],
    servers: list[str] | None = None,
    write: bool = True,
) -> list[dict[str, Any]]:
    """List every chosen server (default: those with ``import_tools``) and compare with the snapshot;
    with ``write`` store the new listing. Returns one report per server. ``protected``: the host's
    own files (the load's ``registry.host_files``), which a stdio server's write roots may not cover.

    The snapshot holds the pins of servers this run may not list again, so it is never replaced
    blind: one that cannot be read raises ``SnapshotError`` (refresh as check), and the file is
    written only when a server was listed, with that server's entry changed and every other as it was."""
    data = read_snapshot(path)
    chosen = servers or sorted(n for n, c in settings.servers.items() if c.import_tools)
    reports: list[dict[str, Any]] = []
    for name in chosen:
        if name not in settings.servers:
            reports.append({"server": name, "status": "error", "error": f"no MCP server named {name!r}"})
            continue
        try:
            entries = await list_server_tools(settings, name, protected)
        except Exception as exc:
            reports.append(
                {
                    "server": name,
                    "status": "error",
                    "error": settings.servers[name].redact(f"{type(exc).__name__}: {exc}"),
                }
            )
            continue
        known = name in data["servers"]
        diff = diff_tools(snapshot_tools(data, name), entries)
        changed = not known or any(diff.values())
        reports.append(
            {
                "server": name,
                "status": "changed" if changed else "unchanged",
                "new": not known,
                "tools": len(entries),
                **diff,
            }
        )
        if write:
            config = settings.servers[name]
            data["servers"][name] = {
                "source": config.source(),
                "transport": config.transport,
                "refreshed_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "tools": entries,
            }
    if write and any(r["status"] != "error" for r in reports):
        write_snapshot(path, data)
    return reports


def _loaded_settings(loaded: Any) -> McpSettings:
    """``[plugins.mcp.settings]`` as the load validated them; defaults without a load."""
    return settings_as(loaded.plugin_settings("mcp") if loaded is not None else None, McpSettings)


def _parser() -> argparse.ArgumentParser:
    parser = command_parser(
        "reyn mcp",
        description="MCP servers: import-mode snapshot and listing.",
        option_help={
            "--workspace": "workspace a relative snapshot_file resolves against (default: current directory)"
        },
    )
    parser.add_argument(
        "action",
        choices=["refresh", "check", "list"],
        help="refresh: write the tools snapshot; check: compare without writing (exit 1 on "
        "change); list: show configured servers",
    )
    parser.add_argument(
        "--server", action="append", help="only this server (repeatable; default: import-mode ones)"
    )
    parser.add_argument(
        "--snapshot",
        help="snapshot file (default: plugins.mcp.settings.snapshot_file, relative to the workspace)",
    )
    return parser


def main(argv: list[str], loaded: Any) -> int:
    """Entry point of ``reyn mcp`` with the ``LoadResult`` ``reyn`` handed the command. Exit 0 ok, 1 a
    check found changes or a server failed, 2 usage."""
    args = _parser().parse_args(argv)
    try:
        settings = _loaded_settings(loaded)
    except Exception as exc:
        print(f"reyn mcp: error: cannot read the mcp settings: {exc}", file=sys.stderr)
        return 2
    if args.action == "list":
        rows = [
            {"name": n, "transport": c.transport, "source": c.source(), "import_tools": c.import_tools}
            for n, c in sorted(settings.servers.items())
        ]
        print(
            json.dumps(rows, indent=2)
            if args.json
            else "\n".join(f"{r['name']}\t{r['transport']}\t{r['source']}" for r in rows)
            or "no MCP servers configured"
        )
        return 0
    path = (
        Path(args.snapshot)
        if args.snapshot
        else settings.snapshot_path(Path(args.workspace or ".").resolve())
    )
    from . import pool

    try:
        reports = asyncio.run(
            refresh_snapshot(
                settings,
                path,
                protected=loaded.registry.host_files if loaded is not None else {},
                servers=args.server,
                write=args.action == "refresh",
            )
        )
    except SnapshotError as exc:
        print(f"reyn mcp: error: {exc}", file=sys.stderr)
        return 2
    finally:
        pool.shutdown()
    if args.json:
        print(json.dumps({"snapshot": str(path), "servers": reports}, indent=2))
    else:
        for r in reports:
            if r["status"] == "error":
                print(f"{r['server']}: error: {r['error']}")
                continue
            parts = [f"{k}: {', '.join(r[k])}" for k in ("added", "removed", "changed") if r[k]]
            print(
                f"{r['server']}: {r['status']} ({r['tools']} tools)"
                + (f" — {'; '.join(parts)}" if parts else "")
            )
        if not reports:
            print("no import-mode servers (set import_tools = true on a server, or pass --server NAME)")
    failed = any(r["status"] == "error" for r in reports)
    drift = args.action == "check" and any(r["status"] == "changed" for r in reports)
    return 1 if failed or drift else 0
