r"""The search pack's tool as a ``@tool`` function: the one source of truth of its name, description,
parameter schema and gates. Imported on its first call; loading and rendering read the generated
``tools.json`` through ``definitions.py``. After changing it, regenerate the manifest
(``tests/packs/test_lazy_definitions.py`` fails until you do)::

    python -m reyn_core.manifest reyn_tools_search.tools:TOOLS \
        > reyn_builtin_tools/search/reyn_tools_search/tools.json

``find_tools`` ranks the tools of the registry the host serves (``ctx.extras["registry"]``, as every
Reyn host passes it) that the gates offer this caller, and nothing else: the candidates are
``registry.visible_names(ctx.surface, ctx)``. Its result, ``{"tools": [{"name", "summary",
"matched"}, ...], "note"}``, is the shape the core's deferral reads (``found_tool_names``): the
tools it names join the router's array from the next turn on.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from reyn_core import ToolContext, ToolGates, ToolRuntimeMissing, settings_as, tool
from reyn_core.host import ToolRegistry

from .index import DEFAULT_LIMIT, MAX_LIMIT, MAX_QUERY_CHARS, search_tools
from .settings import SearchSettings

CLUSTER = "tool_search"
ROUTER_ONLY = ToolGates(router="allow", phase="deny")

SEARCH_TOOL_DESCRIPTION = (
    "Search for tools that are not in your tool list. More tools are installed than are listed; "
    "describe in a few words what you need to do (e.g. 'convert currency', 'read a csv file') and "
    "the best matches are returned with a one-line summary and the words that matched. Tools found "
    "are added to your tool list from your next turn; you may also call one directly by its exact name."
)


def _search_tool_names(registry: ToolRegistry) -> frozenset[str]:
    """The registry's search tools (this pack's cluster), never returned by a search: a model that
    asks for "a tool to search" is offered what it can do, not the search it is running."""
    return registry.derived(
        "tool_search.own",
        CLUSTER,
        lambda: frozenset(t.name for t in registry.tools() if t.cluster == CLUSTER),
    )


# The arguments of find_tools (no docstring: a model's docstring would become the schema's description).
class FindToolsArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(
        min_length=1,
        description=f"What you want to do, in a few words (only the first {MAX_QUERY_CHARS} "
        "characters are read).",
    )
    limit: int = Field(
        default=DEFAULT_LIMIT, ge=1, le=MAX_LIMIT, description="How many tools to return (default 5)."
    )


@tool(
    name="find_tools",
    description=SEARCH_TOOL_DESCRIPTION,
    gates=ROUTER_ONLY,
    cluster=CLUSTER,
    purity="read_only",
    timeout_s=30.0,
)
def find_tools(args: FindToolsArgs, ctx: ToolContext) -> dict[str, Any]:
    registry = ctx.extras.get("registry")
    if not isinstance(registry, ToolRegistry):
        raise ToolRuntimeMissing(
            "tool 'find_tools' cannot search: the host must pass the tool registry it serves as "
            "ToolContext(extras={'registry': registry})",
            tool="find_tools",
        )
    semantic = settings_as(ctx, SearchSettings).semantic
    if semantic:
        from .semantic import load_model

        load_model()  # without the extra: runtime_missing on every call, whatever the registry holds
    hits = search_tools(
        registry, args.query, ctx, limit=args.limit, exclude=_search_tool_names(registry), semantic=semantic
    )
    if not hits:
        note = "no tool matched; try other or fewer words"
    else:
        note = "these tools are in your tool list from your next turn; call one by its name"
    return {"tools": [h.to_json() for h in hits], "note": note}


TOOLS = (find_tools,)
