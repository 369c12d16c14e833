"""Edge cases of RECORD and editable metadata, on distributions laid out by hand in a temp site-packages.

These are real ``importlib.metadata.PathDistribution`` objects over real files: the layouts other
installers and build backends produce (absolute RECORD paths, sha512 hashes, ``.pth`` path lines,
multi-line finder mappings, single-module plugins) without needing each tool installed.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from importlib.metadata import PathDistribution
from pathlib import Path

from reyn_core.loading.step3_provenance.record import provenance_for


def _hash(data: bytes, algorithm: str = "sha256") -> str:
    digest = hashlib.new(algorithm, data).digest()
    return f"{algorithm}=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def make_site(
    root: Path,
    files: dict[str, bytes],
    *,
    record_paths: dict[str, str] | None = None,
    algorithm: str = "sha256",
    extra_rows: list[str] = (),
    metadata: dict[str, str] | None = None,
    entry: str = "demo = solo",
) -> PathDistribution:
    """A site-packages folder with one distribution ``solo 1.0`` whose RECORD lists ``files``."""
    site = root / "site-packages"
    info = site / "solo-1.0.dist-info"
    info.mkdir(parents=True)
    meta = {
        "METADATA": "Metadata-Version: 2.1\nName: solo\nVersion: 1.0\n\n",
        "entry_points.txt": f"[console_scripts]\nsolo = solo:main\n\n[reyn.plugins]\n{entry}\n",
    }
    meta.update(metadata or {})
    for name, text in meta.items():
        (info / name).write_text(text)
    rows = []
    for rel, data in files.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_bytes(data)
        listed = (record_paths or {}).get(rel, rel)
        rows.append(f"{listed},{_hash(data, algorithm)},{len(data)}")
    for name in meta:
        data = (info / name).read_bytes()
        rows.append(f"solo-1.0.dist-info/{name},{_hash(data)},{len(data)}")
    rows += [*extra_rows, "solo-1.0.dist-info/RECORD,,"]
    (info / "RECORD").write_text("\n".join(rows) + "\n")
    return PathDistribution(info)


def _prov(dist: PathDistribution, entry_point: str = "solo") -> object:
    return provenance_for(dist, plugin_id="demo", entry_point=entry_point)


def test_single_module_plugin_is_covered(tmp_path: Path) -> None:
    rec = _prov(make_site(tmp_path, {"solo.py": b"REYN_API = 1\n"}))
    assert rec.digest_scope == "installed" and rec.problems == ()
    assert "solo.py" in dict(rec.files)


def test_absolute_record_path_inside_site_is_listed_relative(tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    dist = make_site(tmp_path, {"solo.py": b"x = 1\n"}, record_paths={"solo.py": str(site / "solo.py")})
    assert "solo.py" in dict(_prov(dist).files)


def test_paths_leaving_site_packages_are_not_listed_or_read(tmp_path: Path) -> None:
    outside = tmp_path / "bin" / "solo"
    outside.parent.mkdir()
    outside.write_text("#!/venv/bin/python\n")
    rows = [f"../bin/solo,{_hash(b'other')},5", f"{tmp_path / 'bin' / 'solo'},{_hash(b'other')},5"]
    rec = _prov(make_site(tmp_path, {"solo.py": b"x = 1\n"}, extra_rows=rows))
    assert all(not p.startswith("..") and "bin/solo" not in p for p, _ in rec.files)
    assert rec.record_mismatches == ()  # the differing hash of the script was never checked


def test_dot_segments_in_record_paths_are_normalised(tmp_path: Path) -> None:
    dist = make_site(tmp_path, {"solo.py": b"x = 1\n"}, record_paths={"solo.py": "./sub/../solo.py"})
    assert "solo.py" in dict(_prov(dist).files)


def test_sha512_record_hashes_are_checked_too(tmp_path: Path) -> None:
    dist = make_site(tmp_path, {"solo.py": b"x = 1\n"}, algorithm="sha512")
    assert _prov(dist).record_mismatches == ()
    (tmp_path / "site-packages" / "solo.py").write_bytes(b"x = 2\n")
    assert _prov(dist).record_mismatches == ("solo.py",)


def test_malformed_and_unknown_record_hashes_are_problems(tmp_path: Path) -> None:
    rows = ["solo_a.py,sha256=!!!notbase64,3", "solo_b.py,whirlpool=abcd,3"]
    site = tmp_path / "site-packages"
    dist = make_site(tmp_path, {"solo.py": b"x\n"}, extra_rows=rows)
    (site / "solo_a.py").write_text("a\n")
    (site / "solo_b.py").write_text("b\n")
    rec = _prov(dist)
    assert any("malformed hash for solo_a.py" in p for p in rec.problems)
    assert any("unknown hash algorithm 'whirlpool' for solo_b.py" in p for p in rec.problems)


def test_entry_point_with_attribute_names_its_module(tmp_path: Path) -> None:
    files = {"solo/__init__.py": b"", "solo/plugin.py": b"REYN_API = 1\n"}
    rec = provenance_for(
        make_site(tmp_path, files, entry="demo = solo.plugin:hooks"),
        plugin_id="demo",
        entry_point="solo.plugin:hooks",
    )
    assert rec.digest_scope == "installed" and rec.problems == ()


def _editable(tmp_path: Path, site_files: dict[str, bytes], source: dict[str, str]) -> PathDistribution:
    for rel, text in source.items():
        (tmp_path / "checkout" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "checkout" / rel).write_text(text)
    direct = json.dumps({"url": (tmp_path / "checkout").as_uri(), "dir_info": {"editable": True}})
    return make_site(tmp_path, site_files, metadata={"direct_url.json": direct})


def test_pth_path_line_editable_install_is_found(tmp_path: Path) -> None:
    """hatchling / flit style: a ``.pth`` file naming the source folder."""
    src = tmp_path / "checkout" / "src"
    dist = _editable(
        tmp_path,
        {"_solo.pth": f"{src}\n".encode()},
        {"src/solo/__init__.py": "", "src/solo/plugin.py": "REYN_API = 1\n"},
    )
    rec = _prov(dist, "solo.plugin")
    assert (rec.source_kind, rec.digest_scope, rec.problems) == ("editable", "source-tree", ())
    assert {"solo/__init__.py", "solo/plugin.py", "_solo.pth"} <= dict(rec.files).keys()


def test_multi_line_finder_mapping_is_parsed_not_run(tmp_path: Path) -> None:
    pkg = tmp_path / "checkout" / "solo"
    finder = (
        f"raise SystemExit('the finder must not run')\nMAPPING: dict[str, str] = {{\n"
        f"    'solo': {str(pkg)!r},\n}}\n"
    ).encode()
    dist = _editable(tmp_path, {"__editable___solo_1_0_finder.py": finder}, {"solo/__init__.py": "A = 1\n"})
    rec = _prov(dist)
    assert rec.problems == () and "solo/__init__.py" in dict(rec.files)


def test_symlink_loop_in_a_source_tree_terminates(tmp_path: Path) -> None:
    src = tmp_path / "checkout"
    dist = _editable(tmp_path, {"_solo.pth": f"{src}\n".encode()}, {"solo/__init__.py": ""})
    os.symlink(src / "solo", src / "solo" / "loop")
    rec = _prov(dist)
    assert "solo/__init__.py" in dict(rec.files)
    assert sum(p.endswith("__init__.py") for p, _ in rec.files) <= 2  # the loop is entered at most once


def test_editable_source_is_searched_in_import_order(tmp_path: Path) -> None:
    """A regular package in site-packages shadows the editable source, so it is what gets digested."""
    src = tmp_path / "checkout"
    dist = _editable(
        tmp_path,
        {"_solo.pth": f"{src}\n".encode(), "solo/__init__.py": b"SHADOW = 1\n"},
        {"solo/__init__.py": "REAL = 1\n"},
    )
    rec = _prov(dist)
    assert dict(rec.files)["solo/__init__.py"] == hashlib.sha256(b"SHADOW = 1\n").hexdigest()


def test_one_rule_says_a_record_is_not_fully_hashed_in_the_loaders_words(tmp_path: Path) -> None:
    """``record.unverified`` is the one rule the loader's step 3, a worker's ``plugin_from_record``
    and an extension's import share: the same codes, the loader's words (an extension's own wording,
    ``itself=True``, only drops the distribution it already names), the first five files named."""
    from dataclasses import asdict

    import pytest

    from reyn_core.errors import PluginLoadError
    from reyn_core.loading.plugin_module import plugin_from_record
    from reyn_core.loading.step3_provenance.record import unverified

    files = {f"solo/m{i}.py": b"X = 1\n" for i in range(6)} | {"solo/__init__.py": b"REYN_API = 1\n"}
    dist = make_site(tmp_path, files)
    clean = _prov(dist)
    assert unverified(clean, entry_point="solo") == []  # the control: as installed, fully hashed
    for i in range(6):
        (tmp_path / "site-packages" / f"solo/m{i}.py").write_bytes(b"X = 2\n")
    rec = _prov(dist)
    shown = "solo/m0.py, solo/m1.py, solo/m2.py, solo/m3.py, solo/m4.py …"
    assert unverified(rec) == [("RP002", f"6 installed file(s) of solo differ from its RECORD: {shown}")]
    assert unverified(rec, itself=True) == [("RP002", f"6 installed file(s) differ from its RECORD: {shown}")]
    with pytest.raises(PluginLoadError) as info:  # the worker's load refuses it in the same words
        plugin_from_record(asdict(rec))
    assert (info.value.code, info.value.message) == unverified(rec)[0]

    uncovered = unverified(rec, entry_point="other")  # RI009 first, then what the loader refuses too
    assert [code for code, _ in uncovered] == ["RI009", "RP002"]
    assert uncovered[0][1].startswith("plugin 'demo' (solo 1.0) is not imported: the digest of solo")
    incomplete = unverified(clean.__class__(**{**asdict(clean), "problems": ("a", "b", "c", "d")}))
    assert incomplete == [("RP005", "the digest of solo may be incomplete: a; b; c")]
