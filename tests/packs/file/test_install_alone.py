"""The file pack installs alone into a fresh venv, is discovered, and — enabled by a profile —
renders on the right surfaces and runs through the real ``reyn`` CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

ALL = ["delete_file", "edit_file", "glob_files", "grep_files", "list_directory", "read_file", "write_file"]
READ_ONLY = ["glob_files", "grep_files", "list_directory", "read_file"]


def _json(proc: Any) -> Any:
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout)


def _plugins(venv: Any, cwd: Path) -> dict[str, dict[str, Any]]:
    data = _json(venv.run("reyn", "plugins", "list", "--json", cwd=cwd))
    return {p["id"]: p for p in data["plugins"]}


def _router(venv: Any, cwd: Path) -> list[str]:
    return [t["function"]["name"] for t in _json(venv.run("reyn", "tools", "render", "--surface", "router",
                                                          "--json", cwd=cwd))]


def _phase(venv: Any, cwd: Path, *ops: str) -> list[str]:
    extra = ["--allowed-ops", *ops] if ops else []
    data = _json(venv.run("reyn", "tools", "render", "--surface", "phase", "--json", *extra, cwd=cwd))
    return [op["kind"] for op in data["ops"]]


@pytest.fixture(scope="module")
def venv(make_module_venv):
    venv = make_module_venv("file-pack")
    venv.install("reyn-core", "reyn_builtin_tools/file")
    return venv


def test_only_core_and_the_file_pack_are_installed(venv):
    proc = venv.run("python", "-c", "import json, importlib.metadata as m; "
                    "print(json.dumps(sorted(d.metadata['Name'].lower() for d in m.distributions())))")
    names = _json(proc)
    assert "reyn-tools-file" in names and "reyn-core" in names
    assert [n for n in names if n.startswith("reyn-tools-")] == ["reyn-tools-file"]


def test_the_pack_is_discovered_but_contributes_nothing_until_enabled(venv, tmp_path):
    entry = _plugins(venv, tmp_path)["file"]
    assert (entry["status"], entry["enabled"], entry["tools"]) == ("discovered", False, [])
    assert entry["distribution"] == "reyn-tools-file"
    assert _router(venv, tmp_path) == []


def test_enabled_with_a_write_root_all_tools_render_on_both_surfaces(venv, tmp_path):
    (tmp_path / "reyn.toml").write_text('[plugins]\nenable = ["file"]\n'
                                        '[plugins.file.settings]\nwrite_roots = ["out"]\n')
    entry = _plugins(venv, tmp_path)["file"]
    assert entry["status"] == "loaded" and sorted(entry["tools"]) == ALL
    assert _router(venv, tmp_path) == ALL
    assert _phase(venv, tmp_path) == ALL  # the phase default allowed_ops admit the "file" cluster
    assert _phase(venv, tmp_path, "read_file") == ["read_file"]


def test_enabled_without_a_write_root_only_read_tools_render(venv, tmp_path):
    (tmp_path / "reyn.toml").write_text('[plugins]\nenable = ["file"]\n')
    assert _router(venv, tmp_path) == READ_ONLY
    assert _phase(venv, tmp_path) == READ_ONLY


def test_tools_run_in_the_fresh_venv_and_refuse_escapes(venv, tmp_path):
    (tmp_path / "reyn.toml").write_text('[plugins]\nenable = ["file"]\n'
                                        '[plugins.file.settings]\nwrite_roots = ["out"]\n')
    wrote = _json(venv.run("reyn", "tools", "call", "write_file", "--args",
                           json.dumps({"path": "out/a.txt", "content": "hi\n"}), cwd=tmp_path))
    assert wrote["data"]["created"] is True and (tmp_path / "out" / "a.txt").read_text() == "hi\n"
    proc = venv.run("reyn", "tools", "call", "read_file", "--args", json.dumps({"path": "../x"}), cwd=tmp_path)
    assert proc.returncode != 0
    assert json.loads(proc.stdout)["error"]["kind"] == "denied"


def test_a_settings_typo_fails_the_plugin_at_load_with_its_key(venv, tmp_path):
    (tmp_path / "reyn.toml").write_text('[plugins]\nenable = ["file"]\n'
                                        '[plugins.file.settings]\nwrite_root = ["out"]\n')
    entry = _plugins(venv, tmp_path)["file"]
    assert entry["status"] == "failed" and entry["tools"] == []
    assert "write_root" in entry["diagnostics"][0]["message"]
