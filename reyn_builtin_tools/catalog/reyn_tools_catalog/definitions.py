r"""The nine catalog tools as loading and rendering see them, read from the generated ``tools.json``
(name, description, parameters schema, gates, lazy ``"module:attr"`` handler), plus the light code
a manifest cannot hold: the schema enrichers listing the catalogue's current names.

The one source of truth is the ``@tool`` functions in ``tools.py`` (with their argument models,
``Plan`` included), imported on a tool's first call. After changing one, regenerate the manifest
(``tests/packs/test_lazy_definitions.py`` fails until you do)::

    python -m reyn_core.manifest reyn_tools_catalog.tools:CATALOG_TOOLS \
        > reyn_builtin_tools/catalog/reyn_tools_catalog/tools.json
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any

from reyn_core import ToolContext, lazy_definitions, read_manifest

if TYPE_CHECKING:
    from .records import Catalog


def _names_enricher(
    prop: str, names_of: Callable[[Catalog], Collection[str]]
) -> Callable[[dict[str, Any], ToolContext], dict[str, Any]]:
    """A schema enricher putting the catalogue's current names into ``properties[prop].enum``
    (removed when there are none). It edits the copy the renderer hands it, never the registry."""

    def enrich(params: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        from .catalog import catalog_for

        target = params.get("properties", {}).get(prop)
        if not isinstance(target, dict):
            return params
        try:
            names = sorted(names_of(catalog_for(ctx)))
        except Exception:  # a broken host catalogue must not break rendering
            names = []
        if names:
            target["enum"] = names
        else:
            target.pop("enum", None)
        return params

    return enrich


SKILL_NAMES = _names_enricher("skill", lambda c: c.skills)
AGENT_NAMES = _names_enricher("agent", lambda c: c.agents)


CATALOG_TOOLS = lazy_definitions(
    read_manifest(__package__),
    schema_enrichers={"invoke_skill": SKILL_NAMES, "delegate_to_agent": AGENT_NAMES},
)
