"""The core runs a plugin out of process only through its isolation extension point (the entry point
``process`` of the group ``reyn.isolation``), and fails closed: when the point has no single backend
the plugin is refused with ``RJ012`` and never imported in process instead; with reyn-isolation's
backend alone, the same profile runs it in a worker (positive control). The case where reyn-isolation
is not installed at all is the fresh venv of test_isolated_wheel.py. Real worker processes."""

from __future__ import annotations

import asyncio
import importlib
import sys
import textwrap
from pathlib import Path
from typing import Any

import reyn_core.host as host
from reyn_core import ToolContext
from reyn_core.loading.step2_discovery.discovery import discover

from .plugin_kit import install_package_plugin

PLUGIN = '''
from reyn_core import hookimpl, tool

REYN_API = 1


@tool(purity="read_only")
def shout(text: str) -> str:
    """Upper-case text."""
    return text.upper()


@hookimpl
def reyn_register_tools(register, settings):
    register(shout)
'''

PROFILE = '[plugins]\nenable = ["loud"]\n\n[plugins.loud]\nisolation = "process"\n'


def _second_backend(site: Path) -> None:
    """A second distribution claiming the entry point ``process`` of ``reyn.isolation`` (its object
    would import the plugin in process: it must never be called)."""
    (site / "reyn_rogue_backend.py").write_text(
        textwrap.dedent(
            """
            import importlib

            class InProcess:
                def isolate(self, request):
                    importlib.import_module(request.record.entry_point)
                    raise AssertionError("the core called an ambiguous backend")

            backend = InProcess()
            """
        )
    )
    info = site / "reyn_rogue_backend-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: reyn-rogue-backend\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[reyn.isolation]\nprocess = reyn_rogue_backend:backend\n")
    importlib.invalidate_caches()


def _plugin(result: Any) -> Any:
    [info] = [i for i in result.report.plugins if i.plugin_id == "loud"]
    return info


def test_two_backends_refuse_the_plugin_and_it_is_not_imported_in_process(site: Path) -> None:
    name = install_package_plugin(site, "loud", {"__init__.py": PLUGIN})
    _second_backend(site)
    result = host.load(host.Profile.from_toml_text(PROFILE))
    info = _plugin(result)
    assert info.status == "refused" and "shout" not in result.registry
    [diag] = [d for d in info.diagnostics if d.code == "RJ012"]
    assert "2 installed entry points of 'reyn.isolation' are named 'process'" in diag.message
    assert "reyn_rogue_backend:backend" in diag.message and "uninstall all but one" in diag.message
    assert name not in sys.modules and "reyn_rogue_backend" not in sys.modules


def test_with_reyn_isolation_alone_the_same_profile_runs_the_plugin_in_a_worker(site: Path) -> None:
    # positive control: the same plugin and profile, reyn-isolation the only backend
    name = install_package_plugin(site, "loud", {"__init__.py": PLUGIN})
    discover(refresh=True)
    result = host.load(host.Profile.from_toml_text(PROFILE))
    info = _plugin(result)
    assert info.status == "loaded", info.diagnostics
    assert [d.code for d in info.diagnostics] == ["RJ008"]
    assert info.permissions["isolation"] == "process" and info.permissions["landlock_abi"]
    assert name not in sys.modules  # the worker imported it, not the host
    # the call crosses the worker's pipes
    envelope = asyncio.run(host.dispatch_tool(result.registry, "shout", {"text": "hi"}, ToolContext()))
    assert envelope == {"status": "ok", "data": "HI"}


def test_the_backend_is_the_typed_extension_point() -> None:
    from importlib.metadata import entry_points

    [ep] = entry_points(group="reyn.isolation", name="process")
    backend = ep.load()
    assert ep.value == "reyn_isolation.step:backend"
    assert callable(backend.isolate)  # a host.PluginIsolation
    assert host.PluginIsolation.isolate.__doc__
