"""The catalog pack installs alone into a fresh venv, is discovered, and — enabled by a profile —
renders each tool on its own surfaces and reads skills from the configured folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

BOTH = ["describe_agent", "describe_skill", "invoke_skill", "list_agents", "list_skills"]
PROFILE = ('[plugins]\nenable = ["catalog"]\n[plugins.catalog.settings]\n'
           'skill_dirs = ["skills"]\nagent_dirs = ["agents"]\n')


def _json(proc: Any) -> Any:
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout)


def _render(venv: Any, cwd: Path, surface: str, *ops: str) -> Any:
    extra = ["--allowed-ops", *ops] if ops else []
    return _json(venv.run("reyn", "tools", "render", "--surface", surface, "--json", *extra, cwd=cwd))


@pytest.fixture(scope="module")
def venv(make_module_venv):
    venv = make_module_venv("catalog-pack")
    venv.install("reyn-core", "reyn_builtin_tools/catalog")
    return venv


@pytest.fixture
def project(tmp_path):
    (tmp_path / "reyn.toml").write_text(PROFILE)
    (tmp_path / "skills" / "sum").mkdir(parents=True)
    (tmp_path / "skills" / "sum" / "SKILL.md").write_text("---\nname: summarize\ndescription: Summarize.\n---\nDo.\n")
    (tmp_path / "skills" / "bad").mkdir()
    (tmp_path / "skills" / "bad" / "SKILL.md").write_text("no front matter\n")
    (tmp_path / "agents").mkdir()
    return tmp_path


def test_only_core_and_the_catalog_pack_are_installed(venv):
    names = _json(venv.run("python", "-c", "import json, importlib.metadata as m; "
                           "print(json.dumps(sorted(d.metadata['Name'].lower() for d in m.distributions())))"))
    assert [n for n in names if n.startswith("reyn-")] == ["reyn-core", "reyn-tools-catalog"]


def test_discovered_but_silent_until_enabled(venv, tmp_path):
    entry = {p["id"]: p for p in _json(venv.run("reyn", "plugins", "list", "--json", cwd=tmp_path))["plugins"]}
    assert (entry["catalog"]["status"], entry["catalog"]["enabled"]) == ("discovered", False)
    assert _render(venv, tmp_path, "router") == []


def test_enabled_each_tool_renders_on_its_own_surfaces(venv, project):
    router = _render(venv, project, "router")
    assert [t["function"]["name"] for t in router] == sorted([*BOTH, "delegate_to_agent", "plan"])
    invoke = next(t for t in router if t["function"]["name"] == "invoke_skill")
    assert invoke["function"]["parameters"]["properties"]["skill"]["enum"] == ["summarize"]
    assert [op["kind"] for op in _render(venv, project, "phase")["ops"]] == ["ask_user"]
    assert [op["kind"] for op in _render(venv, project, "phase", "catalog", "ask_user")["ops"]] == sorted(
        [*BOTH, "ask_user"])


def test_tools_run_and_a_broken_file_is_reported_not_fatal(venv, project):
    proc = venv.run("reyn", "tools", "call", "list_skills", cwd=project)
    data = _json(proc)["data"]
    assert data["count"] == 1
    doctor = venv.run("reyn", "doctor", "--json", cwd=project)
    found = [d for d in json.loads(doctor.stdout)["diagnostics"] if d["code"] == "RK001"]
    assert found and found[0]["plugin"] == "catalog"  # the broken SKILL.md, reported by the doctor
    assert doctor.returncode == 1  # a broken skill file is an error finding
    missing = venv.run("reyn", "tools", "call", "invoke_skill", "--args", '{"skill": "summarize"}', cwd=project)
    assert json.loads(missing.stdout)["error"]["kind"] == "runtime_missing"
