"""Real MCP servers (mcp SDK, stdio and streamable HTTP) for the mcp pack's tests."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from local_server import free_port, stop, wait_listening

from reyn_core import ToolContext, ToolOrigin
from reyn_core.host import RegistryBuilder, ToolRegistry

SERVER = Path(__file__).parent / "servers" / "demo_server.py"


def _settings(servers: dict[str, Any] | None = None, **extra: Any) -> Any:
    from reyn_tools_mcp.settings import McpSettings

    if servers is None:
        servers = {"demo": {"command": sys.executable, "args": [str(SERVER)]}}
    return McpSettings.model_validate(
        {"servers": servers, "call_timeout_s": 10, "connect_timeout_s": 20, **extra}
    )


def _registry(settings: Any) -> ToolRegistry:
    from reyn_tools_mcp import plugin

    reg = RegistryBuilder(settings={"mcp": settings})
    plugin.reyn_register_tools(
        lambda t: reg.register(t, origin=ToolOrigin(kind="plugin", plugin_id="mcp")), settings, Path.cwd()
    )
    return reg.freeze()


@pytest.fixture
def server_script() -> Path:
    return SERVER


@pytest.fixture
def mcp_settings() -> Callable[..., Any]:
    """Build validated mcp settings (default: one stdio server called ``demo``)."""
    return _settings


@pytest.fixture
def mcp_registry() -> Callable[[Any], ToolRegistry]:
    """A frozen registry of the mcp pack's tools for the given settings."""
    return _registry


@pytest.fixture
def ctx() -> ToolContext:
    return ToolContext(surface="router")


@pytest.fixture(autouse=True)
def _close_sessions() -> Iterator[None]:
    """Every test ends with the process-wide session pool shut down (servers stopped)."""
    yield
    from reyn_tools_mcp import pool

    pool.shutdown()


@pytest.fixture
def http_mcp_server() -> Iterator[str]:
    """The demo server over streamable HTTP on 127.0.0.1; yields its URL, killed at the end."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), "http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "DEMO_TOKEN": "over-http"},
    )
    try:
        wait_listening(proc, port, timeout=30, what="the streamable HTTP MCP server")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(proc, timeout=10)
