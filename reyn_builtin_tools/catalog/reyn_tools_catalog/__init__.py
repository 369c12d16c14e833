"""Reyn catalog pack: skills and agents from folders of Markdown files (or the host's own catalogue),
skill invocation, delegation, plans and questions to the user through host bridges.

``catalog_diagnostics(settings)`` lists every problem in the configured folders (for ``reyn doctor``);
``default_bridge()`` is a simple in-process ``HostBridge`` for the CLI and the demo.
"""

from __future__ import annotations

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
