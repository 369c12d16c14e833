"""The memory pack installs alone into a fresh venv, is discovered, and — enabled by a profile —
renders on both surfaces, runs through ``reyn tools call`` and contributes ``reyn memory``."""

from __future__ import annotations

import json

# the pack the shared `pack` fixture (tests/packs/conftest.py) installs
PACK = "memory"

ALL = ["forget_memory", "list_memory", "read_memory_body", "remember_agent", "remember_shared"]
PROFILE = '[plugins]\nenable = ["memory"]\n[plugins.memory.settings]\npath = "state/memory.db"\n'


def test_only_core_and_the_memory_pack_are_installed(pack):
    assert pack.reyn_distributions() == ["reyn-core", "reyn-tools-memory"]


def test_discovered_but_silent_until_enabled(pack, tmp_path):
    pack.assert_discovered_but_silent(tmp_path, "memory")


def test_enabled_the_tools_render_on_both_surfaces(pack, tmp_path):
    (tmp_path / "reyn.toml").write_text(PROFILE)
    assert pack.router(tmp_path) == ALL
    assert pack.phase(tmp_path) == []  # the phase default allowed_ops are file + ask_user
    assert pack.phase(tmp_path, "memory") == ALL


def test_tools_run_and_reyn_memory_exports_and_imports(pack, tmp_path):
    (tmp_path / "reyn.toml").write_text(PROFILE)
    args = {"slug": "hello", "name": "Hello", "description": "a greeting", "type": "user", "body": "hi\n"}
    assert (
        pack.json("tools", "call", "remember_shared", "--args", json.dumps(args), cwd=tmp_path)["data"][
            "status"
        ]
        == "created"
    )
    assert (tmp_path / "state" / "memory.db").is_file()
    proc = pack.venv.run("reyn", "memory", "export", "out", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "out" / "shared" / "hello.md").read_text().endswith("---\nhi\n")
    (tmp_path / "out" / "shared" / "hello.md").write_text(
        "---\nslug: hello\nname: Hello\ndescription: edited by hand\ntype: user\nlayer: shared\n---\nhello\n"
    )
    proc = pack.venv.run("reyn", "memory", "import", "out", cwd=tmp_path)
    assert proc.returncode == 0 and "1 updated" in proc.stdout, proc.stderr
    read = pack.json("tools", "call", "read_memory_body", "--args", '{"slug": "hello"}', cwd=tmp_path)
    assert (read["data"]["description"], read["data"]["body"]) == ("edited by hand", "hello\n")


def test_a_settings_typo_fails_the_plugin_with_its_key(pack, tmp_path):
    pack.assert_settings_typo_fails(tmp_path, "memory", 'paht = "x.db"')
