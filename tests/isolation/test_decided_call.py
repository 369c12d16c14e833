"""The worker's one way to run a handler (``WorkerPlugin.run_decided_call``, for a call the host's
dispatcher decided): a sync handler that returns an awaitable has it awaited under the tool's timeout,
as the dispatcher does in process. The plugin is a real install, loaded from its verified record."""

from __future__ import annotations

import asyncio
import importlib.metadata
from dataclasses import asdict
from pathlib import Path

import pytest

import reyn_core.host as host
from reyn_core import ToolContext, ToolTimeout

from .plugin_kit import install_package_plugin

PLUGIN = """
import asyncio

from reyn_core import hookimpl, tool

REYN_API = 1


async def _never():
    await asyncio.Event().wait()


async def _soon():
    return "done"


@tool(purity="read_only", timeout_s=0.2)
def hangs() -> str:
    \"\"\"A sync handler returning an awaitable that never ends.\"\"\"
    return _never()


@tool(purity="read_only", timeout_s=5)
def ends() -> str:
    \"\"\"A sync handler returning an awaitable that ends.\"\"\"
    return _soon()


@hookimpl
def reyn_register_tools(register, settings):
    register(hangs)
    register(ends)
"""


def test_a_sync_handlers_awaitable_runs_under_the_tools_timeout(site: Path) -> None:
    package = install_package_plugin(site, "decided", {"__init__.py": PLUGIN})
    (info,) = site.glob(f"{package}-*.dist-info")
    record = host.provenance_for(
        importlib.metadata.PathDistribution(info), plugin_id="decided", entry_point=package
    )
    plugin = host.plugin_from_record(asdict(record))
    plugin.register_tools()
    ctx = ToolContext(surface="cli")

    async def run(name: str) -> object:
        # the guard only turns a hang into a failure; the tool's own 0.2 s timeout must end it first
        return await asyncio.wait_for(plugin.run_decided_call(name, {}, ctx), 30)

    with pytest.raises(ToolTimeout, match=r"did not finish within 0\.2 s"):
        asyncio.run(run("hangs"))
    assert asyncio.run(run("ends")) == "done"  # the control
