"""The catalog pack installs alone into a fresh venv, is discovered, and — enabled by a profile —
renders each tool on its own surfaces and reads skills from the configured folder."""

from __future__ import annotations

import json

import pytest

# the pack the shared `pack` fixture (tests/packs/conftest.py) installs
PACK = "catalog"

BOTH = ["describe_agent", "describe_skill", "invoke_skill", "list_agents", "list_skills"]
PROFILE = (
    '[plugins]\nenable = ["catalog"]\n[plugins.catalog.settings]\n'
    'skill_dirs = ["skills"]\nagent_dirs = ["agents"]\n'
)


@pytest.fixture
def project(tmp_path):
    (tmp_path / "reyn.toml").write_text(PROFILE)
    (tmp_path / "skills" / "sum").mkdir(parents=True)
    (tmp_path / "skills" / "sum" / "SKILL.md").write_text(
        "---\nname: summarize\ndescription: Summarize.\n---\nDo.\n"
    )
    (tmp_path / "skills" / "bad").mkdir()
    (tmp_path / "skills" / "bad" / "SKILL.md").write_text("no front matter\n")
    (tmp_path / "agents").mkdir()
    return tmp_path


def test_only_core_and_the_catalog_pack_are_installed(pack):
    assert pack.reyn_distributions() == ["reyn-core", "reyn-tools-catalog"]


def test_discovered_but_silent_until_enabled(pack, tmp_path):
    pack.assert_discovered_but_silent(tmp_path, "catalog")


def test_enabled_each_tool_renders_on_its_own_surfaces(pack, project):
    router = pack.json("tools", "render", "--surface", "router", "--json", cwd=project)
    assert [t["function"]["name"] for t in router] == sorted([*BOTH, "delegate_to_agent", "plan"])
    invoke = next(t for t in router if t["function"]["name"] == "invoke_skill")
    assert invoke["function"]["parameters"]["properties"]["skill"]["enum"] == ["summarize"]
    assert pack.phase(project) == ["ask_user"]
    assert pack.phase(project, "catalog", "ask_user") == sorted([*BOTH, "ask_user", "lint_skill"])
    assert pack.phase(project, "lint_skill") == ["lint_skill"]  # phase only: named by its own name


def test_tools_run_and_a_broken_file_is_reported_not_fatal(pack, project):
    data = pack.json("tools", "call", "list_skills", cwd=project)["data"]
    assert data["count"] == 1
    doctor = pack.venv.run("reyn", "doctor", "--json", cwd=project)
    found = [d for d in json.loads(doctor.stdout)["diagnostics"] if d["code"] == "RK001"]
    assert found and found[0]["plugin"] == "catalog"  # the broken SKILL.md, reported by the doctor
    assert doctor.returncode == 1  # a broken skill file is an error finding
    missing = pack.venv.run(
        "reyn", "tools", "call", "invoke_skill", "--args", '{"skill": "summarize"}', cwd=project
    )
    assert json.loads(missing.stdout)["error"]["kind"] == "runtime_missing"
