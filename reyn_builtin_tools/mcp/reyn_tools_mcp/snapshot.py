"""The tools/list snapshot behind import mode: a JSON file written by ``reyn mcp refresh``.

Import mode must name a server's tools while the registry is built, and loading must never spawn a
server or open a connection. So the tools are rendered from a snapshot of each server's
``tools/list``, refreshed on demand. Every tool carries ``sha256`` of its canonical definition;
a call through an imported tool compares it with the server's live listing and refuses a tool that
changed (the "rug pull"). Standard library and ``reyn_core.canonical_json`` only.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from reyn_core import canonical_json

SNAPSHOT_VERSION = 1


class SnapshotError(Exception):
    """The snapshot file exists but cannot be used; the message names the file and the fix."""


def tool_sha256(tool: Mapping[str, Any]) -> str:
    """``sha256:`` over the canonical JSON of a tool's name, title, description and input schema."""
    canonical = {
        "name": tool.get("name"),
        "title": tool.get("title"),
        "description": tool.get("description") or "",
        "input_schema": tool.get("input_schema") or {},
    }
    text = canonical_json(canonical)  # the core's one canonical JSON (same bytes as before for JSON data)
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def read_snapshot(path: str | os.PathLike[str]) -> dict[str, Any]:
    """``{"version": 1, "servers": {name: {"source", "tools": [...]}}}``; empty when absent."""
    p = Path(path)
    if not p.exists():
        return {"version": SNAPSHOT_VERSION, "servers": {}}
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SnapshotError(f"MCP tools snapshot {p} is unreadable ({exc}); run `reyn mcp refresh`") from None
    if (
        not isinstance(data, dict)
        or data.get("version") != SNAPSHOT_VERSION
        or not isinstance(data.get("servers"), dict)
    ):
        raise SnapshotError(f"MCP tools snapshot {p} has an unknown format; run `reyn mcp refresh`")
    return data


def write_snapshot(path: str | os.PathLike[str], data: Mapping[str, Any]) -> None:
    """Write atomically (temp file, fsync, replace)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def snapshot_tools(data: Mapping[str, Any], server: str) -> list[dict[str, Any]]:
    """The snapshotted tools of ``server`` (empty when it was never refreshed)."""
    entry = data.get("servers", {}).get(server)
    tools = entry.get("tools") if isinstance(entry, dict) else None
    return (
        [t for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)]
        if isinstance(tools, list)
        else []
    )
