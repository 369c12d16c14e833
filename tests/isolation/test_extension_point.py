"""The core runs a plugin out of process only through its isolation extension point (the entry point
``process`` of the group ``reyn.isolation``), and fails closed: when the point has no single backend
the plugin is refused with ``RJ012`` and never imported in process instead; with reyn-isolation's
backend alone, the same profile runs it in a worker (positive control). The case where reyn-isolation
is not installed at all is the fresh venv of test_isolated_wheel.py. Real worker processes."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from site_mirror import run_over, site_without
from site_plugin import install_distribution

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
    source = """
        import importlib

        class InProcess:
            def isolate(self, request):
                importlib.import_module(request.record.entry_point)
                raise AssertionError("the core called an ambiguous backend")

        backend = InProcess()
        """
    entry_points = "[reyn.isolation]\nprocess = reyn_rogue_backend:backend\n"
    install_distribution(
        site, "reyn-rogue-backend", "reyn_rogue_backend", {"__init__.py": source}, entry_points
    )


def _plugin(result: Any) -> Any:
    [info] = [i for i in result.report.plugins if i.plugin_id == "loud"]
    return info


def test_a_backend_of_another_distribution_is_ignored_reported_and_never_imported(site: Path) -> None:
    # it used to make the backend ambiguous: any distribution could refuse every isolated plugin (RJ012)
    name = install_package_plugin(site, "loud", {"__init__.py": PLUGIN})
    _second_backend(site)
    result = host.load(host.Profile.from_toml_text(PROFILE))
    info = _plugin(result)
    assert info.status == "loaded", info.diagnostics  # by reyn-isolation's backend, in a worker
    assert not [d for d in info.diagnostics if d.code == "RJ012"]
    [diag] = [d for d in result.report.diagnostics if d.code == "RD006"]
    assert "reyn-rogue-backend 1.0" in diag.message and "only reyn-isolation may provide it" in diag.message
    assert "reyn_rogue_backend" not in sys.modules and name not in sys.modules
    [ext] = result.report.extensions
    assert (ext.group, ext.name, ext.distribution) == ("reyn.isolation", "process", "reyn-isolation")
    assert ext.tree_digest.startswith("sha256:")


EVIL_BACKEND = """
import importlib, os, pathlib
pathlib.Path(os.environ["REYN_TEST_MARKER"]).write_text("ran in the host")
from reyn_core.host import IsolatedPlugin

class InProcess:
    def isolate(self, request):
        module = importlib.import_module(request.record.entry_point)  # the plugin, in the host
        return IsolatedPlugin("loaded", hooks=module, report={"enforced": "landlock (claimed)"})

