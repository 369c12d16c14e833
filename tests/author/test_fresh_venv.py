"""The author experience in a brand-new virtual environment: only reyn-core and one plugin.

Real venvs, real ``pip install`` from wheels and folders, the real ``reyn`` console script.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from typing import Any

import pytest

EXAMPLE_TOOLS = ["convert_units", "markdown_outline", "text_stats"]


def _plugins(proc: Any) -> dict[str, dict[str, Any]]:
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(proc.stdout)
    entries = data["plugins"] if isinstance(data, dict) else data
    return {entry["id"]: entry for entry in entries}


def _router_names(proc: Any) -> list[str]:
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(proc.stdout)
    tools = data["tools"] if isinstance(data, dict) else data
    return [t["function"]["name"] for t in tools]


@pytest.fixture(scope="module")
def example_venv(make_module_venv):
    venv = make_module_venv("example")
    venv.install("reyn-core", "reyn_plugin_example", "pytest")
    return venv


def test_only_core_and_the_example_are_installed(example_venv):
    proc = example_venv.run("python", "-m", "pip", "list", "--format=json")
    if proc.returncode != 0:  # venvs are made --without-pip: ask importlib.metadata instead
        proc = example_venv.run(
            "python",
            "-c",
            "import json, importlib.metadata as m; "
            "print(json.dumps([{'name': d.metadata['Name']} for d in m.distributions()]))",
        )
    names = {d["name"].lower() for d in json.loads(proc.stdout)}
    assert {"reyn-core", "reyn-plugin-example"} <= names
    assert not any(n.startswith("reyn-tools-") for n in names)


def test_plugins_list_shows_the_example_discovered_but_not_enabled(example_venv, tmp_path):
    plugins = _plugins(example_venv.run("reyn", "plugins", "list", "--json", cwd=tmp_path))
    entry = plugins["example"]
    assert (entry["status"], entry["enabled"]) == ("discovered", False)
    assert entry["distribution"] == "reyn-plugin-example"
    assert entry["tools"] == []  # never imported while not enabled


def test_without_a_profile_no_tool_is_rendered(example_venv, tmp_path):
    assert (
        _router_names(
            example_venv.run("reyn", "tools", "render", "--surface", "router", "--json", cwd=tmp_path)
        )
        == []
    )


def test_enabling_it_in_a_profile_renders_its_tools(example_venv, tmp_path):
    (tmp_path / "reyn.toml").write_text('[plugins]\nenable = ["example"]\n')
    names = _router_names(
        example_venv.run("reyn", "tools", "render", "--surface", "router", "--json", cwd=tmp_path)
    )
    assert names == ["convert_units", "text_stats"]  # markdown_outline is phase-only
    plugins = _plugins(example_venv.run("reyn", "plugins", "list", "--json", cwd=tmp_path))
    assert plugins["example"]["status"] == "loaded"
    assert sorted(plugins["example"]["tools"]) == EXAMPLE_TOOLS
    assert plugins["example"]["origin"]["source_kind"] in ("directory", "wheel")


def test_its_own_tests_pass_against_the_installed_plugin(example_venv, repo_root, tmp_path):
    # A copy outside the source tree: the tests can only see the installed distribution.
    shutil.copytree(repo_root / "reyn_plugin_example" / "tests", tmp_path / "tests")
    proc = example_venv.run("python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout and "failed" not in proc.stdout


def test_plugins_new_scaffolds_a_project_whose_tests_pass_after_install(make_venv, tmp_path):
    venv = make_venv("scaffold")
    venv.install("reyn-core")
    work = tmp_path / "work"
    work.mkdir()
    proc = venv.run("reyn", "plugins", "new", "demo_plugin", cwd=work)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    project = work / "demo_plugin"
    assert (project / "pyproject.toml").is_file()
    assert "pip install -e '.[test]'" in proc.stdout  # the next steps, followed here as printed

    # pip install -e '.[test]' from the project folder: the test extra brings pytest and pytest-asyncio.
    pip = [sys.executable, "-m", "pip", "--python", str(venv.python), "install", "-q", "--no-index"]
    installed = subprocess.run(
        [*pip, "--find-links", str(venv.wheelhouse), "-e", ".[test]"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    tests = venv.run("python", "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=project)
    assert tests.returncode == 0, tests.stdout[-4000:] + tests.stderr[-2000:]
    assert "6 passed" in tests.stdout  # including the async test, with no marker
    assert (
        "reyn: plugin 'demo_plugin' under test loaded from reyn-demo-plugin 0.1.0, editable" in tests.stdout
    )

    plugins = _plugins(venv.run("reyn", "plugins", "list", "--json", cwd=work))
    assert plugins["demo_plugin"]["status"] == "discovered"
    assert plugins["demo_plugin"]["distribution"] == "reyn-demo-plugin"


def test_plugins_new_refuses_a_bad_name_in_one_line(make_venv, tmp_path):
    venv = make_venv("badname")
    venv.install("reyn-core")
    work = tmp_path / "work"
    work.mkdir()
    proc = venv.run("reyn", "plugins", "new", "Bad-Name", cwd=work)
    assert proc.returncode == 2
    assert "lowercase letters, digits and '_'" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert list(work.iterdir()) == []
