"""The catalog pack's plugin module (entry point ``catalog`` in group ``reyn.plugins``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reyn_core import hookimpl

from .catalog import CatalogSettings, catalog_diagnostics, log
from .tools import CATALOG_TOOLS

REYN_API = 1
_LOGGED: set[str] = set()  # each problem is logged once per process, however often the plugin loads


@hookimpl
def reyn_settings_model() -> type[CatalogSettings]:
    """``[plugins.catalog.settings]``: see ``CatalogSettings``."""
    return CatalogSettings


@hookimpl
def reyn_register_tools(register: Callable[[Any], Any], settings: Any) -> None:
    """Register the eight catalog tools and log any problem in the configured folders as a warning."""
    for definition in CATALOG_TOOLS:
        register(definition)
    if isinstance(settings, CatalogSettings) and (settings.skill_dirs or settings.agent_dirs):
        for diag in catalog_diagnostics(settings):
            line = diag.render()
            if line not in _LOGGED:
                _LOGGED.add(line)
                log.warning("%s", line)


__all__ = ["REYN_API", "catalog_diagnostics", "reyn_register_tools", "reyn_settings_model"]
