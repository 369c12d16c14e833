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
from site_plugin import install_distribution, install_site_plugin, lazy_plugin

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


def _dist(site, dist: str, pkg: str, pid: str, files: dict[str, str], version: str) -> None:
    install_distribution(site, dist, pkg, files, f"[reyn.plugins]\n{pid} = {pkg}\n", version=version)


@pytest.mark.parametrize("answer", ["v2", "v1"])
def test_the_package_reinstalled_under_another_distribution_name_is_refused_too(temp_site, answer):
    # review 2 (b): a rename or fork of the distribution installs the same package with new code; the
    # old modules were served for the old distribution name and are refused all the same. Control
    # ("v1"): the same bytes under the new distribution name load and run.
    pid = f"rb_{answer}"
    pkg = f"{pid}_pkg"
    _dist(temp_site, f"{pid}-old", pkg, pid, {"__init__.py": PLUGIN.format(pid=pid, answer="v1")}, "1.0")
    first = _load(pid)
    assert first.report.plugin(pid).status == "loaded" and _run(first, pid) == "v1"
    _dist(temp_site, f"{pid}-new", pkg, pid, {"__init__.py": PLUGIN.format(pid=pid, answer=answer)}, "2.0")
    renamed = _load(pid)
    info = renamed.report.plugin(pid)
    if answer == "v1":
        assert info.status == "loaded" and _run(renamed, pid) == "v1"
        return
    assert (info.status, info.version) == ("refused", "2.0") and f"{pid}_version" not in renamed.registry
    [diag] = [d for d in renamed.report.diagnostics if d.plugin == pid]
    assert diag.code == "RI009" and f"of {pid}-old, now digested as sha256" in diag.message
    assert "restart" in diag.hint and _run(first, pid) == "v1"


def _lazy(site, pid: str, answer: str, version: str) -> None:
    pkg = f"{pid}_pkg"
    files = {
        "__init__.py": lazy_plugin(f"{pid}_version", f"{pkg}.h:fn"),
        "h.py": f"def fn():\n    return {answer!r}\n",
    }
    _dist(site, f"{pid}-dist", pkg, pid, files, version)


def test_a_lazy_handler_upgraded_before_its_import_never_runs_in_an_earlier_pinned_registry(temp_site):
    # review 2 (c): only the lazy handler's module changed and it was not imported yet. A second load
    # registering the new tree would make the process serve it to the first registry, pinned to v1.
    _lazy(temp_site, "rc_a", "v1-pinned", "1.0")
    digest = _load("rc_a").report.plugin("rc_a").provenance.tree_digest
    pinned = load(
        Profile.from_toml_text(f'[plugins]\nenable = ["rc_a"]\n[plugins.rc_a]\ndigest = "{digest}"\n')
    )
    assert pinned.report.plugin("rc_a").status == "loaded"
    _lazy(temp_site, "rc_a", "v2-unpinned", "2.0")
    other = _load("rc_a")  # another load in the process, with no pin
    info = other.report.plugin("rc_a")
    assert (info.status, info.version) == ("refused", "2.0") and "rc_a_version" not in other.registry
    [diag] = [d for d in other.report.diagnostics if d.plugin == "rc_a"]
    assert diag.code == "RI009" and "rc_a_pkg/h.py now has other bytes" in diag.message
    assert "restart" in diag.hint
    envelope = asyncio.run(
        dispatch_tool(pinned.registry, "rc_a_version", {}, ToolContext(surface="router", agent="tester"))
    )
    assert envelope["status"] == "error" and "v2-unpinned" not in str(envelope)  # the changed file never ran


def test_control_a_lazy_handler_loads_again_unchanged_and_after_its_modules_are_forgotten(temp_site):
    import sys

    _lazy(temp_site, "rc_b", "v1", "1.0")
    assert _run(_load("rc_b"), "rc_b") == "v1"
    again = _load("rc_b")
    assert again.report.plugin("rc_b").status == "loaded" and _run(again, "rc_b") == "v1"
    # once nothing of it is imported any more (a fresh start, as a test's fixture does), v2 loads
    _lazy(temp_site, "rc_b", "v2", "2.0")
    for name in [n for n in sys.modules if n == "rc_b_pkg" or n.startswith("rc_b_pkg.")]:
        del sys.modules[name]
    upgraded = _load("rc_b")
    assert upgraded.report.plugin("rc_b").status == "loaded" and _run(upgraded, "rc_b") == "v2"


def test_an_import_name_the_new_version_no_longer_has_is_refused(temp_site):
    pkg, extra = "rt_pkg_a", "rt_extra_a"
    entry = f"[reyn.plugins]\nrt_a = {pkg}\n"
    body = PLUGIN.format(pid="rt_a", answer="v1").replace("REYN_API = 1", f"import {extra}\nREYN_API = 1")
    install_distribution(temp_site, "rt-a", pkg, {"__init__.py": body}, entry, version="1.0")
    # the second import name, in the same distribution (RECORD lists both folders)
    info = next(temp_site.glob(f"{pkg}-*.dist-info"))
    (temp_site / extra).mkdir()
    (temp_site / extra / "__init__.py").write_text("")
    record = info / "RECORD"
    record.write_text(record.read_text() + f"{extra}/__init__.py,,\n")
    (info / "top_level.txt").write_text(f"{pkg}\n{extra}\n")
    assert _run(_load("rt_a"), "rt_a") == "v1"
    # 2.0 drops the second name: the module served for 1.0 under it is still imported
    install_distribution(
        temp_site, "rt-a", pkg, {"__init__.py": PLUGIN.format(pid="rt_a", answer="v1")}, entry, version="2.0"
    )
    refused = _load("rt_a")
    [diag] = [d for d in refused.report.diagnostics if d.plugin == "rt_a"]
    assert diag.code == "RI009" and f"module {extra!r} was already imported" in diag.message
    assert "no longer one of its import names" in diag.message


def test_the_same_files_through_a_symlinked_path_entry_are_not_a_reload(temp_site, tmp_path, monkeypatch):
    # review 2 (p): the first load imported through a symlinked sys.path entry, the second digests the
    # real path: the same bytes, compared by real path, load (control: a change is still refused)
    import sys

    link = tmp_path / "sitelink"
    link.symlink_to(temp_site)
    _dist(
        temp_site,
        "rp-dist",
        "rp_pkg_a",
        "rp_a",
        {"__init__.py": PLUGIN.format(pid="rp_a", answer="same")},
        "1.0",
    )
    monkeypatch.setattr(sys, "path", [str(link)] + [p for p in sys.path if p != str(temp_site)])
    assert _run(_load("rp_a"), "rp_a") == "same"
    monkeypatch.setattr(sys, "path", [str(temp_site)] + [p for p in sys.path if p != str(link)])
    again = _load("rp_a")
    assert again.report.plugin("rp_a").status == "loaded" and _run(again, "rp_a") == "same"
    _dist(
        temp_site,
        "rp-dist",
        "rp_pkg_a",
        "rp_a",
        {"__init__.py": PLUGIN.format(pid="rp_a", answer="new")},
        "2.0",
    )
    assert _load("rp_a").report.plugin("rp_a").status == "refused"
    for name in [n for n in sys.modules if n.startswith("rp_pkg_a")]:
        del sys.modules[name]  # imported through the link: the fixture forgets the site's modules only