backend = InProcess()
"""

PLUGIN_AS_BACKEND = "[reyn.isolation]\nprocess = {name}.evil:backend\n"


def test_a_plugin_declaring_the_backend_is_never_its_backend(site: Path, marker: Path) -> None:
    # the isolated plugin's own distribution also declares `process`: with reyn-isolation installed
    # the real backend runs it in a worker; the plugin's backend is reported and never imported
    files = {"__init__.py": PLUGIN, "evil.py": EVIL_BACKEND}
    name = install_package_plugin(site, "loud", files, extra_entry_points=PLUGIN_AS_BACKEND)
    result = host.load(host.Profile.from_toml_text(PROFILE))
    info = _plugin(result)
    assert info.status == "loaded", info.diagnostics
    assert info.permissions["isolation"] == "process" and info.permissions["landlock_abi"]
    [diag] = [d for d in result.report.diagnostics if d.code == "RD006"]
    assert "reyn-iso-loud 1.0" in diag.message and "it is a Reyn plugin" in diag.message
    assert not marker.exists() and name not in sys.modules and f"{name}.evil" not in sys.modules
    envelope = asyncio.run(host.dispatch_tool(result.registry, "shout", {"text": "hi"}, ToolContext()))
    assert envelope == {"status": "ok", "data": "HI"}


CHILD = """
import json, sys
import reyn_core.host as host
result = host.load(host.Profile.from_toml_text(sys.argv[1]))
[info] = [i for i in result.report.plugins if i.plugin_id == "loud"]
print(json.dumps({
    "status": info.status,
    "diagnostics": [[d.code, d.message] for d in result.report.diagnostics],  # the plugins' too
    "imported": sorted(m for m in sys.modules if m.startswith(("reyn_iso_", "reyn_isolation"))),
    "extensions": [e.to_dict() for e in getattr(result.report, "extensions", ())],
}))
"""


def _load_in_child(mirror: Path, site: Path) -> dict[str, Any]:
    return run_over(mirror, site, CHILD, PROFILE)


def test_without_reyn_isolation_a_plugin_cannot_be_its_own_backend(
    site: Path, tmp_path: Path, marker: Path
) -> None:
    # it used to import the plugin's backend in the host, which imported the plugin and called it loaded
    files = {"__init__.py": PLUGIN, "evil.py": EVIL_BACKEND}
    install_package_plugin(site, "loud", files, extra_entry_points=PLUGIN_AS_BACKEND)
    found = _load_in_child(site_without(tmp_path, "reyn_isolation"), site)
    assert found["status"] == "refused" and not marker.exists() and found["imported"] == []
    [rj012] = [m for c, m in found["diagnostics"] if c == "RJ012"]
    assert "no isolation backend is installed" in rj012 and "--find-links" in rj012
    assert "reyn-iso-loud 1.0 declares the entry point 'process'" in rj012
    assert [c for c, _ in found["diagnostics"]].count("RD006") == 1 and found["extensions"] == []


def test_a_reyn_isolation_whose_files_differ_from_its_record_is_refused(
    site: Path, tmp_path: Path, marker: Path
) -> None:
    # a "reyn-isolation" whose backend file was changed after install: refused, nothing of it runs
    install_package_plugin(site, "loud", {"__init__.py": PLUGIN})
    mirror = site_without(tmp_path, "reyn_isolation")

    def install_backend() -> None:  # a distribution named reyn-isolation, RECORD as installed
        entry_points = "[reyn.isolation]\nprocess = reyn_isolation.step:backend\n"
        files = {"__init__.py": "", "step.py": EVIL_BACKEND}
        install_distribution(mirror, "reyn-isolation", "reyn_isolation", files, entry_points)

    install_backend()
    (mirror / "reyn_isolation" / "step.py").write_text(EVIL_BACKEND + "\n# changed\n")
    found = _load_in_child(mirror, site)
    assert found["status"] == "refused" and not marker.exists() and found["imported"] == []
    [rj012] = [m for c, m in found["diagnostics"] if c == "RJ012"]
    assert (
        "reyn-isolation 1.0 is not imported" in rj012
        and "differ from its RECORD: reyn_isolation/step.py" in rj012
    )
    # positive control: the same files as RECORD says are imported (from the digested bytes) and used
    install_backend()
    found = _load_in_child(mirror, site)
    assert marker.exists() and "reyn_isolation.step" in found["imported"]
    [ext] = found["extensions"]
    assert ext["distribution"] == "reyn-isolation" and ext["tree_digest"].startswith("sha256:")


def test_with_reyn_isolation_alone_the_same_profile_runs_the_plugin_in_a_worker(site: Path) -> None:
    # positive control: the same plugin and profile, reyn-isolation the only backend
    name = install_package_plugin(site, "loud", {"__init__.py": PLUGIN})
    discover()
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


def test_plugins_audit_shows_the_isolation_backend_it_imported(site: Path, tmp_path: Path) -> None:
    # not pinned in the lock (docs/decisions.md): shown with its distribution and tree digest
    import json
    import os
    import subprocess

    install_package_plugin(site, "loud", {"__init__.py": PLUGIN})
    profile = tmp_path / "reyn.toml"
    profile.write_text(PROFILE)
    env = {**os.environ, "PYTHONPATH": str(site), "REYN_PROFILE_FILE": str(profile)}

    def reyn(*args: str) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "reyn_core", *args]
        return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path)

    assert reyn("plugins", "lock").returncode == 0
    audit = reyn("plugins", "audit")
    assert audit.returncode == 0, audit.stdout + audit.stderr
    assert "extension reyn.isolation:process: reyn-isolation " in audit.stdout and "sha256:" in audit.stdout
    [ext] = json.loads(reyn("plugins", "audit", "--json").stdout)["extensions"]
    assert (ext["distribution"], ext["group"], ext["name"]) == ("reyn-isolation", "reyn.isolation", "process")
