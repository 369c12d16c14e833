r"""The web pack's two tools as ``@tool`` functions: the one source of truth of their names,
descriptions, parameter schemas and gates. Imported on a tool's first call (it imports the fetch and
search modules, and so httpx); loading and rendering read the generated ``tools.json`` through
``definitions.py`` instead. After changing a tool, regenerate the manifest
(``tests/packs/test_lazy_definitions.py`` fails until you do)::

    python -m reyn_core.manifest reyn_tools_web.tools:TOOLS \
        > reyn_builtin_tools/web/reyn_tools_web/tools.json
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from reyn_core import ToolContext, ToolGates, tool

from . import fetch, search
from .availability import fetch_available, search_available

CLUSTER = "web"
GATES = ToolGates(router="allow", phase="allow")


class WebFetchArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(min_length=1, max_length=2048, description="Absolute http:// or https:// URL.")
    max_length: int = Field(
        20000, ge=1, le=100000, description="Maximum number of characters of text to return."
    )
    start_index: int = Field(default=0, ge=0, description="Character offset to start the text window at.")


@tool(cluster=CLUSTER, purity="external", gates=GATES, available=fetch_available)
async def web_fetch(args: WebFetchArgs, ctx: ToolContext) -> dict[str, Any]:
    """Fetch a public web page (http/https) and return its readable text, title and links.
    Long pages are windowed: pass start_index (from next_start_index) to read on."""
    return await fetch.web_fetch(args.url, args.max_length, args.start_index, ctx)


class WebSearchArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=500, description="Search terms.")
    max_results: Annotated[int, Field(ge=1, le=20)] | SkipJsonSchema[None] = Field(
        None,
        description="How many results to return (default from settings).",
    )


@tool(cluster=CLUSTER, purity="external", gates=GATES, available=search_available)
async def web_search(args: WebSearchArgs, ctx: ToolContext) -> dict[str, Any]:
    """Search the web and return results as a list of {title, url, snippet}."""
    return await search.web_search(args.query, args.max_results, ctx)


TOOLS = (web_fetch, web_search)
