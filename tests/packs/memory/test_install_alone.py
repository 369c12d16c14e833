"""The memory pack installs alone into a fresh venv, is discovered, and — enabled by a profile —
renders on both surfaces, runs through ``reyn tools call`` and contributes ``reyn memory``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

ALL = ["forget_memory", "list_memory", "read_memory_body", "remember_agent", "remember_shared"]
PROFILE = '[plugins]\nenable = ["memory"]\n[plugins.memory.settings]\npath = "state/memory.db"\n'


def _json(proc: Any) -> Any:
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout)


def _render(venv: Any, cwd: Path, surface: str, *ops: str) -> list[str]:
    extra = ["--allowed-ops", *ops] if ops else []
    data = _json(venv.run("reyn", "tools", "render", "--surface", surface, "--json", *extra, cwd=cwd))
    return [t["function"]["name"] for t in data] if surface == "router" else [op["kind"] for op in data["ops"]]


@pytest.fixture(scope="module")
def venv(make_module_venv):
    venv = make_module_venv("memory-pack")
    venv.install("reyn-core", "reyn_builtin_tools/memory")
    return venv


def test_only_core_and_the_memory_pack_are_installed(venv):
    names = _json(venv.run("python", "-c", "import json, importlib.metadata as m; "
                           "print(json.dumps(sorted(d.metadata['Name'].lower() for d in m.distributions())))"))
    assert [n for n in names if n.startswith("reyn-")] == ["reyn-core", "reyn-tools-memory"]


def test_discovered_but_silent_until_enabled(venv, tmp_path):
    data = _json(venv.run("reyn", "plugins", "list", "--json", cwd=tmp_path))
    entry = {p["id"]: p for p in data["plugins"]}["memory"]
    assert (entry["status"], entry["enabled"], entry["tools"]) == ("discovered", False, [])
    assert _render(venv, tmp_path, "router") == []


def test_enabled_the_tools_render_on_both_surfaces(venv, tmp_path):
    (tmp_path / "reyn.toml").write_text(PROFILE)
    assert _render(venv, tmp_path, "router") == ALL
    assert _render(venv, tmp_path, "phase") == []  # the phase default allowed_ops are file + ask_user
    assert _render(venv, tmp_path, "phase", "memory") == ALL


def test_tools_run_and_reyn_memory_exports_and_imports(venv, tmp_path):
    (tmp_path / "reyn.toml").write_text(PROFILE)
    args = {"slug": "hello", "name": "Hello", "description": "a greeting", "type": "user", "body": "hi\n"}
    assert _json(venv.run("reyn", "tools", "call", "remember_shared", "--args", json.dumps(args),
                          cwd=tmp_path))["data"]["status"] == "created"
    assert (tmp_path / "state" / "memory.db").is_file()
    proc = venv.run("reyn", "memory", "export", "out", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "out" / "shared" / "hello.md").read_text().endswith("---\nhi\n")
    (tmp_path / "out" / "shared" / "hello.md").write_text(
        "---\nslug: hello\nname: Hello\ndescription: edited by hand\ntype: user\nlayer: shared\n---\nhello\n")
    proc = venv.run("reyn", "memory", "import", "out", cwd=tmp_path)
    assert proc.returncode == 0 and "1 updated" in proc.stdout, proc.stderr
    read = _json(venv.run("reyn", "tools", "call", "read_memory_body", "--args", '{"slug": "hello"}', cwd=tmp_path))
    assert (read["data"]["description"], read["data"]["body"]) == ("edited by hand", "hello\n")


def test_a_settings_typo_fails_the_plugin_with_its_key(venv, tmp_path):
    (tmp_path / "reyn.toml").write_text('[plugins]\nenable = ["memory"]\n[plugins.memory.settings]\npaht = "x.db"\n')
    data = _json(venv.run("reyn", "plugins", "list", "--json", cwd=tmp_path))
    entry = {p["id"]: p for p in data["plugins"]}["memory"]
    assert entry["status"] == "failed" and "paht" in entry["diagnostics"][0]["message"]
