"""The web pack's plugin module (entry point ``web``): settings model and tool definitions.

The definitions carry hand-written parameter schemas and lazy ``"module:attr"`` handlers, so that
loading, listing and rendering this pack never import httpx.
"""

from __future__ import annotations

from typing import Any

from reyn_core import ToolDefinition, ToolGates, hookimpl

from .availability import fetch_available, search_available
from .settings import WebSettings

REYN_API = 1

WEB_FETCH = ToolDefinition(
    name="web_fetch",
    description=(
        "Fetch a public web page (http/https) and return its readable text, title and links. "
        "Long pages are windowed: pass start_index (from next_start_index) to read on."
    ),
    parameters={
        "type": "object",
        "properties": {
            "url": {
                "type": "string",
                "minLength": 1,
                "maxLength": 2048,
                "description": "Absolute http:// or https:// URL.",
            },
            "max_length": {
                "type": "integer",
                "minimum": 1,
                "maximum": 100000,
                "default": 20000,
                "description": "Maximum number of characters of text to return.",
            },
            "start_index": {
                "type": "integer",
                "minimum": 0,
                "default": 0,
                "description": "Character offset to start the text window at.",
            },
        },
        "required": ["url"],
        "additionalProperties": False,
    },
    handler="reyn_tools_web.fetch:web_fetch",
    gates=ToolGates(router="allow", phase="allow"),
    cluster="web",
    purity="external",
    available=fetch_available,
)

WEB_SEARCH = ToolDefinition(
    name="web_search",
    description="Search the web and return results as a list of {title, url, snippet}.",
    parameters={
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1, "maxLength": 500, "description": "Search terms."},
            "max_results": {
                "type": "integer",
                "minimum": 1,
                "maximum": 20,
                "description": "How many results to return (default from settings).",
            },
        },
        "required": ["query"],
        "additionalProperties": False,
    },
    handler="reyn_tools_web.search:web_search",
    gates=ToolGates(router="allow", phase="allow"),
    cluster="web",
    purity="external",
    available=search_available,
)

TOOLS: tuple[ToolDefinition, ...] = (WEB_FETCH, WEB_SEARCH)


@hookimpl
def reyn_settings_model() -> type[WebSettings]:
    """``[plugins.web.settings]``."""
    return WebSettings


@hookimpl
def reyn_register_tools(register: Any, settings: Any) -> None:
    """Register ``web_fetch`` and ``web_search``; availability is decided per call from settings."""
    for definition in TOOLS:
        register(definition)


@hookimpl
def reyn_diagnostics(settings: Any) -> list[dict[str, str]]:
    """RW001 (web_fetch is off) and RW002 (no usable search backend), for ``reyn doctor``."""
    from .availability import diagnostics

    return diagnostics(settings)
