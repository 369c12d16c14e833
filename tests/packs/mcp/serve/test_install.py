"""``reyn mcp install CLIENT``: the configuration it writes, merged into the client's own file, and
that what it wrote starts and answers when launched the way the client launches it.

The client is played by the real SDK stdio client in a subprocess started from ``/`` (no ``cwd``)
with a home directory of its own; it reads the client's file and starts the entry it finds there,
exactly as Claude Desktop, Cursor or VS Code do.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

REYN = str(Path(sys.executable).parent / "reyn")
PROFILE = '[plugins]\nenable = ["file", "mcp"]\n'

# The MCP client: read the client's file, start the server entry as written (command + args + env, no
# cwd), list the tools and make one call; print what came back as JSON.
CLIENT = r"""
import asyncio, json, sys
from mcp import Client, StdioServerParameters

path, key, name = sys.argv[1:4]
entry = json.load(open(path))[key][name]
assert entry.get("type", "stdio") == "stdio"

async def main():
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=entry.get("env"))
    async with Client(params) as client:
        tools = sorted(t.name for t in (await client.list_tools()).tools)
        listing = await client.call_tool("list_directory", {"path": "."})
    text = "".join(getattr(c, "text", "") for c in listing.content)
    print(json.dumps({"tools": tools, "is_error": listing.is_error, "listing": text}))

