"""Fixtures for the catalog pack: real folders of skill and agent files, and a registry built the way
the loader builds it, called through the real dispatcher."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path
from typing import Any

import pytest
from reyn_tools_catalog import CatalogSettings
from reyn_tools_catalog.plugin import reyn_register_tools

from reyn_core import HostBridge, ToolContext, ToolOrigin
from reyn_core.host import RegistryBuilder, ToolRegistry, dispatch_tool


def build_registry(settings: CatalogSettings | None) -> ToolRegistry:
    """A frozen registry holding the catalog pack's tools, stamped as plugin 'catalog'."""
    reg = RegistryBuilder(settings={"catalog": settings} if settings is not None else None)
    origin = ToolOrigin(kind="plugin", plugin_id="catalog")
    reyn_register_tools(lambda t: reg.register(t, origin=origin), settings)
    return reg.freeze()


class Workspace:
    """A temporary workspace with ``skills/`` and ``agents/`` folders and a registry over them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        (root / "skills").mkdir()
        (root / "agents").mkdir()
        self.settings = CatalogSettings(skill_dirs=["skills"], agent_dirs=["agents"])
        self.registry = build_registry(self.settings)

    def skill(self, folder: str, text: str) -> Path:
        path = self.root / "skills" / folder / "SKILL.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
        return path

    def agent(self, name: str, text: str) -> Path:
        path = self.root / "agents" / f"{name}.md"
        path.write_text(textwrap.dedent(text).lstrip("\n"))
        return path

    def ctx(self, surface: str = "router", bridge: HostBridge | None = None, **kw: Any) -> ToolContext:
        return ToolContext(surface=surface, workspace=self.root, bridge=bridge or HostBridge(), **kw)  # type: ignore[arg-type]

    def call(
        self,
        name: str,
        args: Any,
        *,
        surface: str = "router",
        bridge: HostBridge | None = None,
        allowed_ops: Any = None,
        **kw: Any,
    ) -> dict[str, Any]:
        ctx = self.ctx(surface, bridge, **kw)
        return asyncio.run(
            dispatch_tool(self.registry, name, args, ctx, surface=surface, allowed_ops=allowed_ops)
        )


def simple_skill(name: str, description: str = "Does a thing", extra: str = "", body: str = "Do it.") -> str:
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body}\n"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path)


@pytest.fixture
def skill_text() -> Any:
    """``skill_text(name, description=..., extra=..., body=...)``: the text of a SKILL.md."""
    return simple_skill
