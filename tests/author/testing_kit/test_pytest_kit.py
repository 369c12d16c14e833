"""The pytest plugin (entry point ``pytest11: reyn``) as a plugin author's test suite meets it:
real pytest runs in a subprocess, in a temporary project."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

FIXTURES = (
    "reyn_load",
    "reyn_plugin_id",
    "reyn_plugin_settings",
    "reyn_plugin_profile",
    "reyn_plugin_result",
    "reyn_registry",
    "reyn_call",
    "assert_diagnostic",
)


def run_pytest(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
    )


def write(project: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (project / name).write_text(textwrap.dedent(text))
    return project


def test_every_kit_fixture_is_registered_and_documented(tmp_path):
    proc = run_pytest(tmp_path, "--fixtures")
    for name in FIXTURES:
        line = next((ln for ln in proc.stdout.splitlines() if ln.startswith(f"{name} -- ")), None)
        assert line is not None, f"{name} missing from pytest --fixtures"
    assert "No fixtures defined" not in proc.stdout
    assert "no docstring available" not in proc.stdout.split("fixtures defined from reyn_testing")[1][:4000]


def test_the_marker_is_registered(tmp_path):
    proc = run_pytest(tmp_path, "--markers")
    assert "@pytest.mark.reyn_plugin(plugin_id, settings=None)" in proc.stdout


def test_no_plugin_under_test_fails_with_how_to_name_one(tmp_path):
    write(tmp_path, {"test_x.py": "def test_x(reyn_registry):\n    pass\n"})
    proc = run_pytest(tmp_path)
    assert proc.returncode == 1
    assert "no Reyn plugin under test" in proc.stdout
    assert "reyn_plugin_id" in proc.stdout


def test_importing_the_pytest_plugin_imports_no_heavy_dependency():
    code = (
        "import sys, reyn_testing.pytest_plugin, reyn_testing;"
        "heavy = [m for m in ('litellm', 'mcp', 'httpx', 'jsonschema') if m in sys.modules];"
        "print(heavy)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.stdout.strip() == "[]", proc.stderr


@pytest.mark.usefixtures("example_installed")
def test_ini_option_names_the_plugin_and_the_fixtures_load_it(tmp_path):
    write(
        tmp_path,
        {
            "pyproject.toml": '[tool.pytest.ini_options]\nreyn_plugin = "example"\n',
            "test_x.py": """
            def test_loaded(reyn_call, reyn_plugin_result):
                assert reyn_call.router_tools() == ["convert_units", "text_stats"]
                statuses = {p.plugin_id: p.status for p in reyn_plugin_result.report.plugins}
                assert statuses["example"] == "loaded"
        """,
        },
    )
    proc = run_pytest(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.usefixtures("example_installed")
def test_the_marker_selects_plugin_and_settings(tmp_path):
    write(
        tmp_path,
        {
            "test_x.py": """
        import pytest

        @pytest.mark.reyn_plugin("example", settings={"precision": 1})
        def test_settings(reyn_call, reyn_plugin_profile):
            assert reyn_plugin_profile["plugins"]["example"]["settings"] == {"precision": 1}
            result = reyn_call.router("convert_units", {"value": 1, "from_unit": "mi", "to_unit": "km"})
            assert result.data["value"] == 2
    """
        },
    )
    proc = run_pytest(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_plugin_that_is_not_installed_fails_the_test_with_its_status(tmp_path):
    write(
        tmp_path,
        {
            "test_x.py": """
        import pytest

        @pytest.mark.reyn_plugin("no_such_plugin_xyz")
        def test_x(reyn_registry):
            pass
    """
        },
    )
    proc = run_pytest(tmp_path)
    assert proc.returncode == 1
    assert "Reyn plugin 'no_such_plugin_xyz' did not load" in proc.stdout
    assert "RD001" in proc.stdout


@pytest.mark.usefixtures("example_installed")
def test_invalid_settings_fail_the_test_with_the_diagnostic(tmp_path):
    write(
        tmp_path,
        {
            "test_x.py": """
        import pytest

        @pytest.mark.reyn_plugin("example", settings={"precision": "lots"})
        def test_x(reyn_registry):
            pass
    """
        },
    )
    proc = run_pytest(tmp_path)
    assert proc.returncode == 1
    assert "RC001" in proc.stdout and "precision" in proc.stdout
