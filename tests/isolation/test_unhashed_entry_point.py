"""Only hashed bytes are imported, whether a plugin runs in process or isolated: an entry point naming a
module the digest does not cover (a file in site-packages that no RECORD lists) is refused ``RI009`` on
both paths, before anything of it runs — by the host before a worker starts, and by the worker's own
``plugin_from_record`` for a record it is sent. The same layout with a covered module loads both ways.
Real installs in a site folder, real worker processes."""

from __future__ import annotations

import asyncio
import hashlib
import importlib.metadata
from dataclasses import asdict
from pathlib import Path

import pytest
from site_plugin import install_distribution

import reyn_core.host as host
from reyn_core import ToolContext
from reyn_core.loading.step2_discovery.discovery import discover

from .plugin_kit import isolation_profile

PLUGIN = """
import pathlib

from reyn_core import hookimpl, tool

REYN_API = 1
try:  # proves the module ran in this process (a worker, granted no write, cannot)
    pathlib.Path({marker!r}).write_text("imported")
except OSError:
    pass


@tool(purity="read_only")
def where() -> str:
    \"\"\"Say which module answered.\"\"\"
    return __name__


@hookimpl
def reyn_register_tools(register, settings):
    register(where)
"""


def _install(site: Path, marker: Path, *, covered: bool) -> tuple[str, str]:
    """A distribution whose package is in its RECORD; its entry point names that package (covered) or
    a module beside it, in a namespace package that no RECORD lists (so no digest covers it).
    Returns the plugin id and the entry point's module."""
    tag = hashlib.sha256(f"{site}{covered}".encode()).hexdigest()[:8]
    plugin_id = f"unhashed_{'covered' if covered else 'outside'}"
    package = f"reyn_iso_pkg_{tag}"
    code = PLUGIN.format(marker=str(marker))
    if covered:
        module = package
        install_distribution(
            site,
            f"reyn-iso-{plugin_id}",
            package,
            {"__init__.py": code},
            f"[reyn.plugins]\n{plugin_id} = {module}\n",
        )
    else:
        outside = site / f"reyn_iso_outside_{tag}"  # a namespace package: no RECORD lists it
        module = f"{outside.name}.plugin"
        install_distribution(
            site,
            f"reyn-iso-{plugin_id}",
            package,
            {"__init__.py": "REYN_API = 1\n"},
            f"[reyn.plugins]\n{plugin_id} = {module}\n",
        )
        outside.mkdir(exist_ok=True)
        (outside / "plugin.py").write_text(code)  # never hashed
    discover()
    return plugin_id, module


def _load(plugin_id: str, isolation: str) -> host.LoadResult:
    return host.load(host.Profile.from_toml_text(isolation_profile(plugin_id, isolation)))


@pytest.mark.parametrize("isolation", ["in-process", "process"])
def test_an_entry_point_outside_the_digest_is_refused_ri009_both_ways(
    site: Path, tmp_path: Path, isolation: str
) -> None:
    marker = tmp_path / "marker"
    plugin_id, _ = _install(site, marker, covered=False)
    result = _load(plugin_id, isolation)
    info = result.report.plugin(plugin_id)
    assert info is not None and info.status == "refused"
    ri009 = [d for d in info.diagnostics if d.code == "RI009"]
    assert len(ri009) == 1 and "does not cover import package" in ri009[0].message, info.diagnostics
    assert ri009[0].hint == host.DIAGNOSTIC_CODES["RI009"].hint
    assert not [d for d in info.diagnostics if d.code == "RJ008"]  # no worker was started
    assert not marker.exists()  # the unhashed module never ran, in the host or in a worker
    assert not any(t.name == "where" for t in result.registry.tools())


@pytest.mark.parametrize("isolation", ["in-process", "process"])
def test_a_covered_entry_point_loads_both_ways(site: Path, tmp_path: Path, isolation: str) -> None:
    marker = tmp_path / "marker"
    plugin_id, module = _install(site, marker, covered=True)
    result = _load(plugin_id, isolation)
    info = result.report.plugin(plugin_id)
    assert info is not None and info.status == "loaded", info.diagnostics
    reply = asyncio.run(host.dispatch_tool(result.registry, "where", {}, ToolContext(surface="cli")))
    assert reply == {"status": "ok", "data": module}


def _record(site: Path, plugin_id: str, module: str) -> dict[str, object]:
    package = module.split(".")[0] if module.startswith("reyn_iso_pkg_") else None
    (info,) = [
        i for i in site.glob("reyn_iso_pkg_*.dist-info") if package is None or i.name.startswith(package)
    ]
    dist = importlib.metadata.PathDistribution(info)
    return asdict(host.provenance_for(dist, plugin_id=plugin_id, entry_point=module))


def test_the_workers_own_load_refuses_a_record_that_does_not_cover_the_entry_point(
    site: Path, tmp_path: Path
) -> None:
    """What a worker is sent is checked again where it imports: an uncovered module is ``RI009``, a
    record with files that differ from their RECORD ``RP002``, one whose digest may be incomplete
    ``RP005`` — each before anything is imported."""
    marker = tmp_path / "marker"
    plugin_id, module = _install(site, marker, covered=False)
    with pytest.raises(host.PluginLoadError) as info:
        host.plugin_from_record(_record(site, plugin_id, module))
    assert info.value.code == "RI009" and "does not cover import package" in info.value.message
    assert not marker.exists()

    covered_id, covered = _install(site, marker, covered=True)
    record = _record(site, covered_id, covered)
    for field, code in (("record_mismatches", "RP002"), ("problems", "RP005")):
        with pytest.raises(host.PluginLoadError) as info:
            host.plugin_from_record({**record, field: ["a file was changed after install"]})
        assert info.value.code == code, field
    assert not marker.exists()

    plugin = host.plugin_from_record(record)  # the control: the same record, unchanged, loads
    assert marker.exists() and [getattr(t, "name", t) for t in plugin.register_tools()] == ["where"]
