"""Fixtures for the surface tests: a registry of host tools and a scripted local model server.

The tools are host tools defined here (ToolRegistry + @tool), so these tests do not depend on the
packs. ``calls`` records every handler execution, so a test can prove a handler never ran.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from registry_kit import frozen_registry

from reyn_core import ToolContext, ToolDenied, ToolGates, tool
from reyn_core.host import ToolRegistry
from reyn_loops import LiteLLMClient
from reyn_loops.testing.scripted_server import ScriptedModelServer, ScriptedReply

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

MODEL = "openai/scripted"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("filterwarnings", "ignore:Item .* is using the `ReadOnly` qualifier:UserWarning")


@dataclass
class Calls:
    """Handler executions, in order: (tool name, arguments)."""

    log: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    running: int = 0
    max_running: int = 0

    def names(self) -> list[str]:
        return [n for n, _ in self.log]


@dataclass
class Tools:
    registry: ToolRegistry
    calls: Calls
    workspace: Path


def build_registry(workspace: Path, calls: Calls, *, search: bool = False) -> ToolRegistry:
    """The surface tests' tools; with ``search``, the search pack's ``find_tools`` too, for deferral."""

    @tool(cluster="notes", purity="read_only")
    async def read_note(name: str) -> str:
        """Read a note from the workspace by file name."""
        calls.log.append(("read_note", {"name": name}))
        calls.running += 1
        calls.max_running = max(calls.max_running, calls.running)
        try:
            await asyncio.sleep(0.05)  # lets parallel calls overlap, so concurrency is observable
            path = (workspace / name).resolve()
            if workspace.resolve() not in path.parents:
                raise ToolDenied(f"{name!r} is outside the workspace")
            return path.read_text()
        finally:
            calls.running -= 1

    @tool(cluster="notes", purity="side_effect")
    def write_note(name: str, text: str) -> dict[str, Any]:
        """Write a note into the workspace (overwrites)."""
        calls.log.append(("write_note", {"name": name, "text": text}))
        (workspace / name).write_text(text)
        return {"written": name, "bytes": len(text.encode())}

    @tool(cluster="math", purity="read_only")
    def add(a: int, b: int) -> int:
        """Add two integers."""
        calls.log.append(("add", {"a": a, "b": b}))
        return a + b

    @tool(cluster="admin", purity="side_effect", gates=ToolGates(router="deny"))
    def wipe(confirm: bool) -> str:
        """Delete everything (phase only, and only when allowed)."""
        calls.log.append(("wipe", {"confirm": confirm}))
        return "wiped"

    @tool(cluster="ask_user", purity="external", gates=ToolGates(router="deny"))
    async def ask_user(question: str, ctx: ToolContext) -> Any:
        """Ask the user a question and wait for the answer."""
        calls.log.append(("ask_user", {"question": question}))
        bridge = ctx.bridge.require("ask_user", tool="ask_user")
        return await bridge(question=question)

    @tool(cluster="agents", purity="external", dispatch_kind="deferred", gates=ToolGates(phase="deny"))
    def delegate(agent: str, task: str) -> dict[str, str]:
        """Hand a task to another agent; the answer arrives later."""
        calls.log.append(("delegate", {"agent": agent, "task": task}))
        return {"ticket": f"T-{agent}", "state": "accepted"}

    @tool(
        cluster="agents",
        purity="external",
        dispatch_kind="deferred",
        gates=ToolGates(phase="deny", plan_mode="deny"),
    )
    def plan(steps: list[str]) -> dict[str, Any]:
        """Make a multi-step plan (hidden in plan mode)."""
        calls.log.append(("plan", {"steps": steps}))
        return {"steps": steps}

    tools: list[Any] = [read_note, write_note, add, wipe, ask_user, delegate, plan]
    if search:
        from reyn_tools_search.tools import find_tools

        tools.append(find_tools)
    return frozen_registry(tools)


@pytest.fixture
def tools(tmp_path: Path) -> Tools:
    calls = Calls()
    (tmp_path / "todo.md").write_text("buy milk\nship reyn\n")
    (tmp_path / "ideas.md").write_text("a registry of tools\n")
    return Tools(build_registry(tmp_path, calls), calls, tmp_path)


@pytest.fixture
def ctx(tools: Tools) -> ToolContext:
    return ToolContext(surface="router", agent="tester", workspace=tools.workspace)


@pytest.fixture
def scripted() -> Iterator[Callable[..., tuple[ScriptedModelServer, LiteLLMClient]]]:
    """Factory: ``server, client = scripted(reply, ...)`` — a started server and a real litellm client."""
    servers: list[ScriptedModelServer] = []

    def factory(
        *script: ScriptedReply | Callable[[dict[str, Any]], ScriptedReply], num_retries: int = 2
    ) -> tuple[ScriptedModelServer, LiteLLMClient]:
        server = ScriptedModelServer(script, lifetime_s=120).start()
        servers.append(server)
        return server, LiteLLMClient(
            api_base=server.base_url, api_key="test-key", num_retries=num_retries, timeout_s=30
        )

    yield factory
    for s in servers:
        s.stop()


NOTES_PROFILE = """
[plugins]
enable = ["loops", "example", "file", "search"]
[plugins.file.settings]
workspace = {ws}
"""


@pytest.fixture
def notes_workspace(tmp_path: Path) -> Callable[[str], Path]:
    """``notes_workspace(more_profile)``: ``tmp_path`` with ``notes.md`` and a ``reyn.toml`` enabling
    the loops, example, file and search plugins on it, followed by ``more_profile``."""

    def make(more_profile: str = "") -> Path:
        profile = NOTES_PROFILE.format(ws=json.dumps(str(tmp_path))) + more_profile
        (tmp_path / "reyn.toml").write_text(profile)
        (tmp_path / "notes.md").write_text("- one\n- two\n")
        return tmp_path

    return make


@pytest.fixture
def reyn_chat(reyn_cli: Callable[..., Any]) -> Callable[..., Any]:
    """``reyn chat`` in a child process against a scripted model server replying ``script``:
    ``proc, requests = reyn_chat(script, *options, cwd=..., stdin=...)``, the requests the server
    received in order."""

    def run(script: list[ScriptedReply], *options: str, **kw: Any) -> tuple[Any, list[Any]]:
        with ScriptedModelServer(script, lifetime_s=300) as server:
            proc = reyn_cli("chat", "--model", MODEL, "--api-base", server.base_url, *options, **kw)
            return proc, list(server.requests)

    return run
