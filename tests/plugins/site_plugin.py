"""Lay a one-module Reyn plugin out in a site folder as an installer would (dist-info, entry point,
RECORD with each file's sha256), so that a process with that folder on its path discovers, digests
and imports it like any installed plugin — without building a wheel or a venv."""

from __future__ import annotations

import base64
import hashlib
import importlib
import textwrap
from collections.abc import Mapping
from pathlib import Path


def _record_line(site: Path, rel: str) -> str:
    data = (site / rel).read_bytes()
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{rel},sha256={digest},{len(data)}"


def lazy_plugin(tool: str, handler: str) -> str:
    """The source of a plugin module registering one read-only tool ``tool`` with no arguments whose
    handler is the lazy reference ``handler`` (``"pkg.mod:fn"``, imported at its first call)."""
    return f"""
from reyn_core import hookimpl, ToolDefinition
REYN_API = 1
LAZY = ToolDefinition(name={tool!r}, description="Runs a lazily imported handler.",
    parameters={{"type": "object", "properties": {{}}}}, handler={handler!r}, cluster="probe",
    purity="read_only")
@hookimpl
def reyn_register_tools(register, settings):
    register(LAZY)
"""


def install_site_plugin(site: Path, plugin_id: str, source: str, *, version: str = "1.0") -> Path:
    """Write (or rewrite, as a reinstall would) module ``reyn_site_<plugin_id>`` from ``source`` and its
    dist-info ``reyn-site-<plugin_id>`` at ``version`` into ``site``; returns the module file."""
    name = f"reyn_site_{plugin_id}"
    site.mkdir(parents=True, exist_ok=True)
    for old in site.glob(f"{name}-*.dist-info"):
        for f in old.iterdir():
            f.unlink()
        old.rmdir()
    module = site / f"{name}.py"
    module.write_text(textwrap.dedent(source))
    info = site / f"{name}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: reyn-site-{plugin_id}\nVersion: {version}\n"
    )
    (info / "entry_points.txt").write_text(f"[reyn.plugins]\n{plugin_id} = {name}\n")
    rels = [module.name, f"{info.name}/METADATA", f"{info.name}/entry_points.txt"]
    (info / "RECORD").write_text(
        "\n".join([*(_record_line(site, r) for r in rels), f"{info.name}/RECORD,,"]) + "\n"
    )
    return module


def install_distribution(
    site: Path,
    dist_name: str,
    package: str,
    files: Mapping[str, str],
    entry_points: str,
    *,
    version: str = "1.0",
) -> Path:
    """Write package ``package`` (``files``: name → text, dedented) and the dist-info of ``dist_name``
    declaring ``entry_points`` into ``site``, RECORD hashing each file, as an installer would (replacing
    an earlier install); returns the dist-info folder."""
    folder = site / package
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.iterdir():
        if old.is_file():
            old.unlink()
    for old in site.glob(f"{package}-*.dist-info"):
        for f in old.iterdir():
            f.unlink()
        old.rmdir()
    rels = []
    for filename, text in files.items():
        (folder / filename).write_text(textwrap.dedent(text))
        rels.append(f"{package}/{filename}")
    info = site / f"{package}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist_name}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(entry_points)
    rels += [f"{info.name}/METADATA", f"{info.name}/entry_points.txt"]
    (info / "RECORD").write_text(
        "\n".join([*(_record_line(site, r) for r in rels), f"{info.name}/RECORD,,"]) + "\n"
    )
    importlib.invalidate_caches()  # metadata lookups cache a folder's listing by its mtime
    return info
