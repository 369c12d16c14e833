r"""The ``shell`` tool as loading and rendering see it, read from the generated ``tools.json`` (name,
description, parameters schema, gates, lazy ``"module:attr"`` handler), plus the light code a
manifest cannot hold: the availability check and the schema enricher.

The one source of truth is the ``@tool`` function in ``tools.py`` (with the command policy),
imported on the first call. After changing it, regenerate the manifest
(``tests/packs/test_lazy_definitions.py`` fails until you do)::

    python -m reyn_core.manifest reyn_tools_shell.tools:TOOLS \
        > reyn_builtin_tools/shell/reyn_tools_shell/tools.json
"""

from __future__ import annotations

import copy
from typing import Any

from reyn_core import ToolContext, ToolRuntimeMissing, lazy_definitions, read_manifest, settings_as

from .sandbox import require_sandbox
from .settings import ShellSettings


def has_programs(ctx: ToolContext) -> bool:
    """Gate layer 3: the tool exists for a model only when the operator allowed some program and
    the kernel sandbox can confine it (or the operator turned it off, loudly)."""
    settings = settings_as(ctx, ShellSettings)
    if not settings.programs:
        raise ToolRuntimeMissing(
            "no program is allowed; add [[plugins.shell.settings.programs]] entries (name, subcommands, "
            "allow_args) to the profile"
        )
    require_sandbox(settings, "the shell tool", "[plugins.shell.settings]")
    return True


def list_programs(parameters: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    """Schema enricher: tell the model which programs (and subcommands) it may run."""
    programs = settings_as(ctx, ShellSettings).programs
    if not programs:
        return parameters
    out = copy.deepcopy(parameters)
    allowed = "; ".join(r.summary() for r in programs)
    for key in ("argv", "command"):
        prop = out.get("properties", {}).get(key)
        if isinstance(prop, dict):
            prop["description"] = f"{prop.get('description', '')} Allowed programs: {allowed}."
    return out


TOOLS = lazy_definitions(
    read_manifest(__package__),
    available={"shell": has_programs},
    schema_enrichers={"shell": list_programs},
)
