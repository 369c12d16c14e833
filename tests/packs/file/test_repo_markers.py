"""Repository markers (``reyn_tools_file/scope.py``): the file tools never write or delete a file
that would make a directory a repository whose configuration a program obeys — a ``.git`` of any
kind, other VCS directories, or a ``HEAD`` (git's test for a bare git directory) — whatever the
``protected`` setting says. With the review's setup (file pack ``write_roots=["out"]``, shell pack
``git status``), the bare-repository attack cannot be assembled, and git refuses the rest."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import reyn_tools_shell.plugin as shell_plugin
from reyn_tools_file.paths import PathRefused
from reyn_tools_shell.settings import ShellSettings

from reyn_core import PhaseCallerState, ToolContext, ToolDenied, ToolOrigin
from reyn_core.host import RegistryBuilder, ToolRegistry, invoke_tool


async def refused(tools, name: str, **args) -> PathRefused:
    with pytest.raises(PathRefused) as info:
        await tools.call(name, **args)
    assert info.value.reason == "protected", info.value.message
    return info.value


@pytest.mark.parametrize(
    "path",
    [
        "out/HEAD",
        "out/head",
        "out/deep/er/HEAD",
        "out/.git",
        "out/.git/config",
        "out/.GIT/hooks/pre-commit",
        "out/.hg/hgrc",
        "out/.svn/entries",
        "out/.bzr/branch.conf",
        "out/.jj/repo/config.toml",
        "out/_darcs/prefs/defaults",
    ],
)
async def test_repository_markers_are_never_written_even_with_no_protected_entries(
    make_tools, workspace, path
):
    tools = make_tools(protected=())  # the operator removed every protected entry
    error = await refused(tools, "write_file", path=path, content="x")
    assert "repository marker" in error.message
    assert sorted(p.name for p in (workspace / "out").iterdir()) == []


async def test_existing_markers_are_neither_edited_nor_deleted(make_tools, workspace):
    (workspace / "out" / "HEAD").write_text("ref: refs/heads/main\n")
    tools = make_tools(protected=())
    await refused(tools, "edit_file", path="out/HEAD", old_string="main", new_string="x")
    await refused(tools, "delete_file", path="out/HEAD")
    assert (workspace / "out" / "HEAD").read_text() == "ref: refs/heads/main\n"
    assert (await tools.call("read_file", path="out/HEAD"))[
        "content"
    ] == "ref: refs/heads/main\n"  # reads are fine


async def test_ordinary_files_named_like_repository_parts_are_still_written(make_tools, workspace):
    tools = make_tools()
    for path in (
        "out/config",
        "out/objects/readme.md",
        "out/refs/notes.txt",
        "out/HEADER.md",
        "out/.gitignore",
    ):
        assert (await tools.call("write_file", path=path, content="x"))["path"] == path


def shell_tool(workspace: Path) -> tuple[ToolRegistry, ToolContext]:
    settings = ShellSettings.model_validate(
        {
            "programs": [{"name": "git", "subcommands": ["status", "log"], "allow_args": ["^--porcelain$"]}],
            "write_roots": ["out"],
        }
    )
    registry = RegistryBuilder(settings={"shell": settings})
    origin = ToolOrigin(kind="plugin", plugin_id="shell", distribution="reyn-tools-shell")
    shell_plugin.reyn_register_tools(
        register=lambda t: registry.register(t, origin=origin), settings=settings
    )
    ctx = ToolContext(
        surface="phase", workspace=workspace, phase_state=PhaseCallerState(allowed_ops=("shell",))
    )
    return registry.freeze(), ctx


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
async def test_the_review_attack_file_pack_then_git_status(make_tools, workspace, tmp_path):
    """The review's steps: write a bare layout with a command in ``core.fsmonitor`` into ``out/``, then
    ``git status`` with ``cwd="out"``. HEAD cannot be written; written another way, git refuses."""
    subprocess.run(["git", "init", "-q", str(workspace)], check=True, timeout=60)
    marker = tmp_path / "PWNED"
    tools = make_tools()  # the documented write_roots = ["out"]
    config = (
        f'[core]\n\tbare = false\n\tfsmonitor = "touch {marker}; false"\n[alias]\n\tst = "!touch {marker}"\n'
    )
    await tools.call("write_file", path="out/config", content=config)
    await tools.call("write_file", path="out/objects/info/.keep", content="")
    await tools.call("write_file", path="out/refs/heads/.keep", content="")
    await refused(tools, "write_file", path="out/HEAD", content="ref: refs/heads/main\n")
    if os.geteuid() == 0:  # under root the sandbox runs git as uid 65534: the write root is its
        for here, _dirs, files in os.walk(workspace / "out"):
            for name in (here, *(os.path.join(here, f) for f in files)):
                os.chown(name, 65534, 65534)
    registry, ctx = shell_tool(workspace)
    # Without HEAD the directory is no repository: git uses the workspace's own.
    result = await invoke_tool(
        registry, "shell", {"argv": ["git", "status", "--porcelain"], "cwd": "out"}, ctx
    )
    assert result["exit_code"] == 0 and "out/" in result["stdout"]
    # HEAD written by anything else: git is refused before it starts.
    (workspace / "out" / "HEAD").write_text("ref: refs/heads/main\n")
    with pytest.raises(ToolDenied, match="look like a git directory"):
        await invoke_tool(registry, "shell", {"argv": ["git", "status"], "cwd": "out"}, ctx)
    assert not marker.exists()
    # Plain git in the same layout does run the command (so the assertion above can fail).
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1"}
    # out/ may belong to the sandbox's user (above): plain git as root would refuse it as not its own
    env.update({"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "safe.directory", "GIT_CONFIG_VALUE_0": "*"})
    subprocess.run(["git", "st"], cwd=workspace / "out", env=env, capture_output=True, timeout=60)
    assert marker.exists()
