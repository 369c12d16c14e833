"""The workspace of ``reyn mcp serve``: an implicit one (the launch folder) is refused when it is ``/``
or the home directory — where MCP clients start servers — with the option to pass; an explicit
``--workspace`` is served from any folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

REYN = str(Path(sys.executable).parent / "reyn")


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    home, project = tmp_path / "home", tmp_path / "project"
    for d in (home, project):
        d.mkdir()
    profile = project / "reyn.toml"
    profile.write_text('[plugins]\nenable = ["file", "mcp"]\n')
    (project / "notes.txt").write_text("hello\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REYN_", "XDG_"))}
    env.update(HOME=str(home), REYN_CACHE_DIR=str(home / ".cache"))
    return home, profile, env


@pytest.mark.parametrize("where", ["root", "home"])
def test_an_implicit_workspace_at_root_or_home_is_refused_with_the_option_to_pass(setup, where):
    home, profile, env = setup
    cwd = "/" if where == "root" else str(home)
    proc = subprocess.run(
        [REYN, "mcp", "serve", "--profile-file", str(profile)],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert "no --workspace given" in proc.stderr
    assert ("filesystem root" if where == "root" else "home directory") in proc.stderr
    assert "pass --workspace /absolute/path/to/your/project" in proc.stderr


async def test_an_explicit_workspace_is_served_from_the_filesystem_root(setup):
    _, profile, env = setup
    params = StdioServerParameters(
        command=REYN,
        args=["mcp", "serve", "--profile-file", str(profile), "--workspace", str(profile.parent)],
        cwd="/",
        env=env,
    )
    async with Client(params) as client:
        listing = await client.call_tool("list_directory", {"path": "."})
    text = "".join(getattr(c, "text", "") for c in listing.content)
    assert not listing.is_error and "notes.txt" in text
