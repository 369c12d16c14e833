"""Reyn catalog pack: skills and agents from folders of Markdown files (or the host's own catalogue),
skill invocation, delegation, plans and questions to the user through host bridges (the host
supplies a ``CatalogBridge`` service in its ``HostBridge``).

``catalog_diagnostics(settings)`` lists every problem in the configured folders (for ``reyn doctor``);
``default_bridge()`` is a simple in-process ``HostBridge`` for the CLI and the demo.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .bridges import DefaultHost, default_bridge
    from .catalog import catalog_diagnostics, catalog_for, coerce_host_catalog, load_catalog
    from .frontmatter import FrontMatter, FrontMatterError, parse_front_matter
    from .plans import Plan, PlanStep, plan_problems
    from .records import CODES, Agent, Catalog, CatalogDiagnostic, Skill
    from .service import CatalogBridge, catalog_service
    from .settings import CatalogSettings

# Names are imported on first use: loading the plugin (entry point ``reyn_tools_catalog.plugin``)
# imports this package first, and must not pay for the bridges (asyncio) it only needs on a call.
_MODULES = {
    ".bridges": ("DefaultHost", "default_bridge"),
    ".catalog": ("catalog_diagnostics", "catalog_for", "coerce_host_catalog", "load_catalog"),
    ".records": ("CODES", "Agent", "Catalog", "CatalogDiagnostic", "Skill"),
    ".frontmatter": ("FrontMatter", "FrontMatterError", "parse_front_matter"),
    ".plans": ("Plan", "PlanStep", "plan_problems"),
    ".service": ("CatalogBridge", "catalog_service"),
    ".settings": ("CatalogSettings",),
}
_MODULE_OF = {name: module for module, names in _MODULES.items() for name in names}


def __getattr__(name: str) -> Any:  # PEP 562: the module is imported on first access
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module, __name__), name)


__all__ = [
    "CODES",
    "Agent",
    "Catalog",
    "CatalogBridge",
    "CatalogDiagnostic",
    "CatalogSettings",
    "DefaultHost",
    "FrontMatter",
    "FrontMatterError",
    "Plan",
    "PlanStep",
    "Skill",
    "catalog_diagnostics",
    "catalog_for",
    "catalog_service",
    "coerce_host_catalog",
    "default_bridge",
    "load_catalog",
    "parse_front_matter",
    "plan_problems",
]
