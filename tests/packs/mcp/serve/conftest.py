"""``reyn mcp serve`` driven by the real SDK client: a workspace with a profile, the ``serve_probe``
test plugin installed into a temporary site folder, and helpers to start the server over stdio or
streamable HTTP (127.0.0.1, a free port) as a subprocess of the real ``reyn``."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from local_server import free_port, stop, wait_listening

REYN = str(Path(sys.executable).parent / "reyn")
PROBE_SOURCE = Path(__file__).parent / "probe_plugin.py"
PROBE_MODULE = "reyn_serve_probe"
MODERN = "2026-07-28"
"""The protocol generation without a session: a deferred answer comes back in a retry that carries a
one-time ``requestState``."""
BASE_PROFILE = """\
[plugins]
enable = ["serve_probe", "file", "shell", "mcp"]

[audit]
log = "audit.jsonl"
"""


def _record_line(site: Path, rel: str) -> str:
    data = (site / rel).read_bytes()
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{rel},sha256={digest},{len(data)}"


def install_probe(site: Path) -> Path:
    """Lay out the probe plugin as an installed distribution (dist-info, entry point, RECORD)."""
    module = site / f"{PROBE_MODULE}.py"
    module.write_text(PROBE_SOURCE.read_text())
    info = site / "reyn_serve_probe-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: reyn-serve-probe\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[reyn.plugins]\nserve_probe = {PROBE_MODULE}\n")
    rels = [module.name, f"{info.name}/METADATA", f"{info.name}/entry_points.txt"]
    (info / "RECORD").write_text(
        "\n".join([*(_record_line(site, r) for r in rels), f"{info.name}/RECORD,,"]) + "\n"
    )
    return module


@dataclass
class ServeWorld:
    """A workspace (also the cwd) with ``reyn.toml``, the probe plugin's site folder and markers."""

    root: Path
    site: Path
    markers: Path

    @property
    def audit_path(self) -> Path:
        return self.root / "audit.jsonl"

    def write_profile(self, text: str) -> None:
        (self.root / "reyn.toml").write_text(text)

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("REYN_")}
        env.update(
            PYTHONPATH=str(self.site),
            REYN_CACHE_DIR=str(self.root / ".cache"),
            REYN_ARGUMENT_KEY_FILE=str(self.root / ".config" / "argument-hash.key"),  # not the real home
            SERVE_PROBE_MARKERS=str(self.markers),
            **extra,
        )
        return env

    def reyn(self, *args: str, timeout: float = 180, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [REYN, *args], cwd=self.root, env=self.env(**env), capture_output=True, text=True, timeout=timeout
        )

    def stdio(self, *args: str, **env: str) -> Any:
        """``StdioServerParameters`` that spawn ``reyn mcp serve ARGS`` in this workspace."""
        from mcp import StdioServerParameters

        return StdioServerParameters(
            command=REYN, args=["mcp", "serve", *args], cwd=str(self.root), env=self.env(**env)
        )

    def audit_lines(self) -> list[dict[str, Any]]:
        if not self.audit_path.exists():
            return []
        return [json.loads(line) for line in self.audit_path.read_text().splitlines()]

    def router_render(self) -> list[dict[str, Any]]:
        """What ``reyn tools render --surface router`` offers with the same profile."""
        proc = self.reyn("tools", "render", "--surface", "router", "--json")
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    @contextlib.contextmanager
    def http(
        self, *args: str, port: int | None = None, host: str = "127.0.0.1", **env: str
    ) -> Iterator[HttpServer]:
        """``reyn mcp serve --http HOST:PORT ARGS`` (127.0.0.1 by default) running until the block ends."""
        port = port or free_port(host)
        bind = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        log = self.root / f"serve-{port}.log"
        with open(log, "w") as err:
            proc = subprocess.Popen(
                [REYN, "mcp", "serve", "--http", bind, *args],
                cwd=self.root,
                env=self.env(**env),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
            )
        server = HttpServer(proc, port, log, host)
        try:
            server.wait_listening()
            yield server
        finally:
            server.stop()


@dataclass
class HttpServer:
    proc: subprocess.Popen[bytes]
    port: int
    log: Path
    host: str = "127.0.0.1"

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/mcp"

    def wait_listening(self, timeout: float = 60) -> None:
        wait_listening(
            self.proc, self.port, host=self.host, timeout=timeout, log=self.log, what="reyn mcp serve --http"
        )

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30) -> int:
        return stop(self.proc, sig, timeout)


@pytest.fixture
def serve_world(tmp_path: Path) -> ServeWorld:
    root = tmp_path / "ws"
    site = tmp_path / "site"
    markers = tmp_path / "markers"
    for d in (root, site, markers):
        d.mkdir()
    install_probe(site)
    world = ServeWorld(root, site, markers)
    world.write_profile(BASE_PROFILE)
    (root / "notes.txt").write_text("hello from the workspace\n")
    return world


async def call_over_http(url: str, tool: str, arguments: dict[str, Any], elicitation: Any) -> Any:
    """``tool`` called once by a 2026-07-28 SDK client over streamable HTTP at ``url``, its user
    answering each question with ``elicitation``; bounded at 120 s."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with Client(streamable_http_client(url), mode=MODERN, elicitation_callback=elicitation) as client:
        return await asyncio.wait_for(client.call_tool(tool, arguments), 120)
