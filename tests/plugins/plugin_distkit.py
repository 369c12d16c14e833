"""Build real, small, pyproject-based Reyn plugin distributions for tests.

Each ``PluginDist`` becomes a folder with ``pyproject.toml`` and an import package whose
``plugin.py`` is the given source; ``build_wheels`` turns folders into real wheels with pip (no
build isolation, so it is quick and offline), ready for ``FreshVenv.install``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


def pyproject(name: str, version: str, dependencies: str, tables: str) -> str:
    """A setuptools ``pyproject.toml`` for project ``name``: the build system, ``[project]`` with
    ``dependencies`` (the inside of a TOML list), then ``tables`` (more TOML, as written)."""
    head = (
        '[build-system]\nrequires = ["setuptools>=68"]\nbuild-backend = "setuptools.build_meta"\n\n'
        f'[project]\nname = "{name}"\nversion = "{version}"\ndependencies = [{dependencies}]\n\n'
    )
    return head + tables


@dataclass(frozen=True)
class PluginDist:
    """One distribution providing one ``reyn.plugins`` entry point."""

    dist: str
    plugin_id: str
    source: str
    package: str | None = None
    """The import name; by default the distribution's name with ``-`` as ``_`` (``import_name``)."""
    version: str = "1.0.0"
    entry_point: str | None = None
    files: Mapping[str, str] = field(default_factory=dict)
    commands: tuple[str, ...] = ()  # declared in ``reyn.commands`` for this plugin id

    @property
    def import_name(self) -> str:
        return self.package or self.dist.replace("-", "_")

    def _commands_table(self) -> str:
        if not self.commands:
            return ""
        lines = "".join(f'{c} = "{self.plugin_id}"\n' for c in self.commands)
        return '[project.entry-points."reyn.commands"]\n' + lines

    def write(self, root: Path) -> Path:
        """Write the project folder under ``root`` and return it."""
        folder = root / self.dist
        pkg = folder / self.import_name
        pkg.mkdir(parents=True, exist_ok=True)
        ep = self.entry_point or f"{self.import_name}.plugin"
        tables = (
            f'[project.entry-points."reyn.plugins"]\n{self.plugin_id} = "{ep}"\n\n'
            f'[tool.setuptools]\npackages = ["{self.import_name}"]\n'
        )
        (folder / "pyproject.toml").write_text(
            pyproject(self.dist, self.version, '"reyn-core"', tables + self._commands_table())
        )
        (pkg / "__init__.py").write_text("")
        (pkg / "plugin.py").write_text(textwrap.dedent(self.source))
        for rel, text in self.files.items():
            (pkg / rel).write_text(textwrap.dedent(text))
        return folder


# What a copy of a source tree leaves out: build outputs, caches, the venv and version control.
BUILD_OUTPUTS = shutil.ignore_patterns(
    ".venv", ".git", "build", "dist", "site", "*.egg-info", "__pycache__", "*.pyc", "node_modules",
    ".mypy_cache", ".ruff_cache", ".pytest_cache",
)  # fmt: skip


def source_copy(folder: Path, into: Path) -> Path:
    """A copy of the project ``folder`` as ``into / folder.name``, without build outputs: building
    writes build/ and *.egg-info into the folder it builds, so a test builds from a copy of its own
    and two tests (two pytest-xdist workers) never build in one folder at once."""
    target = into / folder.name
    shutil.copytree(folder, target, ignore=BUILD_OUTPUTS)
    return target


def build_wheels(folders: Iterable[Path], out: Path) -> list[Path]:
    """Build a wheel of each project folder into ``out`` (one pip call)."""
    out.mkdir(parents=True, exist_ok=True)
    folders = [str(f) for f in folders]
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--disable-pip-version-check",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            *folders,
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"building wheels failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return sorted(out.glob("*.whl"))


def venv_with_plugins(
    make_venv: Callable[[str], Any],
    name: str,
    root: Path,
    dists: Iterable[PluginDist],
    editable: Iterable[PluginDist] = (),
) -> Any:
    """A fresh venv (``make_venv(name)``, the ``make_module_venv`` fixture) with reyn-core and a
    wheel of each of ``dists`` installed, then each of ``editable`` installed in editable mode. The
    projects are written under ``root / "wheelsrc"`` and ``root / "src"``, the wheels built into
    ``root / "wheels"``."""
    wheels = build_wheels([d.write(root / "wheelsrc") for d in dists], root / "wheels")
    venv = make_venv(name)
    venv.install("reyn-core", *wheels)
    for dist in editable:
        venv.install(dist.write(root / "src"), editable=True)
    return venv


