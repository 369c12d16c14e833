"""The search pack's optional semantic ranking (``[plugins.search.settings] semantic = true``):
BM25F fused with WordLlama's static embedding, whose model ships inside its wheel. It finds a tool by
meaning that shares no word with the request, keeps every gate, embeds each tool once per snapshot,
and without the extra installed fails closed with one clear error."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace

import pytest
from reyn_tools_search.index import search_tools, tool_index
from reyn_tools_search.settings import SearchSettings
from reyn_tools_search.tools import find_tools

from reyn_core import ToolContext, ToolDefinition, ToolGates, ToolOrigin
from reyn_core.host import RegistryBuilder, ToolRegistry, dispatch_tool

pytest.importorskip("wordllama", reason="the semantic extra: pip install 'reyn-tools-search[semantic]'")

ROUTER = ToolContext(surface="router")
PARAMS = {"type": "object", "properties": {"text": {"type": "string"}}}


def registry(*tools: ToolDefinition, semantic: bool = True) -> ToolRegistry:
    builder = RegistryBuilder()
    for t in tools:
        builder.register(t)
    builder.register(find_tools, origin=ToolOrigin(kind="plugin", plugin_id="search"))
    builder.set_settings("search", SearchSettings(semantic=semantic))
    return builder.freeze()


def tool(name: str, description: str, **extra: object) -> ToolDefinition:
    return ToolDefinition(
        name=name, description=description, parameters=PARAMS, handler=lambda text="": text, **extra
    )


TOOLS = (
    tool("forecast_lookup", "Tell the temperature, rain and wind expected in a city."),
    tool("ledger_post", "Post an entry to the accounting ledger."),
    tool("image_resize", "Scale a picture to a new width and height."),
)


def test_a_tool_sharing_no_word_with_the_request_is_found_by_meaning() -> None:
    reg = registry(*TOOLS)
    query = "will it be sunny tomorrow"
    assert search_tools(reg, query, ROUTER, exclude={"find_tools"}) == []  # control: no shared word
    hits = search_tools(reg, query, ROUTER, exclude={"find_tools"}, semantic=True)
    assert hits[0].name == "forecast_lookup"


async def test_find_tools_uses_the_setting_and_keeps_the_gates() -> None:
    hidden = tool("weather_admin", "Change the weather forecast service.", gates=ToolGates(router="deny"))
    reg = registry(*TOOLS, hidden)
    ctx = replace(ROUTER, extras={"registry": reg})
    on = await dispatch_tool(reg, "find_tools", {"query": "will it be sunny tomorrow", "limit": 20}, ctx)
    names = [t["name"] for t in on["data"]["tools"]]
    assert names[0] == "forecast_lookup" and "weather_admin" not in names and "find_tools" not in names
    off_reg = registry(*TOOLS, hidden, semantic=False)
    off_ctx = replace(ROUTER, extras={"registry": off_reg})
    off = await dispatch_tool(off_reg, "find_tools", {"query": "will it be sunny tomorrow"}, off_ctx)
    assert off["data"]["tools"] == []  # the default path stays lexical


def test_each_tool_is_embedded_once_per_snapshot_whatever_the_visible_set() -> None:
    reg = registry(*TOOLS)
    tool_index(reg, frozenset({"forecast_lookup", "ledger_post"}), semantic=True)
    vectors = reg.derived("tool_search.vectors", "wordllama-256", dict)
    first = vectors["forecast_lookup"]
    tool_index(reg, frozenset({"forecast_lookup", "image_resize"}), semantic=True)
    assert vectors["forecast_lookup"] is first and set(vectors) == {
        "forecast_lookup",
        "ledger_post",
        "image_resize",
    }
    # the lexical and the semantic index of one visible set are two entries
    names = frozenset({"forecast_lookup"})
    assert tool_index(reg, names) is not tool_index(reg, names, semantic=True)


def _without_the_extra(code: str) -> subprocess.CompletedProcess[str]:
    """``code`` in a fresh interpreter where ``import wordllama`` fails (as without the extra)."""
    prelude = "import sys\nsys.modules['wordllama'] = None\n"
    return subprocess.run([sys.executable, "-c", prelude + code], capture_output=True, text=True, timeout=120)


def test_without_the_extra_the_load_reports_rq001_and_a_search_is_runtime_missing() -> None:
    proc = _without_the_extra(
        "import asyncio\n"
        "from dataclasses import replace\n"
        "from reyn_core import ToolContext, ToolOrigin\n"
        "from reyn_core.host import RegistryBuilder, dispatch_tool\n"
        "from reyn_tools_search import plugin\n"
        "from reyn_tools_search.settings import SearchSettings\n"
        "from reyn_tools_search.tools import find_tools\n"
        "print([d['code'] for d in plugin.reyn_diagnostics(SearchSettings(semantic=True))])\n"
        "print(plugin.reyn_diagnostics(SearchSettings()))\n"  # control: off needs nothing
        "b = RegistryBuilder()\n"
        "b.register(find_tools, origin=ToolOrigin(kind='plugin', plugin_id='search'))\n"
        "b.set_settings('search', SearchSettings(semantic=True))\n"
        "reg = b.freeze()\n"
        "ctx = ToolContext(surface='router', extras={'registry': reg})\n"
        "env = asyncio.run(dispatch_tool(reg, 'find_tools', {'query': 'x'}, ctx))\n"
        "print(env['error']['kind'], env['error']['message'])\n"
    )
    assert proc.returncode == 0, proc.stderr
    codes, off, refused = proc.stdout.splitlines()
    assert codes == "['RQ001']" and off == "[]"
    assert refused.startswith("runtime_missing ") and "reyn-tools-search[semantic]" in refused
