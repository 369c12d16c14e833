"""Loading, listing and rendering the web pack never imports httpx (checked in a fresh process)."""

from __future__ import annotations

import json
import subprocess
import sys

SCRIPT = r"""
import json, sys
from reyn_core import ToolContext, ToolOrigin
from reyn_core.host import RegistryBuilder, ToolRegistry, render_phase, render_router
from reyn_tools_web import plugin
from reyn_tools_web.settings import WebSettings
s = WebSettings.model_validate(
    {"fetch": {"enabled": True}, "search": {"backend": "searxng", "searxng": {"url": "http://x"}}}
)
reg = RegistryBuilder(settings={"web": s})
plugin.reyn_register_tools(lambda t: reg.register(t, origin=ToolOrigin(kind="plugin", plugin_id="web")), s)
reg = reg.freeze()
ctx = ToolContext(surface="router")
names = [t["function"]["name"] for t in render_router(reg, ctx)]
render_phase(reg, ctx.with_surface("phase"), ["web"]).prompt_text()
heavy = sorted(m for m in ("httpx", "httpcore", "mcp") if m in sys.modules)
print(json.dumps({"names": names, "heavy": heavy}))
"""


def test_rendering_the_web_pack_does_not_import_httpx() -> None:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60, check=True
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["names"] == ["web_fetch", "web_search"]
    assert result["heavy"] == []
