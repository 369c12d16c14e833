"""One reader of ``--workspace`` per invocation: the core resolves it once (``~`` expanded, made
absolute) wherever it stands, hands the command that value, and refuses it repeated or abbreviated;
the load (what plugins protect, the mcp pack's snapshot) and the tools work in the same folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

REYN = str(Path(sys.executable).parent / "reyn")


def _snapshot(root: Path, tool: str) -> None:
    (root / ".reyn").mkdir(parents=True)
    tools = [{"name": tool, "description": "x", "input_schema": {"type": "object"}}]
    snapshot = {"version": 1, "servers": {"demo": {"tools": tools}}}
    (root / ".reyn" / "mcp-tools.json").write_text(json.dumps(snapshot))


@pytest.fixture
def world(tmp_path: Path) -> dict:
    home = tmp_path / "home"
    project, other = home / "proj", tmp_path / "other"
    for d in (project, other):
        d.mkdir(parents=True)
    profile = tmp_path / "reyn.toml"
    server = {"command": sys.executable, "args": ["-c", "pass"], "import_tools": True}
    profile.write_text(
        '[plugins]\nenable = ["file", "mcp"]\n[plugins.mcp.settings.servers.demo]\n'
        + "".join(f"{k} = {json.dumps(v)}\n" for k, v in server.items())
    )
    (project / "notes.txt").write_text("hello\n")
    _snapshot(project, "wanted")  # the workspace's snapshot: the one the load protects
    _snapshot(other, "planted")  # the working directory's: never read when --workspace names another
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REYN_", "XDG_"))}
    env.update(HOME=str(home), REYN_CACHE_DIR=str(home / ".cache"))
    return {"home": home, "project": project, "other": other, "profile": profile, "env": env}


async def _served(world: dict, args: list[str]) -> tuple[set[str], str]:
    params = StdioServerParameters(
        command=REYN,
        args=[*args, "--profile-file", str(world["profile"])],
        cwd=str(world["other"]),
        env=world["env"],
    )
    async with Client(params) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        listing = await client.call_tool("list_directory", {"path": "."})
    return names, "".join(getattr(c, "text", "") for c in listing.content)


@pytest.mark.parametrize(
    "args",
    [
        ["mcp", "serve", "--workspace", "{project}"],  # the control: the option among the command's
        ["--workspace", "{project}", "mcp", "serve"],  # before the command word
        ["mcp", "serve", "--workspace=~/proj"],  # unexpanded, as in an MCP client's JSON config
        ["--workspace", "~/proj", "mcp", "serve"],
    ],
)
async def test_the_load_and_the_tools_share_one_workspace_wherever_the_option_stands(world, args):
    names, listing = await _served(world, [a.format(project=world["project"]) for a in args])
    assert any("wanted" in n for n in names), names  # the load read the workspace's snapshot ...
    assert not any("planted" in n for n in names), names  # ... not the working directory's
    assert "notes.txt" in listing  # and the tools work in that same folder


def _run(world: dict, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [REYN, *args],
        cwd=str(world["other"]),
        env=world["env"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["mcp", "serve", "--workspace", "{project}", "--workspace", "{other}"], "--workspace given twice"),
        (["--workspace", "{project}", "mcp", "serve", "--workspace={other}"], "--workspace given twice"),
        (["mcp", "serve", "--works", "{project}"], "--works is an abbreviation of --workspace"),
        (["--prof", "x", "tools", "list"], "--prof is an abbreviation of --profile"),
        (["tools", "list", "--profile-file", "a", "--profile-file", "b"], "--profile-file given twice"),
        (["mcp", "serve", "--workspace", "{project}/missing"], "is not a directory"),
    ],
)
def test_a_repeated_abbreviated_or_missing_workspace_is_refused_clearly(world, args, said):
    proc = _run(world, *(a.format(project=world["project"], other=world["other"]) for a in args))
    assert proc.returncode == 2 and said in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_global_workspace_for_a_command_that_loads_nothing_is_named_not_an_invalid_choice(world):
    # (tools list loads, so it takes the workspace: tests/cli/test_workspace_option.py)
    proc = _run(world, "--workspace", str(world["project"]), "completion", "bash")
    assert proc.returncode == 2, proc.stderr
    assert "`reyn completion` loads no plugins, so a workspace means nothing to it" in proc.stderr
    assert "invalid choice" not in proc.stderr
    # the control: the same command without it works
    ok = _run(world, "completion", "bash")
    assert ok.returncode == 0, ok.stderr
