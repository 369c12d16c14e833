"""The shell pack installs alone into a fresh venv, is discovered, and — enabled by a profile —
renders on the phase surface only; a mistaken allowlist rule fails at profile load."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

PROFILE = '''
[plugins]
enable = ["shell"]

[[plugins.shell.settings.programs]]
name = "echo"
any_args = true
match = ["echo hello"]
'''


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
    venv = make_module_venv("shell-pack")
    venv.install("reyn-core", "reyn_builtin_tools/shell")
    return venv


def test_only_core_and_the_shell_pack_are_installed(venv):
    proc = venv.run("python", "-c", "import json, importlib.metadata as m; "
                    "print(json.dumps(sorted(d.metadata['Name'].lower() for d in m.distributions())))")
    names = _json(proc)
    assert [n for n in names if n.startswith("reyn-tools-")] == ["reyn-tools-shell"]


def test_the_pack_is_discovered_but_contributes_nothing_until_enabled(venv, tmp_path):
    entry = _plugins(venv, tmp_path)["shell"]
    assert (entry["status"], entry["enabled"], entry["tools"]) == ("discovered", False, [])
    assert _phase(venv, tmp_path, "shell") == []


def test_enabled_it_renders_on_the_phase_surface_only(venv, tmp_path):
    (tmp_path / "reyn.toml").write_text(PROFILE)
    entry = _plugins(venv, tmp_path)["shell"]
    assert entry["status"] == "loaded" and entry["tools"] == ["shell"]
    assert _router(venv, tmp_path) == []
    assert _phase(venv, tmp_path) == []  # not in the default allowed_ops ["file", "ask_user"]
    assert _phase(venv, tmp_path, "shell") == ["shell"]


def test_enabled_without_programs_it_is_unavailable(venv, tmp_path):
    (tmp_path / "reyn.toml").write_text('[plugins]\nenable = ["shell"]\n')
    assert _plugins(venv, tmp_path)["shell"]["status"] == "loaded"
    assert _phase(venv, tmp_path, "shell") == []


def test_it_runs_on_the_phase_surface_and_is_refused_on_the_router(venv, tmp_path):
    (tmp_path / "reyn.toml").write_text(PROFILE)
    ran = _json(venv.run("reyn", "tools", "call", "shell", "--surface", "phase", "--allowed-ops", "shell",
                         "--args", json.dumps({"command": "echo hello; rm -rf /"}), cwd=tmp_path))
    assert ran["data"]["stdout"] == "hello; rm -rf /\n" and ran["data"]["exit_code"] == 0
    proc = venv.run("reyn", "tools", "call", "shell", "--surface", "router",
                    "--args", json.dumps({"argv": ["echo", "x"]}), cwd=tmp_path)
    assert proc.returncode != 0
    assert json.loads(proc.stdout)["error"]["kind"] == "gate_refused"


def test_a_mistaken_rule_fails_at_profile_load(venv, tmp_path):
    (tmp_path / "reyn.toml").write_text(PROFILE + '''
[[plugins.shell.settings.programs]]
name = "git"
subcommands = ["status", "log"]
not_match = ["git log"]
''')
    entry = _plugins(venv, tmp_path)["shell"]
    assert entry["status"] == "failed" and entry["tools"] == []
    assert "not_match example 'git log' is allowed" in entry["diagnostics"][0]["message"]
    doctor = venv.run("reyn", "doctor", cwd=tmp_path)
    assert doctor.returncode == 1 and "RC001" in doctor.stdout
