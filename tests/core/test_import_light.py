"""``import reyn_core`` stays light: no litellm, mcp, httpx or jsonschema (checked in a fresh process)."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("litellm", "mcp", "httpx", "jsonschema", "openai")


def modules_after(code: str) -> set[str]:
    script = f"import sys, json\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def heavy_in(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY)


def test_import_reyn_core_imports_no_heavy_dependency() -> None:
    assert heavy_in(modules_after("import reyn_core")) == []


def test_building_and_rendering_a_flat_tool_needs_no_heavy_dependency() -> None:
    code = """
import asyncio
from reyn_core import ToolContext, ToolDefinition
from reyn_core.host import RegistryBuilder, ToolRegistry, invoke_tool, render_phase, render_router
from reyn_core.registry import RegisteredTool
# Bypass registration checks (which use jsonschema's meta-schema) to look at render + dispatch alone.
schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
t = ToolDefinition(name="t", description="x", parameters=schema, handler=lambda a: a)
snapshot = ToolRegistry({"t": RegisteredTool(t)})
render_router(snapshot, ToolContext())
render_phase(snapshot, ToolContext(), ["default"])
asyncio.run(invoke_tool(snapshot, "t", {"a": 1}, ToolContext()))
"""
    assert heavy_in(modules_after(code)) == []


def test_a_six_pack_router_render_imports_no_logging_and_no_isolation(tmp_path) -> None:
    """A load that isolates nothing and logs nothing imports neither logging nor reyn-isolation, nor the
    sandbox's kernel probe or launcher (issue 23: removed start-up cost). The shell and mcp packs'
    settings declare their grant keys with ``reyn_sandbox.GrantKeys`` (issue 24), so the sandbox's
    declarations are imported: its plain-data modules only, no ctypes."""
    (tmp_path / "reyn.toml").write_text(
        '[plugins]\nenable = ["file", "shell", "web", "mcp", "memory", "catalog"]\n', encoding="utf-8"
    )
    code = f"""
import contextlib, io, os
os.chdir({str(tmp_path)!r})
os.environ["REYN_CACHE_DIR"] = {str(tmp_path / "cache")!r}
from reyn_core.cli import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    code = main(["tools", "render", "--surface", "router"])
assert code in (0, None), code
assert '"name": "read_file"' in out.getvalue()
"""
    modules = modules_after(code)
    assert "reyn_tools_catalog" in modules  # the packs were loaded
    assert "logging" not in modules and not any(m.split(".")[0] == "reyn_isolation" for m in modules)
    assert "reyn_sandbox._grant_keys" in modules  # control: the packs' settings took the grant keys
    light = {"reyn_sandbox", "reyn_sandbox._contract", "reyn_sandbox._grant_keys", "reyn_sandbox._grants"}
    light |= {"reyn_sandbox._profile_grants", "reyn_sandbox._paths", "reyn_sandbox._value"}
    assert {m for m in modules if m.startswith("reyn_sandbox")} <= light and "ctypes" not in modules
