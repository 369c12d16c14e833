"""The tree digest of real installs: wheels, index installs, tampering, RECORD cross-checks."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from reyn_core.loading.step3_provenance.digest import DIGEST_VERSION, tree_digest
from reyn_core.loading.step3_provenance.drift import compare_provenance
from reyn_core.loading.step3_provenance.lock import LockedPlugin

from .project_kit import build_wheel, demo_provenance, pip_install, sync_record, write_project


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("digest-wheel")
    return build_wheel(write_project(root / "proj"), root / "dist")


@pytest.fixture
def installed(make_venv: Any, wheel: Path) -> Any:
    venv = make_venv("tampered")
    pip_install(venv, str(wheel))
    return venv


def test_digest_algorithm_matches_its_documented_definition() -> None:
    files = [("b/x.py", "1" * 64), ("a.py", "0" * 64)]
    listing = f"{DIGEST_VERSION}\n" + "".join(f"{p}\0{h}\n" for p, h in sorted(files))
    assert tree_digest(files) == "sha256:" + hashlib.sha256(listing.encode()).hexdigest()
    assert DIGEST_VERSION == "reyn-tree-digest-v1"


def test_digest_listing_is_unambiguous_for_paths_with_newlines() -> None:
    a = [("x\n" + "0" * 64 + "\ny", "1" * 64)]
    b = [("x", "0" * 64), ("y", "1" * 64)]
    assert tree_digest(a) != tree_digest(b)


def test_same_wheel_in_two_venvs_gives_the_same_digest(make_venv: Any, wheel: Path) -> None:
    one, two = make_venv("one"), make_venv("two")
    pip_install(one, str(wheel))
    pip_install(two, str(wheel))
    a, b = demo_provenance(one), demo_provenance(two)
    assert a.tree_digest == b.tree_digest
    assert a.files == b.files
    assert a.digest_scope == "installed" and a.record_mismatches == () and a.problems == ()


def test_wheel_from_a_local_file_records_source_and_artifact_sha256(installed: Any, wheel: Path) -> None:
    rec = demo_provenance(installed)
    assert rec.source_kind == "wheel"
    assert rec.source_url == wheel.as_uri()
    assert rec.artifact_sha256 == hashlib.sha256(wheel.read_bytes()).hexdigest()
    assert (rec.distribution, rec.version, rec.plugin_id, rec.entry_point) == (
        "demo-plug",
        "0.1.0",
        "demo",
        "demo_plug.plugin",
    )


def test_index_install_has_no_source_url_and_the_same_digest_as_the_wheel_file(
    make_venv: Any, wheel: Path
) -> None:
    by_file, by_name = make_venv("file"), make_venv("index")
    pip_install(by_file, str(wheel))
    pip_install(by_name, "demo-plug==0.1.0", find_links=(wheel.parent,))
    rec = demo_provenance(by_name)
    assert (rec.source_kind, rec.source_url, rec.artifact_sha256, rec.commit) == ("index", None, None, None)
    assert rec.tree_digest == demo_provenance(by_file).tree_digest


def test_listing_covers_package_and_metadata_but_not_installer_files_scripts_or_bytecode(
    installed: Any,
) -> None:
    # Import the module inside the venv so __pycache__ exists; the digest must not change.
    before = demo_provenance(installed)
    proc = installed.run("python", "-c", "import demo_plug.plugin")
    assert proc.returncode == 0, proc.stderr
    assert list((installed.site_packages / "demo_plug").glob("__pycache__/*.pyc"))
    after = demo_provenance(installed)
    assert after.tree_digest == before.tree_digest
    paths = [p for p, _ in after.files]
    assert "demo_plug/plugin.py" in paths and "demo_plug/data/notes.txt" in paths
    assert "demo_plug-0.1.0.dist-info/METADATA" in paths
    assert "demo_plug-0.1.0.dist-info/entry_points.txt" in paths
    for excluded in ("RECORD", "INSTALLER", "REQUESTED", "direct_url.json"):
        assert f"demo_plug-0.1.0.dist-info/{excluded}" not in paths
    assert not any(".." in p or p.endswith(".pyc") or "__pycache__" in p for p in paths)
    assert (installed.bin / "demo-plug-cli").exists()  # the console script exists but is not listed
    assert paths == sorted(paths)
    site = installed.site_packages
    assert (
        dict(after.files)["demo_plug/plugin.py"]
        == hashlib.sha256((site / "demo_plug/plugin.py").read_bytes()).hexdigest()
    )


def test_provenance_never_imports_the_plugin(
    installed: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "imported.txt"
    monkeypatch.setenv("DEMO_PLUG_IMPORT_MARKER", str(marker))
    monkeypatch.syspath_prepend(str(installed.site_packages))
    demo_provenance(installed)
    assert not marker.exists()
    assert "demo_plug" not in sys.modules and "demo_plug.plugin" not in sys.modules


def test_one_changed_byte_changes_the_digest_and_names_the_file(installed: Any) -> None:
    before = demo_provenance(installed)
    target = installed.site_packages / "demo_plug" / "plugin.py"
    data = bytearray(target.read_bytes())
    data[-2] ^= 0x01
    target.write_bytes(bytes(data))
    after = demo_provenance(installed)
    assert after.tree_digest != before.tree_digest
    assert after.record_mismatches == ("demo_plug/plugin.py",)


def test_record_rewritten_to_match_the_tampered_file_is_still_caught_by_the_lock(installed: Any) -> None:
    locked = LockedPlugin.from_provenance(demo_provenance(installed), api_version=1)
    target = installed.site_packages / "demo_plug" / "plugin.py"
    target.write_text(target.read_text() + "print('owned')\n")
    sync_record(installed, "demo_plug/plugin.py")
    after = demo_provenance(installed)
    assert after.record_mismatches == ()  # RECORD no longer tells
    assert after.tree_digest != locked.tree_digest  # but the pin / lock does
    drifts = compare_provenance(locked, after)
    assert [d.kind for d in drifts] == ["digest_changed", "file_changed"]
    assert drifts[1].path == "demo_plug/plugin.py"
    assert "demo_plug/plugin.py changed" in drifts[1].detail


def test_file_listed_in_record_but_missing_counts_as_a_mismatch(installed: Any) -> None:
    locked = LockedPlugin.from_provenance(demo_provenance(installed))
    (installed.site_packages / "demo_plug" / "data" / "notes.txt").unlink()
    after = demo_provenance(installed)
    assert after.record_mismatches == ("demo_plug/data/notes.txt",)
    assert "demo_plug/data/notes.txt" not in dict(after.files)
    kinds = {(d.kind, d.path) for d in compare_provenance(locked, after)}
    assert ("file_removed", "demo_plug/data/notes.txt") in kinds


def test_file_planted_in_the_package_but_not_in_record_is_digested_and_flagged(installed: Any) -> None:
    locked = LockedPlugin.from_provenance(demo_provenance(installed))
    (installed.site_packages / "demo_plug" / "evil.py").write_text("import os\n")
    after = demo_provenance(installed)
    assert "demo_plug/evil.py" in after.record_mismatches
    assert "demo_plug/evil.py" in dict(after.files)
    kinds = {(d.kind, d.path) for d in compare_provenance(locked, after)}
    assert ("file_added", "demo_plug/evil.py") in kinds


def test_installer_files_are_checked_against_record_though_not_digested(installed: Any) -> None:
    before = demo_provenance(installed)
    direct_url = next(installed.site_packages.glob("demo_plug-*.dist-info")) / "direct_url.json"
    data = json.loads(direct_url.read_text())
    data["url"] = "file:///elsewhere/demo_plug-0.1.0-py3-none-any.whl"
    direct_url.write_text(json.dumps(data))
    after = demo_provenance(installed)
    assert after.tree_digest == before.tree_digest
    assert after.source_url == "file:///elsewhere/demo_plug-0.1.0-py3-none-any.whl"
    assert after.record_mismatches == ("demo_plug-0.1.0.dist-info/direct_url.json",)


def test_malformed_direct_url_is_a_problem_not_a_crash(installed: Any) -> None:
    direct_url = next(installed.site_packages.glob("demo_plug-*.dist-info")) / "direct_url.json"
    direct_url.write_text("{not json")
    rec = demo_provenance(installed)
    assert rec.source_kind == "index"
    assert any("direct_url.json is malformed" in p for p in rec.problems)


def test_missing_record_is_a_problem_and_the_sources_are_still_digested(installed: Any) -> None:
    (next(installed.site_packages.glob("demo_plug-*.dist-info")) / "RECORD").unlink()
    rec = demo_provenance(installed)
    assert any("no RECORD" in p for p in rec.problems)
    assert rec.digest_scope == "source-tree"
    assert "demo_plug/plugin.py" in dict(rec.files)


def test_to_origin_carries_every_field(installed: Any) -> None:
    rec = demo_provenance(installed)
    origin = rec.to_origin(1)
    assert origin.kind == "plugin" and origin.api_version == 1
    for name in (
        "plugin_id",
        "entry_point",
        "distribution",
        "version",
        "source_kind",
        "source_url",
        "commit",
        "artifact_sha256",
        "tree_digest",
    ):
        assert getattr(origin, name) == getattr(rec, name)
    assert rec.short_digest == rec.tree_digest[7:19]
    assert json.loads(json.dumps(rec.to_dict()))["files"][0] == list(rec.files[0])
