"""The ``shell`` tool as loading and rendering see it: name, description, parameters schema, gates,
availability, schema enricher, and a lazy ``"module:attr"`` handler.

The handler and its argument model live in ``tools.py`` (with the command policy), imported on the
first call. The definition here must equal its ``@tool`` twin in ``tools.py`` field for field (the
handler aside): ``tests/packs/test_lazy_definitions.py`` checks it, so change both together.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from reyn_core import ToolContext, ToolDefinition, ToolGates, ToolRuntimeMissing

from .settings import ShellSettings

PHASE_ONLY = ToolGates(router="deny", phase="allow")


def shell_settings(ctx: ToolContext) -> ShellSettings:
    """The pack's settings for this call (defaults — no programs — when the host gave none)."""
    settings = ctx.settings
    if isinstance(settings, ShellSettings):
        return settings
    if settings is None:
        return ShellSettings()
    if isinstance(settings, Mapping):
        return ShellSettings.model_validate(dict(settings))
    raise ToolRuntimeMissing(
        f"the shell pack got settings of type {type(settings).__name__}, not ShellSettings"
    )


def has_programs(ctx: ToolContext) -> bool:
    """Gate layer 3: the tool exists for a model only when the operator allowed some program."""
    if not shell_settings(ctx).programs:
        raise ToolRuntimeMissing(
            "no program is allowed; add [[plugins.shell.settings.programs]] entries (name, subcommands, "
            "allow_args) to the profile"
        )
    return True


def list_programs(parameters: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    """Schema enricher: tell the model which programs (and subcommands) it may run."""
    programs = shell_settings(ctx).programs
    if not programs:
        return parameters
    out = copy.deepcopy(parameters)
    allowed = "; ".join(r.summary() for r in programs)
    for key in ("argv", "command"):
        prop = out.get("properties", {}).get(key)
        if isinstance(prop, dict):
            prop["description"] = f"{prop.get('description', '')} Allowed programs: {allowed}."
    return out


SHELL = ToolDefinition(
    name="shell",
    description="Run one allowlisted program with arguments in the workspace (no shell). Returns exit_code,\nstdout, stderr (each capped), duration_s and timed_out.",
    parameters={
        "additionalProperties": False,
        "properties": {
            "argv": {
                "anyOf": [
                    {"items": {"type": "string"}, "minItems": 1, "type": "array"},
                    {"type": "null"},
                ],
                "default": None,
                "description": 'Program and arguments, e.g. ["git", "status"].',
            },
            "command": {
                "anyOf": [{"type": "string"}, {"type": "null"}],
                "default": None,
                "description": "Or a command line, split like a POSIX shell but never run by one: no pipes, redirection, globbing or variables.",
            },
            "cwd": {
                "default": ".",
                "description": "Working directory, relative to the workspace.",
                "type": "string",
            },
            "timeout_s": {
                "anyOf": [{"exclusiveMinimum": 0, "type": "number"}, {"type": "null"}],
                "default": None,
                "description": "Seconds before the command is killed (capped by the settings).",
            },
        },
        "type": "object",
    },
    handler="reyn_tools_shell.tools:shell",
    gates=PHASE_ONLY,
    cluster="shell",
    purity="side_effect",
    available=has_programs,
    schema_enricher=list_programs,
)

TOOLS = (SHELL,)
