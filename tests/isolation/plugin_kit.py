"""Lay a package Reyn plugin (with its ``reyn_permissions.toml``) out in a site folder as an installer
would: dist-info, entry point, RECORD with each file's sha256. A process with the folder on its path
discovers, digests, and imports it — in process or in an isolated worker — like any installed plugin."""

from __future__ import annotations

import hashlib
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from site_plugin import install_distribution

from reyn_core.loading.step2_discovery.discovery import discover

FILE_TOOLS = """
@tool(purity="side_effect")
def write(path: str, text: str) -> str:
    \"\"\"Write a file.\"\"\"
    pathlib.Path(path).write_text(text)
    return "written"


@tool(purity="read_only")
def read(path: str) -> str:
    \"\"\"Read a file.\"\"\"
    return pathlib.Path(path).read_text()
"""
"""The source of two test tools, ``write`` and ``read`` (a plugin's source that uses them imports
``pathlib`` and ``tool``)."""


def checked_plugin(checks: str, **tools: str) -> str:
    """The source of a plugin whose read-only tools (each keyword a tool's name, its value the name of
    the tool's ``available`` check) take no argument and answer ``"ran"`` wherever their check allows
    them; ``checks`` is the module code that defines the checks (dedented)."""
    defined = "".join(
        f'\n\n@tool(purity="read_only", available={check})\ndef {name}() -> str:\n'
        f'    """Answer where {check} allows it."""\n    return "ran"\n'
        for name, check in tools.items()
    )
    registered = "".join(f"    register({name})\n" for name in tools)
    return (
        f"from reyn_core import hookimpl, tool\n\nREYN_API = 1\n\n{textwrap.dedent(checks)}{defined}\n\n"
        f"@hookimpl\ndef reyn_register_tools(register, settings):\n{registered}"
    )


def install_package_plugin(
    site: Path,
    plugin_id: str,
    files: Mapping[str, str],
    *,
    version: str = "1.0",
    commands: tuple[str, ...] = (),
    extra_entry_points: str = "",
) -> str:
    """Write package ``reyn_iso_<plugin_id>_<hash of site>`` with ``files`` (name → text, dedented)
    and its dist-info into ``site`` (replacing an earlier install); returns the package's import name.
    The name differs per site folder: a process serves an import name from one verified tree, so two
    tests must not share one. ``extra_entry_points``: more ``entry_points.txt`` sections (``{name}``
    is the package's import name)."""
    name = f"reyn_iso_{plugin_id}_{hashlib.sha256(str(site).encode()).hexdigest()[:8]}"
    declared = "".join(f"{command} = {plugin_id}\n" for command in commands)  # reyn.commands metadata
    entry_points = (
        f"[reyn.plugins]\n{plugin_id} = {name}\n"
        + (f"[reyn.commands]\n{declared}" if commands else "")
        + extra_entry_points.replace("{name}", name)
    )
    install_distribution(site, f"reyn-iso-{plugin_id}", name, files, entry_points, version=version)
    if str(site) in sys.path:
        discover()  # a load's discovery is cached per sys.path: rescan after this install
    return name


def isolation_profile(plugin_id: str, isolation: str) -> str:
    """The text of a profile that enables only ``plugin_id``, run ``isolation`` (``process`` or
    ``in-process``); a caller appends its own tables (``[plugins.<id>.settings]``, grants)."""
    return f'[plugins]\nenable = ["{plugin_id}"]\n[plugins.{plugin_id}]\nisolation = "{isolation}"\n'


def load_cleanly(plugin_id: str, isolation: str) -> Any:
    """Load ``isolation_profile(plugin_id, isolation)`` in this process, asserting no error
    diagnostic (the setup of a test about what the loaded plugin then does)."""
    import reyn_core.host as host

    result = host.load(host.Profile.from_toml_text(isolation_profile(plugin_id, isolation)))
    assert [d.render() for d in result.report.diagnostics if d.is_error] == []
    return result


def declaration(**permissions: object) -> str:
    """A ``reyn_permissions.toml`` declaring ``permissions`` (TOML values written by repr-like rules)."""

    def toml(value: object) -> str:
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, list):
            return "[" + ", ".join(f'"{v}"' for v in value) + "]"
        return f'"{value}"'

    body = "\n".join(f"{key} = {toml(value)}" for key, value in permissions.items())
    return f"version = 1\n\n[permissions]\n{body}\n"
