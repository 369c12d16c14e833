"""A second ``load()`` in one process after a plugin was upgraded in place (issue 24, review A).

A module is imported once per process: the second load digests the new files, so its report shows the
new version, while ``sys.modules`` still holds the code compiled from the old ones. Each module the
verified finder served keeps the sha256 it was compiled from, so the load sees that the name was
imported from other bytes and refuses the plugin (``RI009``, restart the process) instead of reporting
the new version while the old code runs. Control: a second load of the unchanged plugin in the same
process loads and runs the module it already imported. The same check guards an extension (an approval
store, the tracing add-on), looked up in a later load of the same process."""

from __future__ import annotations

import asyncio

import pytest
from site_plugin import install_distribution, install_site_plugin

from reyn_core import ToolContext
from reyn_core.host import LoadResult, Profile, dispatch_tool, load
from reyn_core.loading.extension_origin import ExtensionError, ExtensionSession

PLUGIN = """
from reyn_core import hookimpl, tool

REYN_API = 1

@tool(name="{pid}_version", cluster="probe", purity="read_only")
def _version() -> str:
    \"\"\"Which code runs.\"\"\"
    return "{answer}"

@hookimpl
def reyn_register_tools(register, settings):
    register(_version)
"""


def _load(pid: str) -> LoadResult:
    return load(Profile.from_toml_text(f'[plugins]\nenable = ["{pid}"]\n'))


def _run(result: LoadResult, pid: str) -> object:
    ctx = ToolContext(surface="router", agent="tester")
    envelope = asyncio.run(dispatch_tool(result.registry, f"{pid}_version", {}, ctx))
    assert envelope["status"] == "ok", envelope
    return envelope["data"]


def test_an_upgrade_in_place_is_refused_until_restart_not_reported_while_the_old_code_runs(temp_site):
    install_site_plugin(temp_site, "ru_one", PLUGIN.format(pid="ru_one", answer="v1-old"), version="1.0")
    first = _load("ru_one")
    info = first.report.plugin("ru_one")
    assert (info.status, info.version) == ("loaded", "1.0") and _run(first, "ru_one") == "v1-old"
    old_digest = info.short_digest

    again = _load("ru_one")  # control: the unchanged plugin loads again and runs the same module
    assert again.report.plugin("ru_one").status == "loaded" and _run(again, "ru_one") == "v1-old"
    assert again.report.plugin("ru_one").short_digest == old_digest

    install_site_plugin(temp_site, "ru_one", PLUGIN.format(pid="ru_one", answer="v2-new"), version="2.0")
    upgraded = _load("ru_one")
    info = upgraded.report.plugin("ru_one")
    assert info.status == "refused" and "ru_one_version" not in upgraded.registry
    assert info.version == "2.0" and info.short_digest != old_digest  # the report is fresh
    [diag] = [d for d in upgraded.report.diagnostics if d.plugin == "ru_one"]
    assert diag.code == "RI009" and "already imported in this process from other bytes" in diag.message
    assert "2.0 is not imported; restart the process" in diag.message and "restart" in diag.hint
    assert "shadowing" not in diag.hint
    # the earlier load's registry still answers with the code it imported: nothing was swapped under it
    assert _run(first, "ru_one") == "v1-old"


def test_a_changed_submodule_of_a_package_plugin_is_refused_too(temp_site):
    # the entry point's module is unchanged, a module it imported (the tool's) is not: every module
    # the plugin imported is checked, not only the top-level one
    pkg = "ru_pkg_a"
    entry = f"[reyn.plugins]\nru_pkg = {pkg}.plugin\n"
    plugin = f"from reyn_core import hookimpl\nfrom {pkg}.tools import _version\n\nREYN_API = 1\n\n"
    plugin += "@hookimpl\ndef reyn_register_tools(register, settings):\n    register(_version)\n"
    tools = PLUGIN.format(pid="ru_pkg", answer="{answer}").split("@hookimpl")[0].replace("REYN_API = 1", "")
    files = {"__init__.py": "", "plugin.py": plugin, "tools.py": tools.format(answer="v1-old")}
    install_distribution(temp_site, "ru-pkg", pkg, files, entry, version="1.0")
    first = _load("ru_pkg")
    assert first.report.plugin("ru_pkg").status == "loaded" and _run(first, "ru_pkg") == "v1-old"

    files["tools.py"] = tools.format(answer="v2-new")
    install_distribution(temp_site, "ru-pkg", pkg, files, entry, version="2.0")
    upgraded = _load("ru_pkg")
    assert upgraded.report.plugin("ru_pkg").status == "refused"
    [diag] = [d for d in upgraded.report.diagnostics if d.plugin == "ru_pkg"]
    assert diag.code == "RI009" and f"module '{pkg}.tools' was already imported" in diag.message


EXTENSION = "ANSWER = {answer!r}\n"


def test_an_extension_upgraded_in_place_is_refused_by_a_later_load(temp_site):
    pkg = "ru_ext_a"
    entry = f"[reyn.approval_stores]\nru_custom = {pkg}.store:ANSWER\n"
    install_distribution(
        temp_site, "ru-ext", pkg, {"__init__.py": "", "store.py": EXTENSION.format(answer="v1")}, entry
    )
    assert ExtensionSession().load("reyn.approval_stores", "ru_custom", distribution=None) == "v1"
    # control: a later load of the unchanged extension gets the module it imported
    assert ExtensionSession().load("reyn.approval_stores", "ru_custom", distribution=None) == "v1"
    files = {"__init__.py": "", "store.py": EXTENSION.format(answer="v2")}
    install_distribution(temp_site, "ru-ext", pkg, files, entry, version="2.0")
    with pytest.raises(ExtensionError, match="restart the process") as refused:
        ExtensionSession().load("reyn.approval_stores", "ru_custom", distribution=None)
    assert not refused.value.missing and str(temp_site) not in str(refused.value)
