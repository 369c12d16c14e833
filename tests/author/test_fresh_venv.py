"""The author experience in a brand-new virtual environment: only reyn-core and one plugin.

Real venvs, real ``pip install`` from wheels and folders, the real ``reyn`` console script.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
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
    # what the example's test extra installs: reyn-testing (the pytest kit) and pytest
    venv.install("reyn-core", "reyn_plugin_example", "reyn-testing", "pytest")
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


def _venv_with_pip(make_venv: Any, name: str) -> Any:
    """A fresh venv with its own pip (``ensurepip``, offline), as a user's ``python -m venv`` has:
    the scaffold's printed commands call that pip."""
    venv = make_venv(name)
    proc = venv.run("python", "-m", "ensurepip", "--default-pip", timeout=300)
    assert proc.returncode == 0, proc.stderr
    which = venv.run("bash", "-c", "command -v pip")
    assert which.stdout.strip() == str(venv.bin / "pip"), which.stdout  # `pip` is this venv's
    return venv


def _printed_install(stdout: str, marker: str, unless: str = "\0") -> str:
    (line,) = [
        ln.strip() for ln in stdout.splitlines() if marker in ln and "pip install" in ln and unless not in ln
    ]
    return line


def _run_printed(venv: Any, command: str, cwd: Path) -> None:
    # No package index in tests: third-party wheels (pytest, setuptools…) come from the wheelhouse
    # through pip's environment, standing in for PyPI; reyn-core comes only from what is printed.
    env = {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": "", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    third_party = cwd.parent / "pypi-standin"
    if not third_party.exists():
        third_party.mkdir()
        for wheel in venv.wheelhouse.glob("*.whl"):
            if not wheel.name.startswith("reyn_"):
                shutil.copy2(wheel, third_party / wheel.name)
    env["PIP_FIND_LINKS"] = str(third_party)
    proc = venv.run("bash", "-c", command, cwd=cwd, env=env, timeout=600)
    assert proc.returncode == 0, command + "\n" + proc.stdout[-3000:] + proc.stderr[-3000:]


def _tests_pass(venv: Any, project: Path) -> None:
    tests = venv.run("python", "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=project)
    assert tests.returncode == 0, tests.stdout[-4000:] + tests.stderr[-2000:]
    assert "6 passed" in tests.stdout  # including the async test, with no marker
    assert (
        "reyn: plugin 'demo_plugin' under test loaded from reyn-demo-plugin 0.1.0, editable" in tests.stdout
    )


def test_plugins_new_prints_install_steps_that_work_here_and_in_a_fresh_venv(make_venv, wheelhouse, tmp_path):
    # The author's venv: reyn-core installed from its wheel in the wheelhouse (pip records where).
    author = _venv_with_pip(make_venv, "author")
    (core,) = wheelhouse.glob("reyn_core-*.whl")
    _run_printed(author, f"python -m pip install -q --find-links {wheelhouse} {core}", tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    proc = author.run("reyn", "plugins", "new", "demo_plugin", cwd=work)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    project = work / "demo_plugin"
    assert "settings_as(ctx, Settings)" in (project / "src/demo_plugin/plugin.py").read_text()
    assert "isinstance" not in (project / "src/demo_plugin/plugin.py").read_text()

    # 1. Here: the printed command installs into the environment that has reyn-core (reyn-testing,
    # the test extra's kit, from the wheelhouse reyn-core came from).
    here = _printed_install(proc.stdout, "-m pip install")
    assert here.startswith(str(author.python)) or str(author.path) in here
    _run_printed(author, here, project)
    _tests_pass(author, project)
    plugins = _plugins(author.run("reyn", "plugins", "list", "--json", cwd=work))
    assert plugins["demo_plugin"]["status"] == "discovered"

    # 2. A brand-new venv with nothing of Reyn: the printed fresh-venv command, with the wheelhouse.
    fresh_line = _printed_install(proc.stdout, "--find-links", unless="-m pip install")
    assert f"--find-links {wheelhouse}" in fresh_line
    fresh = _venv_with_pip(make_venv, "fresh")
    _run_printed(fresh, fresh_line, project)
    _tests_pass(fresh, project)


def test_plugins_new_says_where_reyn_core_must_come_from_when_pip_recorded_nothing(make_venv, tmp_path):
    venv = make_venv("byname")
    venv.install("reyn-core")  # by name from --find-links: no direct_url.json
    work = tmp_path / "work"
    work.mkdir()
    proc = venv.run("reyn", "plugins", "new", "demo_plugin", cwd=work)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "pip install --find-links DIST -e '.[test]'" in proc.stdout
    assert "make dist" in proc.stdout and "on no package index" in proc.stdout


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


def test_tracing_on_without_reyn_otel_is_one_diagnostic_naming_it(example_venv, tmp_path):
    # reyn-core alone (no reyn-otel): the profile asks for spans; the load says what to install, once,
    # and the example plugin still loads (positive control for the rest of the load).
    profile = '[plugins]\nenable = ["example"]\n\n[observability]\ntracing = true\n'
    (tmp_path / "reyn.toml").write_text(profile)
    proc = example_venv.run(
        "python",
        "-c",
        "import json; from reyn_core.host import load, load_profile; r = load(load_profile()); "
        "print(json.dumps([[d.code, d.message] for d in r.report.diagnostics] + [len(r.registry.tools())]))",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    *diagnostics, tools = json.loads(proc.stdout)
    assert tools == len(EXAMPLE_TOOLS)
    ((code, message),) = diagnostics
    assert code == "RC012" and "install the reyn-otel distribution" in message
