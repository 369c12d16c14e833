"""Where the host's code comes from (``reyn_core.host.host_code``, issue 24, task W): read from the
sources Python imports from, not from a list of known places. A reviewer found that an operator's
plugin installed editable from a flat layout (``pip install -e``) is reached through setuptools'
meta-path finder, not a ``sys.path`` entry, so a shell write root over its folder was accepted and a
confined command rewrote code the host then ran unconfined. Each source here beside its control (the
same setup without it protects nothing more); the end-to-end refusals, with a real sandbox, are in
test_host_files.py (shell pack) and tests/isolation/test_hostile_variants.py (``RJ011``)."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

import reyn_sandbox
from reyn_core.host import host_code, load, load_profile

FINDER = """\
import sys
MAPPING: dict[str, str] = {mapping!r}
NAMESPACES: dict[str, list[str]] = {{}}
"""


def _real(path: Path) -> str:
    return os.path.realpath(path)


def _code(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("")
    return folder


def _paths() -> dict[str, str]:
    return host_code().paths


def _refused(root: Path) -> str | None:
    return reyn_sandbox.protected_problem([str(root)], _paths())


def test_an_editable_finder_file_maps_code_outside_the_import_path(tmp_path, monkeypatch):
    """setuptools' editable install of a flat layout: ``__editable___*_finder.py`` in site-packages
    maps the package to the project folder, which is on no ``sys.path`` entry."""
    toy = _code(tmp_path / "proj" / "toy_plug")
    site = tmp_path / "site"
    site.mkdir()
    (site / "__editable___toy_plug_0_1_finder.py").write_text(FINDER.format(mapping={"toy_plug": str(toy)}))
    assert _real(toy) not in _paths()  # control: the finder's folder is not on the import path
    monkeypatch.syspath_prepend(str(site))
    found = _paths()
    assert found[_real(toy)] == "the code of module 'toy_plug' (an editable install's finder maps it)"
    problem = _refused(toy)
    assert problem is not None and str(toy) in problem and "'toy_plug'" in problem
    assert _refused(toy.parent) is not None  # a root holding it
    assert _refused(tmp_path / "proj" / "out") is None  # control: a folder beside it


def test_a_meta_path_finders_mapping_is_host_code(tmp_path, monkeypatch):
    """A finder installed on ``sys.meta_path`` (as the editable install's ``.pth`` does at start)
    keeps its mapping on its module or itself: read where it is."""
    toy = _code(tmp_path / "proj" / "toy_plug")

    class Finder:
        MAPPING = {"toy_plug": str(toy)}

        @classmethod
        def find_spec(cls, *args: object) -> None:
            return None

    assert _real(toy) not in _paths()
    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, Finder])
    assert _paths()[_real(toy)] == "code a meta-path finder maps 'toy_plug' to"


def test_a_module_imported_from_outside_the_import_path_is_host_code(tmp_path, monkeypatch):
    """Whatever imported it, a module with a file is code the host runs: its package's folder."""
    package = _code(tmp_path / "elsewhere" / "lonely_pkg")
    spec = importlib.util.spec_from_file_location(
        "lonely_pkg", package / "__init__.py", submodule_search_locations=[str(package)]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert _real(package) not in _paths()  # control: not imported yet
    monkeypatch.setitem(sys.modules, "lonely_pkg", module)
    assert _paths()[_real(package)] == "the code of module 'lonely_pkg' (imported)"
    assert _refused(tmp_path / "elsewhere") is not None
    assert _refused(tmp_path / "beside") is None


def test_a_link_on_the_import_path_protects_its_target(tmp_path, monkeypatch):
    """``flit install -s`` links a package into site-packages: the link's target is the code."""
    toy = _code(tmp_path / "proj" / "toy_plug")
    site = tmp_path / "site"
    site.mkdir()
    (site / "toy_plug").symlink_to(toy)
    monkeypatch.syspath_prepend(str(site))
    assert _paths()[_real(toy)] == f"code linked into the import path at {site / 'toy_plug'}"
    (site / "toy_plug").unlink()  # control
    assert _real(toy) not in _paths()


def test_a_distribution_outside_the_python_installation_protects_the_files_it_installed_elsewhere(
    tmp_path, monkeypatch
):
    """A ``--user`` install's console scripts live beside its site folder, not in it: its RECORD
    says where (they are code the next ``reyn`` runs)."""
    site = tmp_path / "user" / "lib" / "site-packages"
    meta = site / "toy-0.1.dist-info"
    meta.mkdir(parents=True)
    script = tmp_path / "user" / "bin" / "toy"
    script.parent.mkdir()
    script.write_text("#!/usr/bin/env python3\n")
    (meta / "RECORD").write_text("toy/__init__.py,,\n../../bin/toy,sha256=x,20\ntoy-0.1.dist-info/RECORD,,\n")
    monkeypatch.syspath_prepend(str(site))
    assert _paths()[_real(script)] == "a file distribution 'toy' installed"
    assert _refused(script.parent) is not None
    assert _refused(tmp_path / "user" / "out") is None  # control


def test_an_editable_install_mapped_in_no_readable_way_protects_its_project(tmp_path, monkeypatch):
    """An editable install whose finder is of a kind read nowhere (no ``.pth`` path, no setuptools
    finder): its project folder (PEP 610's ``direct_url.json``) is protected whole — fail closed."""
    project = tmp_path / "proj"
    _code(project / "toy_plug")
    site = tmp_path / "site"
    meta = site / "toy_plug-0.1.dist-info"
    meta.mkdir(parents=True)
    (meta / "RECORD").write_text("toy_plug-0.1.dist-info/direct_url.json,,\n_toy_impl.py,,\n")
    (meta / "direct_url.json").write_text(
        json.dumps({"url": project.resolve().as_uri(), "dir_info": {"editable": True}})
    )
    monkeypatch.syspath_prepend(str(site))
    assert "the project of editable distribution 'toy_plug'" in _paths()[_real(project)]
    # control: the same install mapped by a .pth path line protects that folder, not the project
    (site / "__editable__.toy_plug-0.1.pth").write_text(str(project / "toy_plug") + "\n")
    with (meta / "RECORD").open("a") as record:
        record.write("__editable__.toy_plug-0.1.pth,,\n")
    found = _paths()
    assert _real(project) not in found and _real(project / "toy_plug") in found


@pytest.mark.parametrize("inner", ["site/pkg", "site/pkg/sub"])
def test_a_path_inside_another_is_left_out(tmp_path, monkeypatch, inner):
    """The list stays short (every confined call checks it): what lies inside a listed folder adds
    nothing the rule does not refuse already."""
    site = tmp_path / "site"
    folder = _code(tmp_path / inner)
    (site / "__editable___pkg_finder.py").write_text(FINDER.format(mapping={"pkg": str(folder)}))
    monkeypatch.syspath_prepend(str(site))
    found = _paths()
    assert _real(site) in found and _real(folder) not in found
    assert _refused(folder) is not None


def test_a_distribution_whose_files_cannot_be_listed_is_said(tmp_path, monkeypatch):
    """Fail closed: a distribution outside the Python installation with no RECORD may have put code
    anywhere (its console scripts): the host says so, ``RC014`` on the load, rather than allow
    silently. Control: with its RECORD, nothing is unknown."""
    site = tmp_path / "user" / "site-packages"
    meta = site / "toy-0.1.dist-info"
    meta.mkdir(parents=True)
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: toy\nVersion: 0.1\n")
    monkeypatch.syspath_prepend(str(site))
    unknown = host_code().unknown
    assert unknown == (f"distribution 'toy' ({os.path.realpath(meta)}) lists no installed files (no RECORD)",)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "reyn.toml").write_text("[plugins]\nenable = []\n")
    found = [d for d in load(load_profile()).report.diagnostics if d.code == "RC014"]
    assert len(found) == 1 and unknown[0] in found[0].message, found
    (meta / "RECORD").write_text("toy/__init__.py,,\n")  # control
    assert host_code().unknown == ()


def test_a_metadata_file_that_is_not_utf8_is_said_and_the_load_goes_on(tmp_path, monkeypatch):
    """A RECORD that is not UTF-8 (a hostile or damaged distribution on the import path) made every
    load an internal error: now it is one unknown (``RC014``), and a non-str ``sys.path`` entry is
    skipped. Control: the same distribution with a readable RECORD is located."""
    site = tmp_path / "site"
    meta = site / "foo-1.0.dist-info"
    meta.mkdir(parents=True)
    (meta / "RECORD").write_bytes(b"foo/__init__.py,,\n\xff\xfe,,\n")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(sys, "path", [*sys.path, b"/bytes/entry"])
    unknown = host_code().unknown
    assert len(unknown) == 1 and "cannot be read" in unknown[0] and "foo-1.0.dist-info" in unknown[0]
    (meta / "RECORD").write_bytes(b"foo/__init__.py,,\n")  # control
    assert host_code().unknown == ()
