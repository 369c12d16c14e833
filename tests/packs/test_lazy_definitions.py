"""Packs register light definitions with lazy ``"module:attr"`` handlers, read from a generated
``tools.json`` manifest, so that loading and rendering never import the handler modules
(docs/performance.md). The manifest must equal what ``tool_manifest`` derives from the pack's
``@tool`` definitions (parameters key order included, since that is what a model is sent)."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reyn_core import read_manifest, tool_manifest

ROOT = Path(__file__).resolve().parents[2]

# pack: (module of the registered definitions, module of the @tool definitions, their tuple's name)
PACKS = {
    "file": ("reyn_tools_file.definitions", "reyn_tools_file.tools", "TOOLS"),
    "catalog": ("reyn_tools_catalog.definitions", "reyn_tools_catalog.tools", "CATALOG_TOOLS"),
    "memory": ("reyn_tools_memory.definitions", "reyn_tools_memory.tools", "MEMORY_TOOLS"),
    "shell": ("reyn_tools_shell.definitions", "reyn_tools_shell.tools", "TOOLS"),
    "web": ("reyn_tools_web.definitions", "reyn_tools_web.tools", "TOOLS"),
    "source": ("reyn_tools_source.definitions", "reyn_tools_source.tools", "TOOLS"),
    "search": ("reyn_tools_search.definitions", "reyn_tools_search.tools", "TOOLS"),
    # the three static tools; import-mode tools come from a server's snapshot, built at load
    "mcp": ("reyn_tools_mcp.definitions", "reyn_tools_mcp.tools", "TOOLS"),
}


def _regenerate(pack: str) -> str:
    _, heavy, attr = PACKS[pack]
    package = heavy.split(".")[0]
    return f"python -m reyn_core.manifest {heavy}:{attr} > reyn_builtin_tools/{pack}/{package}/tools.json"


@pytest.mark.parametrize("pack", list(PACKS))
def test_the_shipped_manifest_equals_the_tool_functions(pack: str) -> None:
    light, heavy, attr = PACKS[pack]
    package = heavy.split(".")[0]
    generated = tool_manifest(getattr(importlib.import_module(heavy), attr))
    assert generated == read_manifest(package), (
        f"{package}/tools.json is stale; regenerate it: {_regenerate(pack)}"
    )
    # And byte for byte (key order is part of what a model is sent): the CLI's own check.
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "reyn_core.manifest",
            f"{heavy}:{attr}",
            "--check",
            str(ROOT / "reyn_builtin_tools" / pack / package / "tools.json"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, f"{proc.stderr}\nregenerate it: {_regenerate(pack)}"
    # What the manifest cannot hold: the light module passes the very callables the @tool uses.
    registered = getattr(importlib.import_module(light), attr)
    decorated = getattr(importlib.import_module(heavy), attr)
    assert [t.name for t in registered] == [t.name for t in decorated]
    for r, d in zip(registered, decorated, strict=True):
        assert (r.available, r.schema_enricher) == (d.available, d.schema_enricher), r.name
        assert tool_manifest([r]) == tool_manifest([d]), r.name


@pytest.mark.parametrize("pack", list(PACKS))
def test_registering_the_pack_does_not_import_its_handlers(pack: str) -> None:
    light, heavy, _ = PACKS[pack]
    plugin = light.split(".")[0] + ".plugin"
    code = (
        f"import inspect, pathlib, sys, {plugin} as p\n"
        "seen = []\n"
        "wanted = inspect.signature(p.reyn_register_tools).parameters\n"  # pluggy passes only these
        "extra = {'workspace': pathlib.Path.cwd()} if 'workspace' in wanted else {}\n"
        "p.reyn_register_tools(register=seen.append, settings=None, **extra)\n"
        f"assert seen and {heavy!r} not in sys.modules, sorted(sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


_RENDER = """
import json, sys
import reyn_core
import reyn_core.host
from reyn_core.loading.step1_profile.profile import load_profile
result = reyn_core.host.load(load_profile())
assert not [d for d in result.report.diagnostics if d.severity == "error"], result.report.diagnostics
reyn_core.host.render_router(result.registry, reyn_core.ToolContext(surface="router"))
reyn_core.host.render_phase(result.registry, reyn_core.ToolContext(surface="phase"), None)
print(json.dumps(sorted(sys.modules)))
"""

# Imported by no load or render: the dispatcher, asyncio (~20 ms), and every pack's handler modules.
_NOT_ON_THE_RENDER_PATH = (
    "asyncio",
    "reyn_core.dispatch",
    "reyn_tools_file.tools",
    "reyn_tools_catalog.tools",
    "reyn_tools_catalog.bridges",
    "reyn_tools_memory.tools",
    "reyn_tools_memory.store",
    "reyn_tools_memory.cli",
    "reyn_tools_shell.tools",
    "reyn_tools_shell.process",
    "reyn_tools_web.tools",
    "reyn_tools_web.fetch",
    "reyn_tools_web.search",
    "reyn_tools_mcp.tools",
    "reyn_tools_mcp.client",
)


def test_loading_and_rendering_every_pack_imports_no_handler_module(tmp_path) -> None:
    packs = ["file", "web", "memory", "catalog", "mcp", "shell"]
    (tmp_path / "reyn.toml").write_text(f"[plugins]\nenable = {json.dumps(packs)}\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("REYN_")}
    env["REYN_CACHE_DIR"] = str(tmp_path / "cache")
    for _ in range(2):  # cold caches, then warm
        proc = subprocess.run(
            [sys.executable, "-c", _RENDER],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        imported = set(json.loads(proc.stdout))
        assert not imported & set(_NOT_ON_THE_RENDER_PATH), sorted(imported & set(_NOT_ON_THE_RENDER_PATH))
