"""Fixtures for the approval tests: a real plugin laid out in a site folder, a profile with an audit
log and ``[approvals]`` rules, a workspace, and ``reyn`` run as a real subprocess."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from site_plugin import install_site_plugin

PLUGIN = """\
from reyn_core import ToolContext, hookimpl, tool

REYN_API = 1


@tool(cluster="notes", purity="side_effect")
def {pid}_write(path: str, text: str, ctx: ToolContext, mode: str = "append") -> dict:
    \"\"\"Append a line to a note in the workspace (the handler's marker: the file exists once it ran).\"\"\"
    target = ctx.workspace / path
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("a") as f:
        f.write(text + "\\n")
    return {{"written": path, "mode": mode}}


@tool(cluster="notes", purity="read_only")
def {pid}_read(path: str, ctx: ToolContext) -> str:
    \"\"\"Read a note in the workspace ("" when absent).\"\"\"
    target = ctx.workspace / path
    return target.read_text() if target.exists() else ""


@hookimpl
def reyn_register_tools(register, settings):
    register({pid}_write)
    register({pid}_read)
"""

# appended to the plugin after a test's own tools: the hook that registers them beside write and read
REGISTER = """

@hookimpl
def reyn_register_tools(register, settings):
    for handler in ({handlers},):
        register(handler)
"""

PROFILE = """\
[plugins]
enable = ["{pid}"]

[audit]
log = "audit.jsonl"

[approvals]
settings.file = "approvals.sqlite"
ttl_s = {ttl}