def editable_profiles(*plugin_ids: str) -> tuple[str, str]:
    """The text of a profile enabling ``plugin_ids`` with editable installs allowed, and of the same
    profile enforcing the lock (``[lock] enforce = true``): what a test of a wheel and an editable
    plugin loads, unlocked and locked."""
    profile = f"[plugins]\nenable = {json.dumps(list(plugin_ids))}\n[provenance]\nallow_editable = true\n"
    return profile, profile + "[lock]\nenforce = true\n"


class VenvReyn:
    """The ``reyn`` console script of a venv, run in the folder ``work`` with its own cache folder
    and no user profile; ``venv_reyn(make_venv, tmp_path_factory, name, dists)`` builds one."""

    def __init__(self, venv: Any, work: Path, cache: Path) -> None:
        self.venv, self.work, self.cache = venv, work, cache

    def profile(self, text: str, name: str = "reyn.toml") -> Path:
        """Write ``text`` (dedented) as the profile ``name`` in ``work``."""
        path = self.work / name
        path.write_text(textwrap.dedent(text))
        return path

    def __call__(self, *args: str, **env: str) -> Any:
        """``reyn ARGS`` with ``env`` on top of the venv's environment."""
        full = {"REYN_CACHE_DIR": str(self.cache), "XDG_CONFIG_HOME": str(self.work / "xdg"), **env}
        return self.venv.run("reyn", *args, cwd=self.work, env=full)

    def json(self, *args: str, code: int = 0) -> Any:
        """``reyn ARGS --json``, which must exit with ``code``; its JSON output."""
        proc = self(*args, "--json")
        assert proc.returncode == code, proc.stdout + proc.stderr
        return json.loads(proc.stdout)


def venv_reyn(
    make_venv: Callable[[str], Any], tmp_path_factory: Any, name: str, dists: Iterable[PluginDist]
) -> VenvReyn:
    """``VenvReyn`` over a fresh venv ``name`` holding reyn-core and a wheel of each of ``dists``."""
    venv = venv_with_plugins(make_venv, name, tmp_path_factory.mktemp("dists"), dists)
    return VenvReyn(venv, tmp_path_factory.mktemp("work"), tmp_path_factory.mktemp("cache"))


def tool_plugin(
    tool_names: Iterable[str],
    *,
    cluster: str = "test",
    extra: str = "",
    also: Iterable[str] = (),
    phase: str = "allow",
    router: str = "allow",
) -> str:
    """Source of a plugin registering one echo tool per name, then each expression in ``also``.

    ``extra`` is module code placed before the hook (more tools, a settings model, policy hooks).
    """
    tool_names = list(tool_names)
    lines = ["from reyn_core import ToolGates, hookimpl, tool", "", "REYN_API = 1", ""]
    for name in tool_names:
        lines += [
            f'@tool(name="{name}", cluster="{cluster}", purity="read_only", '
            f'gates=ToolGates(router="{router}", phase="{phase}"))',
            f"def _{name.replace('-', '_')}(text: str) -> str:",
            f'    """Echo the text ({name})."""',
            "    return text",
            "",
        ]
    lines.append(textwrap.dedent(extra))
    lines += ["", "@hookimpl", "def reyn_register_tools(register, settings):"]
    body = [f"    register(_{n.replace('-', '_')})" for n in tool_names] + [
        f"    register({e})" for e in also
    ]
    lines += body or ["    pass"]
    return "\n".join(lines) + "\n"


PROBE = '''
import asyncio, json, sys
from reyn_core import ToolContext, tool
from reyn_core.host import dispatch_tool, load, load_profile, render_phase, render_router

@tool(cluster="host", purity="read_only")
def host_clash(text: str) -> str:
    """A host tool whose name a plugin also claims."""
    return text

@tool(cluster="host", purity="read_only")
def host_only(text: str) -> str:
    """A host tool nobody else claims."""
    return text

result = load(load_profile(profile_file=sys.argv[1]), host_tools=[host_clash, host_only])
reg = result.registry
ctx = ToolContext(surface="router", agent="probe")
calls = []
for spec in sys.argv[2:]:
    name, _, args = spec.partition("=")
    calls.append(asyncio.run(dispatch_tool(reg, name, args or "{}", ctx, surface="router")))
print(json.dumps({
    "plugins": [p.to_json() for p in result.report.plugins],
    "diagnostics": [d.to_json() for d in result.report.diagnostics],
    "modules": sorted(m for m in sys.modules if m.startswith("rtp_")),
    "tools": {t.name: {"plugin": t.plugin_id, "original": reg.original_name(t.name),
                       "source_kind": t.origin.source_kind if t.origin else None} for t in reg.tools()},
    "router": [t["function"]["name"] for t in render_router(reg, ctx)],
    "phase": [op.kind for op in render_phase(reg, ctx, ["*"]).ops],
    "calls": calls,
}))
'''
