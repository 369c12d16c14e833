"""Fixtures for provenance and lock tests: small real plugin projects, built and installed for real."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import textwrap
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from plugin_distkit import build_wheels, pyproject

# A module that must never run during provenance: importing it leaves a marker file behind.
SENTINEL_PLUGIN = textwrap.dedent(
    """
    import os, pathlib
    marker = os.environ.get("DEMO_PLUG_IMPORT_MARKER")
    if marker:
        pathlib.Path(marker).write_text("imported")
    REYN_API = 1
    """
).lstrip()


def write_project(
    root: Path,
    *,
    name: str = "demo-plug",
    package: str = "demo_plug",
    version: str = "0.1.0",
    plugin_id: str = "demo",
    files: Mapping[str, str] | None = None,
    src_layout: bool = False,
    dependencies: tuple[str, ...] = (),
) -> Path:
    """A pyproject-based plugin project in ``root`` with a console script and one entry point."""
    root.mkdir(parents=True, exist_ok=True)
    deps = ", ".join(f'"{d}"' for d in dependencies)
    layout = (
        '\n[tool.setuptools.packages.find]\nwhere = ["src"]\n'
        if src_layout
        else (f'\n[tool.setuptools]\npackages = ["{package}"]\n')
    )
    tables = (
        f'[project.scripts]\n{name}-cli = "{package}.plugin:main"\n\n'
        f'[project.entry-points."reyn.plugins"]\n{plugin_id} = "{package}.plugin"\n'
    )
    (root / "pyproject.toml").write_text(pyproject(name, version, deps, tables + layout))
    pkg = (root / "src" / package) if src_layout else (root / package)
    pkg.mkdir(parents=True, exist_ok=True)
    contents = {
        "__init__.py": '"""Demo plugin."""\n',
        "plugin.py": SENTINEL_PLUGIN,
        "data/notes.txt": "hello\n",
    }
    contents.update(files or {})
    for rel, text in contents.items():
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_text(text)
    if not src_layout:
        with (root / "pyproject.toml").open("a") as f:
            f.write(f'\n[tool.setuptools.package-data]\n{package} = ["data/*.txt"]\n')
    return root


def build_wheel(project: Path, out: Path) -> Path:
    """Build ``project`` into a wheel in ``out`` with the test interpreter's setuptools (offline)."""
    before = set(out.glob("*.whl"))
    (wheel,) = set(build_wheels([project], out)) - before
    return wheel


def pip_install(venv: Any, *args: str, find_links: tuple[Path, ...] = ()) -> None:
    """``pip install`` into ``venv`` offline: the shared wheelhouse plus ``find_links``."""
    links = [a for d in find_links for a in ("--find-links", str(d))]
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--disable-pip-version-check",
            "--python",
            str(venv.python),
            "install",
            "-q",
            "--no-index",
            "--find-links",
            str(venv.wheelhouse),
            *links,
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def dist_in(site: Path, name: str = "demo-plug") -> importlib.metadata.Distribution:
    """The distribution ``name`` installed in ``site`` (another venv's site-packages)."""
    found = [d for d in importlib.metadata.distributions(path=[str(site)]) if d.metadata["Name"] == name]
    assert len(found) == 1, f"{name} in {site}: {found}"
    return found[0]


@dataclass
class FakePluginInfo:
    """The fields of ``PluginLoadInfo`` that ``lock_from_load`` and ``audit`` read (CONTRACTS.md)."""

    plugin_id: str
    status: str
    provenance: Any = None
    tools: tuple[Any, ...] = ()
    api_version: int | None = 1
    distribution: str | None = None
    version: str | None = None
    entry_point: str | None = None
    diagnostics: tuple[Any, ...] = ()


@dataclass
class FakeReport:
    plugins: tuple[FakePluginInfo, ...]
    diagnostics: tuple[Any, ...] = ()


@dataclass
class FakeLoadResult:
    report: FakeReport
    registry: Any = None
    profile: Any = None
    extra: dict[str, Any] = field(default_factory=dict)


@pytest.fixture
def project_factory(tmp_path: Path) -> Callable[..., Path]:
    """``project_factory("name", **write_project kwargs)`` -> a project folder under tmp."""

    def make(folder: str = "proj", **kw: Any) -> Path:
        return write_project(tmp_path / folder, **kw)

    return make


@pytest.fixture(scope="session")
def kit() -> Any:
    """The helpers above, as a fixture (test modules cannot import conftest in importlib mode)."""
    import types

    return types.SimpleNamespace(
        write_project=write_project,
        build_wheel=build_wheel,
        pip_install=pip_install,
        dist_in=dist_in,
        PluginInfo=FakePluginInfo,
        Report=FakeReport,
        LoadResult=FakeLoadResult,
        SENTINEL_PLUGIN=SENTINEL_PLUGIN,
    )
