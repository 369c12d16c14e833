"""The source pack installs alone from its wheel into a fresh venv: there every file has the
installer's RECORD hash, and the real ``reyn`` lists and reads them; a file of reyn-core changed in
site-packages is reported, never served, while the untouched files beside it still are."""

from __future__ import annotations

import json

# the pack the shared `pack` fixture (tests/packs/conftest.py) installs
PACK = "source"

PROFILE = '[plugins]\nenable = ["source"]\n'


def _call(pack, cwd, name: str, args: dict) -> dict:
    proc = pack.venv.run("reyn", "tools", "call", name, "--args", json.dumps(args), cwd=cwd)
    return json.loads(proc.stdout)


def test_only_core_and_the_source_pack_are_installed(pack):
    assert pack.reyn_distributions() == ["reyn-core", "reyn-tools-source"]


def test_enabled_the_tools_render_on_the_router_only(pack, tmp_path):
    (tmp_path / "reyn.toml").write_text(PROFILE)
    assert pack.router(tmp_path) == ["reyn_src_list", "reyn_src_read"]
    assert pack.phase(tmp_path, "source", "reyn_src_list", "reyn_src_read") == []


def test_wheel_installs_are_read_from_their_record(pack, tmp_path):
    (tmp_path / "reyn.toml").write_text(PROFILE)
    listed = _call(pack, tmp_path, "reyn_src_list", {})["data"]["distributions"]
    assert [(d["distribution"], d["record"]) for d in listed] == [
        ("reyn-core", "RECORD"),
        ("reyn-tools-source", "RECORD"),
    ]
    read = _call(
        pack,
        tmp_path,
        "reyn_src_read",
        {"distribution": "reyn-tools-source", "path": "reyn_tools_source/reading.py"},
    )
    assert read["data"]["served"] is True and "def verified_bytes" in read["data"]["text"]


def test_a_tampered_core_file_in_site_packages_is_reported_not_served(pack, tmp_path):
    (tmp_path / "reyn.toml").write_text(PROFILE)
    target = pack.venv.site_packages / "reyn_core" / "jsondata.py"
    original = target.read_bytes()
    untouched = {"distribution": "reyn-core", "path": "reyn_core/errors.py"}
    assert _call(pack, tmp_path, "reyn_src_read", untouched)["data"]["served"] is True
    target.write_bytes(original + b"\nTAMPERED = True\n")
    try:
        data = _call(
            pack, tmp_path, "reyn_src_read", {"distribution": "reyn-core", "path": "reyn_core/jsondata.py"}
        )["data"]
        assert data["served"] is False and "TAMPERED" not in json.dumps(data)
        assert "RECORD" in data["reason"]
        # positive control: the untouched file beside it is still served
        assert _call(pack, tmp_path, "reyn_src_read", untouched)["data"]["served"] is True
    finally:
        target.write_bytes(original)
