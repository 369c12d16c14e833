"""Plugin-author friction: the scaffold's next steps, async tests out of the box, names that would
collide with what is installed, and a pytest kit that says which distribution it tested.

Real pytest runs in a subprocess in a temporary project; the scaffold's own tests run in a fresh
venv in ``test_fresh_venv.py``."""

from __future__ import annotations

import shlex
import sys

import pytest
import tomllib

from reyn_core.cli import main
from reyn_core.cli.scaffold import ScaffoldError, scaffold_plugin

from .testing_kit.test_pytest_kit import run_pytest, write

# --------------------------------------------------------------------------- scaffold


def test_plugins_new_prints_the_next_steps(tmp_path, capsys):
    assert main(["plugins", "new", "word_tools", "--dest", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    root = tmp_path / "word_tools"
    assert f"created {root}" in out
    steps = [line.split("#")[0].strip() for line in out.splitlines()]
    assert f"cd {root}" in steps
    install = f"{shlex.quote(sys.executable)} -m pip install -e '.[test]'"  # where reyn-core is
    assert install in steps
    assert "pytest" in steps
    assert 'then enable it in a profile (reyn.toml):  [plugins] enable = ["word_tools"]' in out
    # in the order a newcomer runs them
    assert steps.index(f"cd {root}") < steps.index(install) < steps.index("pytest")


def test_the_template_runs_async_tests_out_of_the_box(tmp_path):
    root = scaffold_plugin("word_tools", tmp_path)
    pyproject = tomllib.loads((root / "pyproject.toml").read_text())
    assert any(r.startswith("pytest-asyncio") for r in pyproject["project"]["optional-dependencies"]["test"])
    assert pyproject["tool"]["pytest"]["ini_options"]["asyncio_mode"] == "auto"
    assert "reyn-core>=0.1,<0.2" in pyproject["project"]["dependencies"]
    assert "async def test_" in (root / "tests" / "test_plugin.py").read_text()


def test_a_name_whose_distribution_is_installed_is_refused(tmp_path):
    # "tools_file" is no plugin id, but its distribution name reyn-tools-file is the file pack's:
    # `pip install -e .` of the new project would replace the file pack.
    pytest.importorskip("reyn_tools_file")
    with pytest.raises(ScaffoldError) as info:
        scaffold_plugin("tools_file", tmp_path)
    message = str(info.value)
    assert "'reyn-tools-file'" in message and "already installed" in message and "replace it" in message
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- the pytest kit


def test_the_kit_says_which_distribution_it_loaded(tmp_path, example_installed):
    write(
        tmp_path,
        {
            "conftest.py": """
                import pytest

                @pytest.fixture
                def reyn_plugin_id():
                    return "example"
            """,
            "test_x.py": """
                def test_loads(reyn_call):
                    assert "text_stats" in reyn_call.router_tools()

                def test_fails(reyn_call):
                    assert False, "boom"
            """,
        },
    )
    proc = run_pytest(tmp_path, "-rA")
    out = proc.stdout
    assert "1 passed" in out and "1 failed" in out, out[-3000:]
    # One summary line for the session, naming the distribution, its version and where it came from.
    (line,) = [ln for ln in out.splitlines() if ln.startswith("reyn: plugin 'example'")]
    assert "loaded from reyn-plugin-example 0.1.0, " in line
    assert "reyn_plugin_example" in line or "reyn_example" in line  # the editable checkout's path
    # A failing test's report carries the same line in its "reyn" section.
    assert "Captured reyn setup" in out
    assert "plugin 'example' loaded from reyn-plugin-example 0.1.0" in out


def test_an_uninstalled_plugin_fails_saying_install_this_project(tmp_path):
    write(
        tmp_path,
        {
            "conftest.py": """
                import pytest

                @pytest.fixture
                def reyn_plugin_id():
                    return "not_installed_plugin"
            """,
            "test_x.py": """
                def test_x(reyn_call):
                    pass
            """,
        },
    )
    proc = run_pytest(tmp_path)
    assert proc.returncode == 1
    out = proc.stdout
    assert "Reyn plugin 'not_installed_plugin' did not load: not installed" in out
    assert "install this project (`pip install -e .`)" in out
    assert "RD001" in out
    assert sys.executable in out  # which Python's entry points were searched
    assert "Traceback" not in out


def test_assert_diagnostic_on_rd001_carries_the_hint(reyn_load):
    from reyn_testing import assert_no_diagnostics

    result = reyn_load({"plugins": {"enable": ["not_installed_plugin"]}})
    with pytest.raises(AssertionError) as info:
        assert_no_diagnostics(result)
    assert "RD001" in str(info.value)
    assert "install this project (`pip install -e .`)" in str(info.value)
