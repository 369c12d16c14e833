"""The tools/list snapshot behind import mode: a JSON file written by ``reyn mcp refresh``.

Import mode must name a server's tools while the registry is built, and loading must never spawn a
server or open a connection. So the tools are rendered from a snapshot of each server's
``tools/list``, refreshed on demand. Every entry keeps the whole tool object the server served
(``served``: every field it sent — annotations, ``outputSchema``, ``_meta``, fields no version of
the protocol knows yet) and ``sha256`` of its canonical JSON (``served_sha256``, the one pin); a
call through an imported tool compares that with the server's live listing and refuses a tool that
changed in any field (the "rug pull"). What is rendered (name, description, input schema) is read
from ``served``, so the pin covers exactly what a model is shown and more. Imports only the core.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from reyn_core import canonical_json
from reyn_core.host import atomic_write_bytes, parse_own_json

SNAPSHOT_VERSION = 1


class SnapshotError(Exception):
    """The snapshot file exists but cannot be used; the message names the file and the fix."""


def served_sha256(served: Mapping[str, Any]) -> str:
    """The pin of an upstream tool: ``sha256:`` over the canonical JSON (``reyn_core.canonical_json``)
    of the whole tool object as the server sent it — no list of fields, so a field added later is
    covered too. The single place the pin is defined (it may become the core's definition digest)."""
    return "sha256:" + hashlib.sha256(canonical_json(served).encode("utf-8", "surrogatepass")).hexdigest()


def tool_sha256(entry: Mapping[str, Any]) -> str:
    """The pin of a snapshot entry: ``served_sha256`` of what it recorded as served. An entry written
    before whole tools were recorded has no ``served``; its own fields are hashed, which never
    equals a live tool's pin, so its calls are refused until ``reyn mcp refresh`` (fail closed)."""
    served = entry.get("served")
    if isinstance(served, Mapping):
        return served_sha256(served)
    return served_sha256({k: v for k, v in entry.items() if k != "sha256"})


def read_snapshot(path: str | os.PathLike[str]) -> dict[str, Any]:
    """``{"version": 1, "servers": {name: {"source", "tools": [...]}}}``; empty when absent. A file
    that cannot be read raises ``SnapshotError``: it holds the pins, so nothing replaces it blind."""
    p = Path(path)
    if not p.exists():
        return {"version": SNAPSHOT_VERSION, "servers": {}}
    try:
        data = parse_own_json(p.read_text(encoding="utf-8"))  # written by write_snapshot
    except (OSError, ValueError) as exc:
        raise SnapshotError(f"MCP tools snapshot {p} is unreadable ({exc}); {_KEPT}") from None
    if not isinstance(data, dict) or data.get("version") != SNAPSHOT_VERSION:
        found = data.get("version") if isinstance(data, dict) else None
        raise SnapshotError(
            f"MCP tools snapshot {p} has format version {found!r}, and this reyn-tools-mcp reads "
            f"version {SNAPSHOT_VERSION} only (a newer reyn-tools-mcp may have written it); {_KEPT}"
        )
    if not isinstance(data.get("servers"), dict):
        raise SnapshotError(f"MCP tools snapshot {p} has no 'servers' object; {_KEPT}")
    return data


_KEPT = (
    "it holds the pinned tools of its servers, so `reyn mcp refresh` does not replace it: restore "
    "it (or use the reyn-tools-mcp that wrote it), or move it aside and run `reyn mcp refresh` to "
    "list every import-mode server anew"
)


def write_snapshot(path: str | os.PathLike[str], data: Mapping[str, Any]) -> None:
    """Write atomically with the core's one writer (a link stays a link, the file keeps its mode)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    atomic_write_bytes(p, text.encode("utf-8"))


def rendered_fields(served: Mapping[str, Any]) -> dict[str, Any]:
    """Name, title, description and input schema of a served tool object (MCP's wire names)."""
    return {
        "name": served.get("name"),
        "title": served.get("title"),
        "description": served.get("description") or "",
        "input_schema": served.get("inputSchema"),
    }


def snapshot_tools(data: Mapping[str, Any], server: str) -> list[dict[str, Any]]:
    """The snapshotted tools of ``server`` (empty when it was never refreshed). An entry's rendered
    fields are taken from its ``served`` object when it has one: the pin covers what is rendered."""
    entry = data.get("servers", {}).get(server)
    tools = entry.get("tools") if isinstance(entry, dict) else None
    out = []
    for t in tools if isinstance(tools, list) else []:
        if isinstance(t, dict) and isinstance(t.get("served"), dict):
            t = {**t, **rendered_fields(t["served"])}
        if isinstance(t, dict) and isinstance(t.get("name"), str):
            out.append(t)
    return out
