"""The file pack installs alone into a fresh venv, is discovered, and — enabled by a profile —
renders on the right surfaces and runs through the real ``reyn`` CLI."""

from __future__ import annotations

import json

# the pack the shared `pack` fixture (tests/packs/conftest.py) installs
PACK = "file"

ALL = ["delete_file", "edit_file", "glob_files", "grep_files", "list_directory", "read_file", "write_file"]
READ_ONLY = ["glob_files", "grep_files", "list_directory", "read_file"]


def test_only_core_and_the_file_pack_are_installed(pack):
    assert pack.reyn_distributions() == ["reyn-core", "reyn-tools-file"]


def test_the_pack_is_discovered_but_contributes_nothing_until_enabled(pack, tmp_path):
    entry = pack.assert_discovered_but_silent(tmp_path, "file")
    assert entry["distribution"] == "reyn-tools-file"


def test_enabled_with_a_write_root_all_tools_render_on_both_surfaces(pack, tmp_path):
    (tmp_path / "reyn.toml").write_text(
        '[plugins]\nenable = ["file"]\n[plugins.file.settings]\nwrite_roots = ["out"]\n'
    )
    entry = pack.plugins(tmp_path)["file"]
    assert entry["status"] == "loaded" and sorted(entry["tools"]) == ALL
    assert pack.router(tmp_path) == ALL
    assert pack.phase(tmp_path) == ALL  # the phase default allowed_ops admit the "file" cluster
    assert pack.phase(tmp_path, "read_file") == ["read_file"]


def test_enabled_without_a_write_root_only_read_tools_render(pack, tmp_path):
    (tmp_path / "reyn.toml").write_text('[plugins]\nenable = ["file"]\n')
    assert pack.router(tmp_path) == READ_ONLY
    assert pack.phase(tmp_path) == READ_ONLY


def test_tools_run_in_the_fresh_venv_and_refuse_escapes(pack, tmp_path):
    (tmp_path / "reyn.toml").write_text(
        '[plugins]\nenable = ["file"]\n[plugins.file.settings]\nwrite_roots = ["out"]\n'
    )
    wrote = pack.json(
        "tools",
        "call",
        "write_file",
        "--args",
        json.dumps({"path": "out/a.txt", "content": "hi\n"}),
        cwd=tmp_path,
    )
    assert wrote["data"]["created"] is True and (tmp_path / "out" / "a.txt").read_text() == "hi\n"
    proc = pack.venv.run(
        "reyn", "tools", "call", "read_file", "--args", json.dumps({"path": "../x"}), cwd=tmp_path
    )
    assert proc.returncode != 0
    assert json.loads(proc.stdout)["error"]["kind"] == "denied"


def test_a_settings_typo_fails_the_plugin_at_load_with_its_key(pack, tmp_path):
    pack.assert_settings_typo_fails(tmp_path, "file", 'write_root = ["out"]')
