"""Reyn catalog pack: skills and agents from folders of Markdown files (or the host's own catalogue),
skill invocation, delegation, plans and questions to the user through host bridges.

``catalog_diagnostics(settings)`` lists every problem in the configured folders (for ``reyn doctor``);
``default_bridge()`` is a simple in-process ``HostBridge`` for the CLI and the demo.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .bridges import DefaultHost, default_bridge
    from .catalog import (
        CODES,
        Agent,
        Catalog,
        CatalogDiagnostic,
        Skill,
        catalog_diagnostics,
        catalog_for,
        coerce_host_catalog,
        load_catalog,
    )
    from .frontmatter import FrontMatter, FrontMatterError, parse_front_matter
    from .plans import Plan, PlanStep, plan_problems
    from .settings import CatalogSettings

# Names are imported on first use: loading the plugin (entry point ``reyn_tools_catalog.plugin``)
# imports this package first, and must not pay for the bridges (asyncio) it only needs on a call.
_LAZY = {
    "DefaultHost": "bridges",
    "default_bridge": "bridges",
    "CODES": "catalog",
    "Agent": "catalog",
    "Catalog": "catalog",
    "CatalogDiagnostic": "catalog",
    "Skill": "catalog",
    "catalog_diagnostics": "catalog",
    "catalog_for": "catalog",
    "coerce_host_catalog": "catalog",
    "load_catalog": "catalog",
    "FrontMatter": "frontmatter",
    "FrontMatterError": "frontmatter",
    "parse_front_matter": "frontmatter",
    "Plan": "plans",
    "PlanStep": "plans",
    "plan_problems": "plans",
    "CatalogSettings": "settings",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "CODES",
    "Agent",
    "Catalog",
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
    "coerce_host_catalog",
    "default_bridge",
    "load_catalog",
    "parse_front_matter",
    "plan_problems",
]


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
