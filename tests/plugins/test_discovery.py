"""Discovery reads entry-point metadata only; installed layouts are written file by file (dist-info
with METADATA, entry_points.txt and a RECORD of real hashes) into a folder put on ``sys.path``."""

from __future__ import annotations

import base64
import hashlib
import itertools
import sys
import textwrap
from pathlib import Path

import pytest

from reyn_core.host import LoadResult, Profile, load
from reyn_core.loading.step2_discovery.discovery import discover

_counter = itertools.count()


def install(site: Path, dist: str, plugin_id: str, entry_point: str, files: dict[str, str]) -> None:
    """Lay out an installed distribution the way pip would (without pip)."""
    info = site / f"{dist.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[reyn.plugins]\n{plugin_id} = {entry_point}\n")
    records = []
    for rel, text in files.items():
        path = site / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
        digest = base64.urlsafe_b64encode(hashlib.sha256(path.read_bytes()).digest()).rstrip(b"=").decode()
        records.append(f"{rel},sha256={digest},{path.stat().st_size}")
    for name in ("METADATA", "entry_points.txt"):
        data = (info / name).read_bytes()
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        records.append(f"{info.name}/{name},sha256={digest},{len(data)}")
    records.append(f"{info.name}/RECORD,,")
    (info / "RECORD").write_text("\n".join(records) + "\n")


@pytest.fixture
def site(tmp_path, monkeypatch):
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setenv("REYN_CACHE_DIR", str(tmp_path / "cache"))
    before = set(sys.modules)
    yield folder
    for name in set(sys.modules) - before:
        if name.startswith("rtd_"):
            del sys.modules[name]
    discover()


def unique(prefix: str) -> str:
    return f"{prefix}{next(_counter)}_{id(object())}"


def install_and_load(site: Path, plugin_id: str, source: str) -> tuple[LoadResult, str]:
    """Install plugin ``plugin_id`` (distribution ``rtd-<plugin_id>``, a fresh package whose
    ``plugin.py`` is ``source``), discover again and load a profile enabling only it; the result and
    the package name."""
    pkg = unique(f"rtd_{plugin_id}_")
    files = {f"{pkg}/__init__.py": "", f"{pkg}/plugin.py": source}
    install(site, f"rtd-{plugin_id}", plugin_id, f"{pkg}.plugin", files)
    discover()
    return load(Profile.from_toml_text(f'[plugins]\nenable = ["{plugin_id}"]\n')), pkg


def test_discovery_never_imports_the_plugin_module(site):
    pkg = unique("rtd_never_")
    install(
        site,
        "rtd-never",
        "never",
        f"{pkg}.plugin",
        {f"{pkg}/__init__.py": "", f"{pkg}/plugin.py": "raise SystemExit('imported!')\n"},
    )
    found = discover().by_id()["never"]
    assert [(p.distribution, p.version, p.entry_point) for p in found] == [
        ("rtd-never", "1.0", f"{pkg}.plugin")
    ]
    assert f"{pkg}.plugin" not in sys.modules


LATE_PLUGIN = """
from reyn_core import hookimpl, tool

REYN_API = 1


@tool()
def late_tool() -> str:
    "Installed after the first load."
    return "late"


@hookimpl
def reyn_register_tools(register, settings):
    register(late_tool)
"""


def test_a_load_sees_what_is_installed_now_install_then_uninstall(site):
    """Nothing is cached between loads of one process: a plugin installed after a first load is
    loaded by the next, and one uninstalled after that is missing (RD001), not served from the first
    scan. Control: the same profile before the install reports it missing too."""
    profile = Profile.from_toml_text('[plugins]\nenable = ["late"]\n')
    assert load(profile).report.plugin("late").status == "missing"
    pkg = unique("rtd_late_")
    install(
        site, "rtd-late", "late", f"{pkg}.plugin", {f"{pkg}/__init__.py": "", f"{pkg}/plugin.py": LATE_PLUGIN}
    )
    loaded = load(profile)
    assert loaded.report.plugin("late").status == "loaded" and "late_tool" in loaded.registry.entries()
    info = site / "rtd_late-1.0.dist-info"
    for path in sorted(info.iterdir()):
        path.unlink()
    info.rmdir()
    gone = load(profile).report.plugin("late")
    assert gone.status == "missing" and [d.code for d in gone.diagnostics] == ["RD001"]


def test_first_distribution_of_a_name_on_the_path_wins(site, tmp_path, monkeypatch):
    shadowed = tmp_path / "later-site"
    shadowed.mkdir()
    monkeypatch.syspath_prepend(str(site))  # keep `site` ahead of `shadowed`
    sys.path.insert(sys.path.index(str(site)) + 1, str(shadowed))
    try:
        install(site, "rtd-same", "same_a", "rtd_same_a.plugin", {})
        install(shadowed, "rtd-same", "same_b", "rtd_same_b.plugin", {})
        ids = discover().ids
        assert "same_a" in ids and "same_b" not in ids
    finally:
        sys.path.remove(str(shadowed))


def test_malformed_entry_point_is_refused_with_RD004(site):
    install(site, "rtd-malformed", "malformed", "not a module!", {})
    discover()
    result = load(Profile.from_toml_text('[plugins]\nenable = ["malformed"]\n'))
    info = result.report.plugin("malformed")
    assert info.status == "refused" and [d.code for d in info.diagnostics] == ["RD004"]


@pytest.mark.parametrize(
    ("plugin_id", "source", "status", "diagnostic", "says"),
    [
        pytest.param(
            "undecorated",
            """
            REYN_API = 1

            def reyn_register_tools(register, settings):
                raise AssertionError("never called without @hookimpl")
            """,
            "loaded",
            ("RI004", "warning"),
            "@reyn_core.hookimpl",
            id="a hook without the hookimpl decorator warns RI004",
        ),
        pytest.param(
            "notmodel",
            """
            from reyn_core import hookimpl
            REYN_API = 1

            @hookimpl
            def reyn_settings_model():
                return {"limit": int}
            """,
            "failed",
            ("RI006", "error"),
            "not a pydantic model class",
            id="a settings model that is not a model is RI006",
        ),
        pytest.param(
            "exits",
            """
            import sys
            from reyn_core import hookimpl
            REYN_API = 1

            @hookimpl
            def reyn_register_tools(register, settings):
                sys.exit("plugin gave up")
            """,
            "failed",
            ("RI005", "error"),
            "SystemExit: plugin gave up",
            id="a register hook calling sys.exit fails the plugin, not the host",
        ),
    ],
)
def test_a_plugin_module_that_breaks_the_hook_contract_is_reported(
    site, plugin_id, source, status, diagnostic, says
):
    result, _ = install_and_load(site, plugin_id, source)
    info = result.report.plugin(plugin_id)
    assert info.status == status and info.tools == ()
    assert [(d.code, d.severity) for d in info.diagnostics] == [diagnostic]
    assert says in info.diagnostics[0].message


def test_register_called_after_the_hook_returned_is_refused(site):
    result, pkg = install_and_load(
        site,
        "lateregister",
        """
            from reyn_core import hookimpl, tool
            REYN_API = 1
            SAVED = []

            @tool(cluster="t", purity="read_only")
            def late_tool(text: str) -> str:
                \"\"\"Echo.\"\"\"
                return text

            @hookimpl
            def reyn_register_tools(register, settings):
                SAVED.append(register)
            """,
    )
    module = sys.modules[f"{pkg}.plugin"]
    with pytest.raises(RuntimeError, match="after reyn_register_tools returned"):
        module.SAVED[0](module.late_tool)
    assert "late_tool" not in result.registry
