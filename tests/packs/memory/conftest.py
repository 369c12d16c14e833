"""Fixtures for the memory pack: registries built the way the loader builds them, over a real store of
EVERY backend — a real SQLite file, and a real PostgreSQL server this suite starts itself.

The contract fixtures (``memory``, ``memory_factory``, ``target``, ``target_factory``) are
parametrised by ``backend``, so each contract test runs once per backend from one copy of the test.
The PostgreSQL server is session-scoped (one ``initdb`` per run); each store gets its own schema.
Without server binaries the postgres tests skip locally and FAIL under ``CI=true``.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from reyn_tools_memory import MemorySettings, open_store
from reyn_tools_memory.plugin import reyn_register_tools

from reyn_core import ToolContext, ToolOrigin
from reyn_core.host import RegistryBuilder, ToolRegistry, dispatch_tool

HERE = Path(__file__).parent
WORKER = HERE / "memory_worker.py"
BACKENDS = ("sqlite", "postgres")
_env_names = itertools.count()


def build_registry(settings: MemorySettings) -> ToolRegistry:
    """A frozen registry holding the memory pack's tools, stamped as plugin 'memory'."""
    reg = RegistryBuilder(settings={"memory": settings})
    origin = ToolOrigin(kind="plugin", plugin_id="memory")
    reyn_register_tools(lambda t: reg.register(t, origin=origin), settings)
    return reg.freeze()


# --------------------------------------------------------------------------- the PostgreSQL server


@pytest.fixture(scope="session")
def pg_server(postgres_server: Any) -> Iterator[Any]:
    """The run's PostgreSQL server (tests/conftest.py); the memory pack's pools close first."""
    try:
        yield postgres_server
    finally:
        from reyn_tools_memory.postgres import close_all

        close_all()


@dataclass
class Target:
    """One store of one backend: its settings, the environment that reaches it, and its CLI arguments."""

    backend: str
    workspace: Path
    settings: MemorySettings
    env: dict[str, str] = field(default_factory=dict)

    @property
    def store(self) -> Any:
        """The store itself (a ``MemoryBackend``)."""
        return open_store(self.settings, self.workspace)

    @property
    def cli(self) -> list[str]:
        """``reyn memory`` arguments that select this store."""
        if self.backend == "sqlite":
            return ["--db", str(self.settings.db_path(self.workspace))]
        return ["--postgres", self.settings.dsn_env]

    def subprocess_env(self) -> dict[str, str]:
        """The environment of a child process that uses this store."""
        return {**os.environ, **self.env}

    def settings_json(self) -> str:
        return json.dumps(self.settings.model_dump(exclude_unset=True))


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """Each backend in turn: the contract tests run against both."""
    return str(request.param)


@pytest.fixture
def target_factory(backend: str, request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: Any) -> Any:
    """``target_factory(**settings)``: a new, empty store of the current backend."""
    count = itertools.count()
    server = request.getfixturevalue("pg_server") if backend == "postgres" else None

    def make(**settings: Any) -> Target:
        ws = tmp_path / f"ws{next(count)}"
        ws.mkdir()
        if server is None:
            return Target("sqlite", ws, MemorySettings(path=str(ws / "memory.db"), **settings))
        env_name = f"REYN_TEST_MEMORY_DSN_{next(_env_names)}"
        dsn = server.dsn(schema=server.new_schema())
        monkeypatch.setenv(env_name, dsn)
        s = MemorySettings(backend="postgres", dsn_env=env_name, **settings)
        return Target("postgres", ws, s, {env_name: dsn})

    yield make
    if server is not None:
        from reyn_tools_memory.postgres import close_all

        close_all()  # this test's pools: connections do not pile up over the run


@pytest.fixture
def target(target_factory: Any) -> Target:
    """A new, empty store of the current backend."""
    return target_factory()


# --------------------------------------------------------------------------- calling the tools


class Memory:
    """A registry over one store, and a way to call its tools as a given agent and surface."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self.workspace = target.workspace
        self.settings = target.settings
        self.registry = build_registry(self.settings)

    @property
    def db(self) -> Path:
        """The SQLite file (sqlite backend only)."""
        return self.settings.db_path(self.workspace)

    @property
    def store(self) -> Any:
        return self.target.store

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
def memory(target: Target) -> Memory:
    """The tools over a new store of the current backend."""
    return Memory(target)


@pytest.fixture
def memory_factory(target_factory: Any) -> Any:
    """``memory_factory(**settings)``: a ``Memory`` over a fresh store of the current backend."""
    return lambda **settings: Memory(target_factory(**settings))


@pytest.fixture
def memory_with(tmp_path: Path) -> Iterator[Any]:
    """``memory_with(settings)``: a ``Memory`` over exactly these settings (any backend)."""
    yield lambda settings: Memory(Target(settings.backend, tmp_path, settings))
    if "reyn_tools_memory.postgres" in sys.modules:
        sys.modules["reyn_tools_memory.postgres"].close_all()


@pytest.fixture
def sqlite_memory(tmp_path: Path) -> Memory:
    """The tools over a SQLite store (for what only SQLite has: a file, pragmas)."""
    return Memory(Target("sqlite", tmp_path, MemorySettings(path=str(tmp_path / "memory.db"))))


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
