"""``scaffold_plugin`` (``reyn plugins new NAME``): a working plugin project, or a clear refusal."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
import tomllib

from reyn_core.cli.scaffold import ScaffoldError, distribution_name, scaffold_plugin
from reyn_testing import ToolCaller, registry_from_plugin

EXPECTED_FILES = [
    ".gitignore",
    "README.md",
    "pyproject.toml",
    "src/demo_plugin/__init__.py",
    "src/demo_plugin/plugin.py",
    "tests/conftest.py",
    "tests/test_plugin.py",
]


def _files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def _import(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_creates_the_project_folder_named_after_the_plugin(tmp_path):
    root = scaffold_plugin("demo_plugin", tmp_path)
    assert root == tmp_path / "demo_plugin"
    assert _files(root) == EXPECTED_FILES


def test_pyproject_declares_the_entry_point_and_a_src_layout(tmp_path):
    data = tomllib.loads((scaffold_plugin("demo_plugin", tmp_path) / "pyproject.toml").read_text())
    assert data["project"]["name"] == "reyn-demo-plugin"
    assert data["project"]["entry-points"]["reyn.plugins"] == {"demo_plugin": "demo_plugin.plugin"}
    assert "reyn-core>=0.1,<0.2" in data["project"]["dependencies"]
    assert data["tool"]["setuptools"]["packages"]["find"]["where"] == ["src"]


def test_the_generated_plugin_works_through_its_hooks(tmp_path):
    root = scaffold_plugin("demo_plugin", tmp_path)
    module = _import(root / "src/demo_plugin/plugin.py", "scaffolded_demo_plugin")
    caller = ToolCaller(registry_from_plugin(module, plugin_id="demo_plugin", settings={"greeting": "Hi"}))
    assert caller.router_tools() == ["demo_plugin_greet"]
    assert caller.phase_ops(["demo_plugin"]) == ["demo_plugin_greet"]
    assert caller.router("demo_plugin_greet", {"name": "Ada"}).unwrap() == "Hi, Ada!"


def test_the_generated_tests_compile(tmp_path):
    root = scaffold_plugin("demo_plugin", tmp_path)
    for path in (root / "tests").glob("*.py"):
        compile(path.read_text(), str(path), "exec")


def test_an_existing_empty_folder_is_used(tmp_path):
    (tmp_path / "demo_plugin").mkdir()
    assert _files(scaffold_plugin("demo_plugin", tmp_path)) == EXPECTED_FILES


def test_a_non_empty_destination_is_refused_and_left_alone(tmp_path):
    (tmp_path / "demo_plugin").mkdir()
    (tmp_path / "demo_plugin" / "mine.txt").write_text("keep")
    with pytest.raises(ScaffoldError, match="already exists and is not empty"):
        scaffold_plugin("demo_plugin", tmp_path)
    assert _files(tmp_path / "demo_plugin") == ["mine.txt"]


def test_a_file_in_the_way_is_refused(tmp_path):
    (tmp_path / "demo_plugin").write_text("x")
    with pytest.raises(ScaffoldError, match="already exists"):
        scaffold_plugin("demo_plugin", tmp_path)


@pytest.mark.parametrize(
    "name", ["", "Demo", "1demo", "demo-plugin", "demo plugin", "../evil", "a" * 41, "dé"]
)
def test_unusable_names_are_refused_saying_what_is_allowed(tmp_path, name):
    with pytest.raises(ScaffoldError, match="lowercase letters, digits and '_'"):
        scaffold_plugin(name, tmp_path)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["class", "json", "asyncio"])
def test_keywords_and_stdlib_modules_are_refused(tmp_path, name):
    with pytest.raises(ScaffoldError, match="keyword or standard-library module"):
        scaffold_plugin(name, tmp_path)


@pytest.mark.parametrize(("name", "dist"), [("file", "reyn-tools-file"), ("example", "reyn-plugin-example")])
def test_ids_of_installed_plugins_are_refused_naming_the_distribution(tmp_path, name, dist):
    with pytest.raises(ScaffoldError, match=f"taken by the installed distribution {dist}"):
        scaffold_plugin(name, tmp_path)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["test", "pydantic", "pluggy", "reyn_tools_file"])
def test_names_this_environment_already_imports_are_refused_naming_where(tmp_path, name):
    # `test` is the stdlib's test package (not in sys.stdlib_module_names), pydantic and pluggy are
    # what reyn-core imports: a plugin package of that name would shadow them or be shadowed.
    import importlib.util

    with pytest.raises(ScaffoldError, match=f"{name!r} is already importable here"):
        scaffold_plugin(name, tmp_path)
    assert list(tmp_path.iterdir()) == []
    assert importlib.util.find_spec("demo_plugin_unused") is None  # control: a free name is free
    assert scaffold_plugin("demo_plugin_unused", tmp_path).is_dir()


@pytest.mark.parametrize("name", ["reyn", "reyn_core"])
def test_reyns_own_names_are_refused(tmp_path, name):
    with pytest.raises(ScaffoldError, match="is Reyn's own"):
        scaffold_plugin(name, tmp_path)


def test_distribution_names():
    assert distribution_name("weather") == "reyn-weather"
    assert distribution_name("demo_plugin") == "reyn-demo-plugin"
    assert distribution_name("reyn_weather") == "reyn-weather"


def test_scaffold_error_is_a_reyn_error_so_the_cli_prints_one_line():
    from reyn_core import ReynError

    assert issubclass(ScaffoldError, ReynError)
    assert "reyn_core.cli.scaffold" in sys.modules
