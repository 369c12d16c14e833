"""Source kinds from PEP 610 direct_url.json, and source-tree digests of editable installs."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from .project_kit import SENTINEL_PLUGIN, demo_provenance, pip_install, write_project


@pytest.fixture
def editable(make_venv: Any, tmp_path: Path) -> tuple[Any, Path]:
    project = write_project(tmp_path / "checkout")
    venv = make_venv("dev")
    pip_install(venv, "-e", str(project))
    return venv, project


def test_editable_install_is_marked_and_digested_over_its_source_tree(editable: tuple[Any, Path]) -> None:
    venv, project = editable
    rec = demo_provenance(venv)
    assert rec.source_kind == "editable" and rec.is_editable
    assert rec.digest_scope == "source-tree"
    assert rec.source_url == project.as_uri()
    files = dict(rec.files)
    assert {"demo_plug/__init__.py", "demo_plug/plugin.py", "demo_plug/data/notes.txt"} <= files.keys()
    assert rec.problems == () and rec.record_mismatches == ()
    # The module sources are not in site-packages: RECORD alone would not cover them.
    assert not (venv.site_packages / "demo_plug").exists()


def test_editing_a_source_file_changes_an_editable_digest(editable: tuple[Any, Path]) -> None:
    venv, project = editable
    before = demo_provenance(venv)
    (project / "demo_plug" / "plugin.py").write_text(SENTINEL_PLUGIN + "X = 1\n")
    after = demo_provenance(venv)
    assert after.tree_digest != before.tree_digest
    changed = {p for p, h in after.files if dict(before.files).get(p) != h}
    assert changed == {"demo_plug/plugin.py"}


def test_source_tree_skips_vcs_caches_bytecode_and_non_package_build_dirs(editable: tuple[Any, Path]) -> None:
    venv, project = editable
    before = demo_provenance(venv)
    pkg = project / "demo_plug"
    for rel in (
        ".git/config",
        "__pycache__/plugin.cpython-311.pyc",
        "stale.pyc",
        ".mypy_cache/x.json",
        "build/lib/demo_plug/plugin.py",
        "dist/demo.whl",
        "demo_plug.egg-info/PKG-INFO",
    ):
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_text("noise")
    assert demo_provenance(venv).tree_digest == before.tree_digest


def test_a_subpackage_named_build_is_still_digested(editable: tuple[Any, Path]) -> None:
    venv, project = editable
    (project / "demo_plug" / "build").mkdir()
    (project / "demo_plug" / "build" / "__init__.py").write_text("STEPS = 3\n")
    assert "demo_plug/build/__init__.py" in dict(demo_provenance(venv).files)


def test_editable_whose_checkout_is_gone_reports_the_missing_source(editable: tuple[Any, Path]) -> None:
    venv, project = editable
    shutil.rmtree(project / "demo_plug")
    rec = demo_provenance(venv)
    assert rec.digest_scope == "source-tree"
    assert any("'demo_plug' was not found" in p for p in rec.problems)
    assert not any(p.startswith("demo_plug/") for p, _ in rec.files)


def test_src_layout_editable_install_is_found(make_venv: Any, tmp_path: Path) -> None:
    project = write_project(tmp_path / "srcproj", src_layout=True)
    venv = make_venv("srcdev")
    pip_install(venv, "-e", str(project))
    rec = demo_provenance(venv)
    assert rec.source_kind == "editable" and rec.problems == ()
    assert "demo_plug/plugin.py" in dict(rec.files)


def test_non_editable_directory_install_digests_what_was_installed(make_venv: Any, tmp_path: Path) -> None:
    project = write_project(tmp_path / "dirproj")
    venv = make_venv("dir")
    pip_install(venv, str(project))
    rec = demo_provenance(venv)
    assert (rec.source_kind, rec.digest_scope) == ("directory", "installed")
    assert rec.source_url == project.as_uri() and rec.is_editable
    # Later edits to the folder do not change what is imported, so they do not change the digest.
    (project / "demo_plug" / "plugin.py").write_text("changed = True\n")
    assert demo_provenance(venv).tree_digest == rec.tree_digest


def test_vcs_install_records_url_and_commit(make_venv: Any, tmp_path: Path) -> None:
    project = write_project(tmp_path / "repo")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "init.defaultBranch=main"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "demo"]):
        subprocess.run([*git, *args], cwd=project, check=True, capture_output=True)
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=project, check=True, capture_output=True, text=True
    ).stdout.strip()
    venv = make_venv("vcs")
    pip_install(venv, f"demo-plug @ git+{project.as_uri()}")
    rec = demo_provenance(venv)
    assert (rec.source_kind, rec.commit, rec.digest_scope) == ("vcs", commit, "installed")
    assert rec.source_url == project.as_uri()
    assert rec.artifact_sha256 is None
