"""The ``shell`` tool: one allowlisted argv, run without a shell, on the phase surface only."""

from __future__ import annotations

import os
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from reyn_core import ToolContext, ToolGates, settings_as, tool

from .confine import HARDENING_ENV, confine
from .definitions import has_programs, list_programs
from .policy import allowed_rule, command_env, parse_command, resolve_cwd, resolve_executable, workspace_of
from .sandbox import launcher_for, raise_for_sandbox
from .settings import ShellSettings

KEY_PREFIX = "[plugins.shell.settings]"


class ShellArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    argv: list[str] | None = Field(
        None, min_length=1, description='Program and arguments, e.g. ["git", "status"].'
    )
    command: str | None = Field(
        None,
        description="Or a command line, split like a POSIX shell but never run by one: "
        "no pipes, redirection, globbing or variables.",
    )
    cwd: str = Field(default=".", description="Working directory, relative to the workspace.")
    timeout_s: float | None = Field(
        None, gt=0, description="Seconds before the command is killed (capped by the settings)."
    )

    @model_validator(mode="after")
    def _one_command(self) -> ShellArgs:
        if (self.argv is None) == (self.command is None):
            raise ValueError("give exactly one of `argv` (a list) or `command` (a string)")
        return self


@tool(
    cluster="shell",
    purity="side_effect",
    gates=ToolGates(router="deny", phase="allow"),
    available=has_programs,
    schema_enricher=list_programs,
)
async def shell(args: ShellArgs, ctx: ToolContext) -> dict[str, Any]:
    """Run one allowlisted program with arguments in the workspace (no shell), inside the kernel
    sandbox: it can read the read roots, write the write roots and nothing else. Returns exit_code,
    stdout, stderr (each capped), duration_s and timed_out."""
    settings = settings_as(ctx, ShellSettings)
    argv = parse_command(args.argv, args.command)
    rule = allowed_rule(settings, argv)
    workspace = workspace_of(settings, ctx.workspace)
    cwd = resolve_cwd(workspace, args.cwd)
    env = command_env(settings, os.environ, workspace)
    executable = resolve_executable(rule, env, workspace)
    await confine(rule, executable, argv, cwd, workspace)  # defence in depth under the sandbox
    env.update(HARDENING_ENV)  # after scrubbing and env_set: neither can strip or weaken it
    timeout = min(args.timeout_s or settings.timeout_s, settings.max_timeout_s)
    launcher = launcher_for([executable, *argv[1:]], settings, workspace, KEY_PREFIX, ctx.host_files)
    from .process import run_command  # asyncio's subprocess machinery: only when a command runs

    result = await run_command(
        executable,
        argv,
        launcher=launcher,
        cwd=cwd,
        env=env,
        timeout_s=timeout,
        max_output_bytes=settings.max_output_bytes,
    )
    if not result.timed_out:
        raise_for_sandbox(result.exit_code, result.verdict, settings, KEY_PREFIX)
    data = {
        "exit_code": result.exit_code,
        "stdout": result.stdout,
        "stderr": result.stderr,
        "duration_s": result.duration_s,
        "timed_out": result.timed_out,
        "stdout_truncated": result.stdout_truncated,
        "stderr_truncated": result.stderr_truncated,
    }
    if result.timed_out:
        data["note"] = f"killed after {timeout:g} s with its whole process group"
    return data


TOOLS = (shell,)
