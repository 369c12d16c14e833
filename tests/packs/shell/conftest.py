"""Fixtures for the shell pack: a real workspace, settings validated like a profile's, a registry
built from the pack's own hooks, and calls through the real dispatcher on the phase surface."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import reyn_tools_shell.plugin as shell_plugin
from reyn_tools_shell.settings import ShellSettings

from reyn_core import PhaseCallerState, ToolContext, ToolOrigin
from reyn_core.host import RegistryBuilder, ToolRegistry, dispatch_tool, invoke_tool

ORIGIN = ToolOrigin(kind="plugin", plugin_id="shell", distribution="reyn-tools-shell")

PROGRAMS: list[dict[str, Any]] = [
    {"name": "echo", "any_args": True, "match": ["echo hi there"]},
    {
        "name": "touch",
        "allow_args": [r"^\w[\w.-]*$"],
        "match": ["touch marker"],
        "not_match": ["touch /etc/passwd", "touch -r x y"],
    },
    {"name": "env", "match": ["env"], "not_match": ["env sh -c id"]},
    {"name": "pwd", "match": ["pwd"]},
    {"name": "python", "path": sys.executable, "any_args": True},
    {
        "name": "git",
        "subcommands": ["status", "diff", "log"],
        "allow_args": [r"^--(oneline|stat|name-only|porcelain)$", r"^-n$", r"^\d{1,4}$"],
        "deny_args": [r"^-c", r"^--upload-pack", r"^--exec", r"^--output"],
        "match": ["git status", "git log --oneline -n 5"],
        "not_match": [
            "git -c core.pager=sh log",
            "git push",
            "git log --upload-pack=touch",
            "git diff --output=x",
            "git status; touch pwned",
        ],
    },
    {
        "name": "find",
        "any_args": True,
        "deny_args": [r"^-(exec|execdir|ok|okdir|delete|fprint\w*|fls)$"],
        "match": ["find . -name '*.py'"],
        "not_match": ["find . -exec touch pwned ;", "find . -delete"],
    },
]


SANDBOX_UID = 65534  # reyn_sandbox.Grants.uid: who a command runs as when the host is root


def writable_by_sandbox(path: Path) -> None:
    """Make ``path`` (recursively) writable by the sandboxed command: under root the launcher runs
    commands as an unprivileged user, so a write root must belong to it (as an operator's would)."""
    if os.geteuid() != 0:
        return
    for here, dirs, files in os.walk(path):
        for name in (*dirs, *files):
            os.chown(os.path.join(here, name), SANDBOX_UID, SANDBOX_UID, follow_symlinks=False)
    os.chown(path, SANDBOX_UID, SANDBOX_UID)


def build_registry(settings: ShellSettings | None) -> ToolRegistry:
    registry = RegistryBuilder(settings={"shell": settings} if settings is not None else None)
    shell_plugin.reyn_register_tools(
        register=lambda t: registry.register(t, origin=ORIGIN), settings=settings
    )
    return registry.freeze()


@dataclass
class ShellTool:
    """Calls ``shell`` the way a phase op arrives: phase surface, ``allowed_ops`` naming it."""

    registry: ToolRegistry
    ctx: ToolContext

    async def run(self, **args: Any) -> Any:
        return await invoke_tool(self.registry, "shell", args, self.ctx)

    async def envelope(self, args: Any, *, surface: str | None = None) -> dict[str, Any]:
        return await dispatch_tool(self.registry, "shell", args, self.ctx, surface=surface)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "sub").mkdir()
    return ws


@pytest.fixture
def make_shell(workspace: Path) -> Callable[..., ShellTool]:
    """``make_shell(**settings)``: a ``ShellTool`` whose settings are validated from plain data, as a
    profile's ``[plugins.shell.settings]`` table is."""

    def make(**overrides: Any) -> ShellTool:
        data: dict[str, Any] = {"programs": PROGRAMS, **overrides}
        settings = ShellSettings.model_validate(data)
        ctx = ToolContext(
            surface="phase", workspace=workspace, phase_state=PhaseCallerState(allowed_ops=("shell",))
        )
        return ShellTool(build_registry(settings), ctx)

    return make


@pytest.fixture
def shell(make_shell: Callable[..., ShellTool]) -> ShellTool:
    return make_shell()


@pytest.fixture(name="writable_by_sandbox")
def writable_by_sandbox_fixture() -> Callable[[Path], None]:
    return writable_by_sandbox


@pytest.fixture(name="build_registry")
def build_registry_fixture() -> Callable[[ShellSettings | None], ToolRegistry]:
    return build_registry
