"""Fixtures for the memory pack: a registry built the way the loader builds it, over a real SQLite file."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from reyn_tools_memory import MemorySettings
from reyn_tools_memory.plugin import reyn_register_tools

from reyn_core import ToolContext, ToolOrigin, ToolRegistry, dispatch_tool

HERE = Path(__file__).parent
WORKER = HERE / "memory_worker.py"


def build_registry(settings: MemorySettings) -> ToolRegistry:
    """A frozen registry holding the memory pack's tools, stamped as plugin 'memory'."""
    reg = ToolRegistry(settings={"memory": settings})
    origin = ToolOrigin(kind="plugin", plugin_id="memory")
    reyn_register_tools(lambda t: reg.register(t, origin=origin), settings)
    return reg.freeze()


class Memory:
    """A registry over one store file, and a way to call its tools as a given agent and surface."""

    def __init__(self, workspace: Path, **settings: Any) -> None:
        self.workspace = workspace
        self.settings = MemorySettings(path=str(workspace / "memory.db"), **settings)
        self.registry = build_registry(self.settings)

    @property
    def db(self) -> Path:
        return self.settings.db_path(self.workspace)

    def ctx(self, agent: str | None = None, surface: str = "router") -> ToolContext:
        return ToolContext(surface=surface, agent=agent, workspace=self.workspace)  # type: ignore[arg-type]

    def call(
        self,
        name: str,
        args: Any,
        *,
        agent: str | None = None,
        surface: str = "router",
        allowed_ops: Any = ("memory",),
    ) -> dict[str, Any]:
        ops = allowed_ops if surface == "phase" else None
        return asyncio.run(
            dispatch_tool(
                self.registry, name, args, self.ctx(agent, surface), surface=surface, allowed_ops=ops
            )
        )


@pytest.fixture
def memory(tmp_path: Path) -> Memory:
    return Memory(tmp_path)


def entry(slug: str, body: str = "remember this", **over: Any) -> dict[str, Any]:
    """Arguments of a remember_* call."""
    return {
        "slug": slug,
        "name": over.pop("name", slug.title()),
        "description": over.pop("description", "a note"),
        "type": over.pop("type", "project"),
        "body": body,
        **over,
    }


def worker_cmd(*args: str) -> list[str]:
    """argv that runs the worker script in a fresh interpreter of this venv."""
    return [sys.executable, str(WORKER), *args]


@pytest.fixture
def make_entry() -> Any:
    """``make_entry(slug, body=..., **fields)``: arguments of a remember_* call."""
    return entry


@pytest.fixture
def worker() -> Any:
    """``worker(*args)``: argv running memory_worker.py in a fresh interpreter."""
    return worker_cmd


@pytest.fixture
def memory_factory(tmp_path: Path) -> Any:
    """``memory_factory(**settings)``: a ``Memory`` over a fresh store with these settings."""
    count = iter(range(1000))

    def make(**settings: Any) -> Memory:
        ws = tmp_path / f"ws{next(count)}"
        ws.mkdir()
        return Memory(ws, **settings)

    return make