[[approvals.rules]]
purity = ["side_effect"]
unless_within = {{ arguments = ["path"], roots = ["out/drafts"] }}
{extra}"""


@dataclass
class World:
    """One test's installation: plugin ``pid`` in ``site``, the profile at ``root/reyn.toml``."""

    root: Path
    site: Path
    pid: str

    @property
    def write(self) -> str:
        return f"{self.pid}_write"

    @property
    def read(self) -> str:
        return f"{self.pid}_read"

    @property
    def profile(self) -> Path:
        return self.root / "reyn.toml"

    def write_profile(self, *, ttl: float = 600, extra: str = "") -> None:
        self.profile.write_text(PROFILE.format(pid=self.pid, ttl=ttl, extra=extra))

    def reinstall(self, source_suffix: str = "") -> None:
        """Rewrite the plugin's files (as an update would): the same tools, another tree digest."""
        install_site_plugin(self.site, self.pid, PLUGIN.format(pid=self.pid) + source_suffix)

    def add_tools(self, source: str, *names: str) -> None:
        """Reinstall the plugin with ``source`` (formatted with ``pid``) appended, its tools
        ``{pid}_NAME`` of ``names`` registered beside write and read."""
        handlers = ", ".join(f"{self.pid}_{name}" for name in ("write", "read", *names))
        self.reinstall(source.format(pid=self.pid) + REGISTER.format(handlers=handlers))

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(self.site), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        env["REYN_PROFILE_FILE"] = str(self.profile)
        env.pop("REYN_PROFILE", None)
        return env

    def reyn(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """``reyn ARGS`` in a fresh process (stdin not a terminal), in the workspace."""
        return self.python("-m", "reyn_core", *args, timeout=timeout)

    def python(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """``python ARGS`` in a fresh process (stdin not a terminal), in the workspace."""
        return subprocess.run(
            [sys.executable, *args],
            cwd=self.root,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )

    def reyn_json(self, *args: str) -> tuple[int, Any]:
        done = self.reyn(*args, "--json")
        try:
            return done.returncode, json.loads(done.stdout)
        except json.JSONDecodeError:
            raise AssertionError(f"not JSON: {done.stdout!r} {done.stderr!r}") from None

    @staticmethod
    def text_of(result: Any) -> str:
        """The text content of an MCP ``CallToolResult``."""
        return "".join(getattr(c, "text", "") for c in result.content if getattr(c, "type", None) == "text")

    def enable_mcp(self) -> None:
        """Enable the mcp pack beside the plugin (for ``reyn mcp serve``)."""
        text = self.profile.read_text()
        if '"mcp"]' not in text:
            self.profile.write_text(
                text.replace(f'enable = ["{self.pid}"]', f'enable = ["{self.pid}", "mcp"]')
            )

    def enable_packs(self, *packs: str, extra: str = "") -> None:
        """Enable ``packs`` beside the plugin, the ``[approvals]`` rule holding only its write tool
        (so the packs' own calls run), and append ``extra`` (their settings) to the profile."""
        text = self.profile.read_text().replace(
            f'enable = ["{self.pid}"]', "enable = [" + ", ".join(f'"{p}"' for p in (self.pid, *packs)) + "]"
        )
        text = text.replace('purity = ["side_effect"]', f'tools = ["{self.write}"]')
        self.profile.write_text(text + extra)

    def mcp_stdio(self) -> Any:
        """``reyn mcp serve`` over stdio for this profile, as the SDK's server parameters."""
        from mcp import StdioServerParameters

        self.enable_mcp()
        reyn = str(Path(sys.executable).parent / "reyn")
        return StdioServerParameters(command=reyn, args=["mcp", "serve"], cwd=str(self.root), env=self.env())

    def racing_calls(self, approval: str, *call: str, racers: int = 2) -> list[dict[str, Any]]:
        """``reyn tools call TOOL CALL --approval ID`` in ``racers`` processes started together; each
        one's JSON envelope."""
        argv = [sys.executable, "-m", "reyn_core", "tools", "call", self.write, *call, "--approval", approval]
        procs = [
            subprocess.Popen(
                [*argv, "--json"],
                cwd=self.root,
                env=self.env(),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
                text=True,
            )
            for _ in range(racers)
        ]
        return [json.loads(p.communicate(timeout=120)[0]) for p in procs]

    def audit_events(self) -> list[dict[str, Any]]:
        path = self.root / "audit.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture
def world(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    """A plugin unique to the test (a module imported by an earlier test stays imported), its profile,
    and the process environment pointing at both (for in-process loads too)."""
    for var in ("REYN_PROFILE", "REYN_PROFILE_FILE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("REYN_CACHE_DIR", str(tmp_path / "cache"))
    digest = hashlib.sha256(request.node.nodeid.encode()).hexdigest()[:10]
    stem = "apv_" + "".join(c for c in request.node.name.removeprefix("test_") if c.isalnum())[:12] + digest
    root = tmp_path / "ws"
    root.mkdir()
    w = World(root=root, site=tmp_path / "site", pid=stem)
    w.reinstall()
    w.write_profile()
    monkeypatch.syspath_prepend(str(w.site))
    monkeypatch.chdir(root)
    monkeypatch.setenv("REYN_PROFILE_FILE", str(w.profile))
    return w


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """Each SQL approval store, empty: the SQLite store on a real file, the PostgreSQL store on the
    real server of tests/conftest.py (its connection closed after the test)."""
    if request.param == "sqlite":
        from reyn_approvals_sqlite import SqliteApprovalStore

        yield SqliteApprovalStore(tmp_path / "approvals.sqlite")
        return
    pytest.importorskip("psycopg")
    from reyn_approvals_postgres.store import PostgresApprovalStore

    server = request.getfixturevalue("postgres_server")
    pg = PostgresApprovalStore(server.dsn(schema=server.new_schema("store")))
    yield pg
    pg.disconnect()


@pytest.fixture
def server() -> Iterator[Any]:
    """The scripted model server (replies added by the test), stopped after it."""
    from reyn_loops.testing.scripted_server import ScriptedModelServer

    s = ScriptedModelServer([], lifetime_s=120).start()
    yield s
    s.stop()


@pytest.fixture
def llm_client(server: Any) -> Any:
    """The real litellm client pointed at ``server`` (no retries, bounded)."""
    from reyn_loops import LiteLLMClient

    return LiteLLMClient(api_base=server.base_url, api_key="k", num_retries=0, timeout_s=30)


# the host's secret files (tests/approvals/test_host_secrets.py, test_secrets_made_later.py)
KEY = b"SECRET-KEY-" + b"k" * 21  # 32 bytes: a key the load accepts
LOG = "ref=1 SECRET-LOG-LINE a server's raw words\n"


def private(path: Path, data: bytes) -> None:
    """``data`` in ``path``, mode 0600, its folder 0755 (the secrets' and their neighbours' mode)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    os.chmod(path.parent, 0o755)
    path.write_bytes(data)
    os.chmod(path, 0o600)


@pytest.fixture
def secrets(world: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The key in ``keys/`` and the remote log in ``logs/`` of the workspace, each with a neighbour
    of the same mode (the control: only the secret mark differs)."""
    os.chmod(world.root, 0o755)
    private(world.root / "keys" / "argument-hash.key", KEY)
    private(world.root / "keys" / "neighbour.txt", b"neighbour key-folder text")
    private(world.root / "logs" / "remote.log", LOG.encode())
    private(world.root / "logs" / "remote.log.1", LOG.encode())  # a rotated copy
    private(world.root / "logs" / "neighbour.log", b"neighbour log-folder text")
    private(world.root / "beside.txt", b"beside the secrets' folders")
    monkeypatch.setenv("REYN_ARGUMENT_KEY_FILE", str(world.root / "keys" / "argument-hash.key"))
    monkeypatch.setenv("REYN_REMOTE_LOG", str(world.root / "logs" / "remote.log"))
    return world