asyncio.run(main())
"""


class World:
    def __init__(self, tmp_path: Path) -> None:
        self.home = tmp_path / "home"
        self.project = tmp_path / "project"
        for d in (self.home, self.project):
            d.mkdir()
        (self.project / "reyn.toml").write_text(PROFILE)
        (self.project / "notes.txt").write_text("hello\n")

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("REYN_", "XDG_", "APPDATA"))}
        env.update(HOME=str(self.home), REYN_CACHE_DIR=str(self.home / ".cache"))
        return env

    def install(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [REYN, "mcp", "install", *args],
            cwd=cwd or self.project,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=120,
        )

    def launch(self, config: Path, key: str, name: str = "reyn") -> dict:
        """What an MCP client gets from the entry: started from /, with only HOME and PATH."""
        env = {"HOME": str(self.home), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        proc = subprocess.run(
            [sys.executable, "-c", CLIENT, str(config), key, name],
            cwd="/",
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


CONFIG_FILES = {
    "claude-desktop": (".config/Claude/claude_desktop_config.json", "mcpServers", None),
    "cursor": (".cursor/mcp.json", "mcpServers", None),
    "claude-code": ("PROJECT/.mcp.json", "mcpServers", "stdio"),
    "vscode": ("PROJECT/.vscode/mcp.json", "servers", "stdio"),
    "mcp-json": ("PROJECT/mcp.json", "mcpServers", None),
}


def config_path(world: World, client: str) -> Path:
    rel = CONFIG_FILES[client][0]
    return world.project / rel.removeprefix("PROJECT/") if rel.startswith("PROJECT/") else world.home / rel


@pytest.mark.parametrize("client", sorted(CONFIG_FILES))
def test_what_install_writes_starts_from_slash_and_answers(world: World, client: str) -> None:
    proc = world.install(client)
    assert proc.returncode == 0, proc.stderr
    path = config_path(world, client)
    _, key, typ = CONFIG_FILES[client]
    entry = json.loads(path.read_text())[key]["reyn"]
    assert entry.get("type") == typ
    assert entry["command"] == REYN and Path(entry["command"]).is_absolute()
    assert entry["args"] == [
        "mcp",
        "serve",
        "--profile-file",
        str((world.project / "reyn.toml").resolve()),
        "--workspace",
        str(world.project.resolve()),
    ]
    assert "cwd" not in entry
    answer = world.launch(path, key)
    assert {"list_directory", "read_file"} <= set(answer["tools"])
    assert not answer["is_error"] and "notes.txt" in answer["listing"]


def test_install_keeps_the_other_servers_and_keys_of_the_clients_file(world: World) -> None:
    path = config_path(world, "claude-desktop")
    path.parent.mkdir(parents=True)
    other = {"command": "/usr/bin/other-server", "args": ["--x"]}
    path.write_text(json.dumps({"mcpServers": {"other": other}, "globalShortcut": "Ctrl+Space"}))
    assert world.install("claude-desktop").returncode == 0
    data = json.loads(path.read_text())
    assert data["globalShortcut"] == "Ctrl+Space"
    assert data["mcpServers"]["other"] == other and "reyn" in data["mcpServers"]


def test_a_different_entry_of_the_same_name_is_refused_without_force(world: World) -> None:
    path = config_path(world, "cursor")
    path.parent.mkdir(parents=True)
    before = json.dumps({"mcpServers": {"reyn": {"command": "/old/reyn", "args": []}}})
    path.write_text(before)
    proc = world.install("cursor")
    assert proc.returncode == 2 and "already has an MCP server named 'reyn'" in proc.stderr
    assert "--force" in proc.stderr and path.read_text() == before  # untouched
    # positive controls: another name is added beside it; --force replaces it
    assert world.install("cursor", "--name", "reyn-project").returncode == 0
    assert set(json.loads(path.read_text())["mcpServers"]) == {"reyn", "reyn-project"}
    assert world.install("cursor", "--force").returncode == 0
    assert json.loads(path.read_text())["mcpServers"]["reyn"]["command"] == REYN


def test_installing_the_same_entry_twice_changes_nothing(world: World) -> None:
    assert world.install("vscode").returncode == 0
    path = config_path(world, "vscode")
    first = path.read_bytes()
    again = world.install("vscode")
    assert again.returncode == 0 and "already has this MCP server" in again.stdout
    assert path.read_bytes() == first


@pytest.mark.parametrize(
    "content",
    # NaN is not JSON, and would be written back as it is; nesting past the parser is no crash
    ["{not json", "[1, 2]", '{"mcpServers": []}', '{"mcpServers": {}, "x": NaN}', "[" * 5_000],
    ids=["not json", "a list", "servers not an object", "NaN", "nested past the parser"],
)
def test_a_clients_file_that_is_not_a_json_object_is_refused_and_left_alone(
    world: World, content: str
) -> None:
    path = config_path(world, "mcp-json")
    path.write_text(content)
    proc = world.install("mcp-json")
    assert proc.returncode == 2 and "reyn mcp install: error:" in proc.stderr
    assert "Traceback" not in proc.stderr and path.read_text() == content


def test_print_shows_the_entry_and_writes_nothing(world: World) -> None:
    proc = world.install("vscode", "--print")
    assert proc.returncode == 0, proc.stderr
    snippet = json.loads(proc.stdout)
    assert snippet["servers"]["reyn"]["type"] == "stdio"
    assert snippet["servers"]["reyn"]["command"] == REYN
    assert not config_path(world, "vscode").exists()


def test_install_from_the_home_directory_needs_an_explicit_workspace(world: World) -> None:
    profile = str(world.project / "reyn.toml")
    proc = world.install("cursor", "--profile-file", profile, cwd=world.home)
    assert proc.returncode == 2 and "--workspace" in proc.stderr and "home directory" in proc.stderr
    ok = world.install("cursor", "--profile-file", profile, "--workspace", str(world.project), cwd=world.home)
    assert ok.returncode == 0, ok.stderr


def test_install_through_a_linked_config_edits_the_file_it_names_and_keeps_its_mode(world: World) -> None:
    real = world.home / "dotfiles" / "mcp.json"
    real.parent.mkdir()
    real.write_text(json.dumps({"mcpServers": {}}))
    real.chmod(0o640)
    link = world.project / "link.json"
    link.symlink_to(real)
    proc = world.install("mcp-json", "--config", str(link))
    assert proc.returncode == 0, proc.stderr
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert "reyn" in json.loads(real.read_text())["mcpServers"]
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert sorted(p.name for p in real.parent.iterdir()) == ["mcp.json"]  # no temporary file left
