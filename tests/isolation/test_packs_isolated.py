"""The example plugin and the file, web and memory packs run isolated as they run in process: the same
tools, and the same answers to the same calls (real workers, real files, a real SQLite store)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

import reyn_core.host as host
from reyn_core import ToolContext

from .plugin_kit import isolation_profile


def _load(pid: str, isolation: str, extra: str = "", workspace: Path | None = None) -> Any:
    result = host.load(
        host.Profile.from_toml_text(isolation_profile(pid, isolation) + extra),
        workspace=workspace,
    )
    info = next(i for i in result.report.plugins if i.plugin_id == pid)
    assert info.status == "loaded", [d.render() for d in info.diagnostics]
    return result


def _both(pid: str, extra: str = "") -> tuple[Any, Any]:
    return _load(pid, "in-process", extra), _load(pid, "process", extra)


def _names(result: Any) -> list[str]:
    return sorted(t.name for t in result.registry.tools())


def _call(result: Any, name: str, args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return asyncio.run(host.dispatch_tool(result.registry, name, args, ctx))


def _workspace(tmp_path: Path, name: str) -> Path:
    ws = tmp_path / name
    (ws / "out").mkdir(parents=True)
    os.chmod(tmp_path, 0o755)
    for folder in (ws, ws / "out"):
        os.chmod(folder, 0o777)  # the worker runs as an unprivileged user
    (ws / "a.txt").write_text("alpha\nbeta\n")
    return ws


def test_the_example_plugin(isolated_profile_env: None) -> None:
    in_process, isolated = _both("example", "[plugins.example.settings]\nprecision = 4\n")
    assert _names(isolated) == _names(in_process)
    ctx = ToolContext(surface="router")
    for name, args in (
        ("convert_units", {"value": 1, "from_unit": "mi", "to_unit": "km"}),
        ("text_stats", {"text": "one two three"}),
        ("convert_units", {"value": 1, "from_unit": "mi", "to_unit": "kg"}),
    ):
        assert _call(isolated, name, args, ctx) == _call(in_process, name, args, ctx)


def test_the_file_pack(isolated_profile_env: None, tmp_path: Path) -> None:
    ws = _workspace(tmp_path, "ws")
    extra = (
        f'[plugins.file.grants]\nread = ["{ws}"]\nwrite = ["{ws / "out"}"]\n'
        '[plugins.file.settings]\nread_roots = ["."]\nwrite_roots = ["out"]\n'
    )
    in_process, isolated = _both("file", extra)
    assert _names(isolated) == _names(in_process)
    ctx = ToolContext(surface="router", workspace=ws)
    for name, args in (
        ("read_file", {"path": "a.txt"}),
        ("grep_files", {"pattern": "beta"}),
        ("read_file", {"path": "../outside.txt"}),
    ):
        assert _call(isolated, name, args, ctx) == _call(in_process, name, args, ctx)
    written = _call(isolated, "write_file", {"path": "out/b.txt", "content": "from the worker"}, ctx)
    assert written["status"] == "ok" and (ws / "out" / "b.txt").read_text() == "from the worker"


def test_the_web_pack(isolated_profile_env: None) -> None:
    in_process, isolated = _both("web", "[plugins.web.grants]\nnetwork = true\n")
    assert _names(isolated) == _names(in_process)
    for surface in ("router", "mcp"):
        ctx = ToolContext(surface=surface)  # type: ignore[arg-type]
        assert [t["function"]["name"] for t in host.render_router(isolated.registry, ctx)] == [
            t["function"]["name"] for t in host.render_router(in_process.registry, ctx)
        ]
        args = {"url": "https://example.org"}
        # web_fetch is off until enabled: the availability answer crosses with its reason
        assert _call(isolated, "web_fetch", args, ctx) == _call(in_process, "web_fetch", args, ctx)


def test_the_memory_pack_with_sqlite(isolated_profile_env: None, tmp_path: Path) -> None:
    stores = {}
    for isolation in ("in-process", "process"):
        ws = _workspace(tmp_path, isolation)
        grants = f'[plugins.memory.grants]\nread = ["{ws}"]\nwrite = ["{ws}"]\n'
        # the load's workspace is the calls' (its store, protected, lies inside the worker's grants)
        result = _load("memory", isolation, grants, workspace=ws)
        ctx = ToolContext(surface="router", agent="tester", workspace=ws)
        entry = {
            "slug": "deploy",
            "name": "Deploy",
            "description": "how to deploy",
            "type": "reference",
            "body": "b",
        }
        assert _call(result, "remember_shared", entry, ctx)["status"] == "ok"
        listed = _call(result, "list_memory", {}, ctx)
        for item in listed["data"]["entries"]:
            item.pop("updated")  # when it was written: the one field that differs
        stores[isolation] = listed
        assert (ws / ".reyn" / "memory.db").exists()
        assert str(ws / ".reyn" / "memory.db") in result.host_files
    assert stores["process"] == stores["in-process"]
    assert stores["process"]["status"] == "ok"


@pytest.mark.parametrize("pid", ["catalog", "shell", "mcp"])
def test_the_other_packs_say_why_they_cannot_run_isolated(isolated_profile_env: None, pid: str) -> None:
    result = host.load(
        host.Profile.from_toml_text(
            f'[plugins]\nenable = ["{pid}"]\n[plugins.{pid}]\nisolation = "process"\n'
        )
    )
    codes = {d.code for d in result.report.diagnostics if d.is_error}
    assert codes & {"RJ004", "RJ009"}, [d.render() for d in result.report.diagnostics]


def test_the_catalog_refusal_names_every_reason_at_once(isolated_profile_env: None) -> None:
    result = host.load(
        host.Profile.from_toml_text(
            '[plugins]\nenable = ["catalog"]\n[plugins.catalog]\nisolation = "process"\n'
        )
    )
    [refusal] = [d for d in result.report.diagnostics if d.is_error]
    assert refusal.code == "RJ004"
    message = refusal.message
    assert (
        "(1) it declares the host bridges ask_user, catalog, dispatch_plan, run_skill, send_to_agent"
        in message
    )
    assert "worker's pipe carries only data" in message
    assert "(2) hook reyn_agent_tools: the host needs this hook's answer" in message
    assert "(3) tools invoke_skill, delegate_to_agent have schema enrichers" in message
    assert not any(t.origin and t.origin.plugin_id == "catalog" for t in result.registry.tools())
