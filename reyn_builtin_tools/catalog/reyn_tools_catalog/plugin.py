"""The catalog pack's plugin module (entry point ``catalog`` in group ``reyn.plugins``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from reyn_core import hookimpl, settings_as

from .catalog import catalog_diagnostics, load_catalog
from .definitions import CATALOG_TOOLS
from .settings import CatalogSettings

REYN_API = 1


@hookimpl
def reyn_settings_model() -> type[CatalogSettings]:
    """``[plugins.catalog.settings]``: see ``CatalogSettings``."""
    return CatalogSettings


@hookimpl
def reyn_register_tools(register: Callable[[Any], Any], settings: Any) -> None:
    """Register the nine catalog tools."""
    for definition in CATALOG_TOOLS:
        register(definition)


@hookimpl
def reyn_diagnostics(settings: Any) -> list[dict[str, Any]]:
    """Every problem in the configured skill and agent folders (RK001 to RK009), for the load report
    and ``reyn doctor``: a broken file is reported, never a crash."""
    s = settings_as(settings, CatalogSettings)
    if not (s.skill_dirs or s.agent_dirs):
        return []
    return [diag.as_dict() for diag in catalog_diagnostics(s)]


@hookimpl
def reyn_agent_tools(settings: Any) -> dict[str, list[str]]:
    """Each agent file's ``tools:`` list (front matter), as that agent's allowlist on every surface:
    the core's gates apply it to a caller whose ``ToolContext.agent`` is the agent's name. An agent
    file without ``tools:`` narrows nothing. The folders are read as the load sees them (relative
    ones against the working directory, as for ``reyn_diagnostics``)."""
    s = settings_as(settings, CatalogSettings)
    if not s.agent_dirs:
        return {}
    agents = load_catalog(s).agents.values()
    return {agent.name: list(agent.tools) for agent in agents if agent.tools is not None}


@hookimpl
def reyn_trusted_files(settings: Any, workspace: Path) -> dict[str, str]:
    """The skill and agent folders: an agent file's ``tools:`` list is that agent's allowlist on the
    next load, and a skill is instructions the model follows, so no confined process may rewrite
    them. Resolved against the load's workspace, where the catalog's tools read them."""
    s = settings_as(settings, CatalogSettings)
    found: dict[str, str] = {}
    for what, folders in (("agent folder", s.agent_dirs), ("skill folder", s.skill_dirs)):
        for folder in s.resolve(folders, workspace):
            found.setdefault(str(folder.absolute()), f"a catalog {what} (its files are trusted)")
    return found


__all__ = [
    "REYN_API",
    "catalog_diagnostics",
    "reyn_agent_tools",
    "reyn_diagnostics",
    "reyn_register_tools",
    "reyn_settings_model",
    "reyn_trusted_files",
]
