"""Fixtures for the source pack: a plugin distribution installed as a wheel installs it (a site
folder with its dist-info and a real ``RECORD``), and a registry holding the source pack's tools and
that plugin's, stamped with their origins and the digests a load verifies, called through the real
dispatcher."""

from __future__ import annotations

import asyncio
import base64
import hashlib
from importlib.metadata import distribution
from pathlib import Path
from typing import Any

import pytest
from reyn_tools_source import SourceSettings
from reyn_tools_source.plugin import reyn_register_tools

from reyn_core import ToolContext, ToolOrigin, tool
from reyn_core.host import RegistryBuilder, ToolRegistry, dispatch_tool, provenance_for

PLUGIN_DIST = "demo-src-plugin"
PLUGIN_MODULE = "demo_src_plugin"
INFO = "demo_src_plugin-1.0.dist-info"


def _record_line(site: Path, rel: str) -> str:
    data = (site / rel).read_bytes()
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{rel},sha256={digest},{len(data)}"


def install_plugin(site: Path, files: dict[str, str | bytes]) -> None:
    """Lay out ``demo-src-plugin`` in ``site`` as an installer does: its files, then a dist-info
    with METADATA, entry point and a RECORD holding each file's hash."""
    rels = []
    for name, text in files.items():
        path = site / PLUGIN_MODULE / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
        rels.append(f"{PLUGIN_MODULE}/{name}")
    info = site / INFO
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {PLUGIN_DIST}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[reyn.plugins]\ndemo = {PLUGIN_MODULE}.plugin\n")
    rels += [f"{INFO}/METADATA", f"{INFO}/entry_points.txt"]
    (info / "RECORD").write_text(
        "\n".join([*(_record_line(site, r) for r in rels), f"{INFO}/RECORD,,"]) + "\n"
    )


@tool(cluster="demo", purity="read_only")
def demo_echo(text: str) -> str:
    """Echo the text."""
    return text


def load_digest(name: str, plugin_id: str, entry_point: str) -> str:
    """The tree digest a load computes for ``name`` now (what the loader stamps on its tools)."""
    return provenance_for(distribution(name), plugin_id=plugin_id, entry_point=entry_point).tree_digest


class World:
    """The demo plugin installed in ``site`` (on ``sys.path``) and a registry over it."""

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.root = root
        self.site = root / "site"
        self.site.mkdir()
        self.workspace = root / "ws"
        self.workspace.mkdir()
        monkeypatch.syspath_prepend(str(self.site))

    def install(self, files: dict[str, str | bytes] | None = None) -> None:
        install_plugin(
            self.site,
            files
            or {
                "__init__.py": '"""The demo plugin."""\n',
                "plugin.py": "".join(f"LINE_{i} = {i}\n" for i in range(1, 301)),
                "notes.txt": "first\nsecond\n",
            },
        )

    def file(self, rel: str) -> Path:
        return self.site / PLUGIN_MODULE / rel

    def registry(
        self, settings: SourceSettings | None = None, *, demo_digest: str | None = None
    ) -> ToolRegistry:
        """The source pack and the demo plugin, with the digests a load would stamp now (or
        ``demo_digest`` for the demo plugin)."""
        reg = RegistryBuilder(settings={"source": settings} if settings is not None else None)
        src_entry = "reyn_tools_source.plugin"
        src_origin = ToolOrigin(
            kind="plugin",
            plugin_id="source",
            distribution="reyn-tools-source",
            entry_point=src_entry,
            tree_digest=load_digest("reyn-tools-source", "source", src_entry),
        )
        reyn_register_tools(lambda t: reg.register(t, origin=src_origin), settings)
        demo_entry = f"{PLUGIN_MODULE}.plugin"
        demo_origin = ToolOrigin(
            kind="plugin",
            plugin_id="demo",
            distribution=PLUGIN_DIST,
            entry_point=demo_entry,
            tree_digest=demo_digest or load_digest(PLUGIN_DIST, "demo", demo_entry),
        )
        reg.register(demo_echo, origin=demo_origin)
        return reg.freeze()

    def ctx(self, registry: ToolRegistry | None, surface: str = "router", **extras: Any) -> ToolContext:
        all_extras = {"registry": registry, **extras} if registry is not None else extras
        return ToolContext(surface=surface, workspace=self.workspace, extras=all_extras)  # type: ignore[arg-type]

    def call(
        self, registry: ToolRegistry, name: str, args: dict[str, Any], *, surface: str = "router", **kw: Any
    ) -> dict[str, Any]:
        ctx = kw.pop("ctx", None) or self.ctx(registry, surface)
        return asyncio.run(dispatch_tool(registry, name, args, ctx, surface=surface, **kw))


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    w = World(tmp_path, monkeypatch)
    w.install()
    return w


@pytest.fixture
def bare_world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    """A world whose test installs the demo plugin with its own files."""
    return World(tmp_path, monkeypatch)
