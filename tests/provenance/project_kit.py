"""The provenance and lock tests' kit: small real plugin projects, built and installed for real, the
provenance record of what was installed, and RECORD rewritten as a careful attacker would."""

from __future__ import annotations

import base64
import csv
import hashlib
import importlib.metadata
import io
import json
import subprocess
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from plugin_distkit import build_wheels, pyproject

from reyn_core.loading.step3_provenance.record import ProvenanceRecord, provenance_for

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


def demo_provenance(venv: Any) -> ProvenanceRecord:
    """The provenance record of the default project (``write_project`` defaults) installed in ``venv``."""
    return provenance_for(dist_in(venv.site_packages), plugin_id="demo", entry_point="demo_plug.plugin")


def sync_record(venv: Any, rel: str, name: str = "demo-plug") -> None:
    """Make the RECORD of distribution ``name`` in ``venv`` agree with the current bytes of ``rel`` (what
    a careful attacker would do after editing an installed file)."""
    files = dist_in(venv.site_packages, name).files or ()
    record = Path(str(next(f for f in files if f.name == "RECORD").locate()))
    rows = list(csv.reader(io.StringIO(record.read_text())))
    data = (venv.site_packages / rel).read_bytes()
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    for row in rows:
        if row[0] == rel:
            row[1:] = [f"sha256={digest}", str(len(data))]
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    record.write_text(out.getvalue())


class LockedWorld:
    """A venv with plugins installed and a folder for its test: a working folder per test, locked with
    ``reyn plugins lock`` (``profile``) then enforcing it (``locked``), one cache shared by all, and
    ``PLANT_MARKER`` naming the file a planted module writes when it runs."""

    def __init__(self, venv: Any, root: Path, profile: str, locked: str) -> None:
        self.venv, self.root, self.n = venv, root, 0
        self.profile, self.locked = profile, locked

    def env(self, work: Path, **extra: str) -> dict[str, str]:
        return {"REYN_CACHE_DIR": str(self.root / "cache"), "XDG_CONFIG_HOME": str(work / "xdg"),
                "PLANT_MARKER": str(work / "MARKER"), **extra}  # fmt: skip

    def locked_work(self) -> Path:
        self.n += 1
        work = self.root / f"work{self.n}"
        work.mkdir()
        (work / "reyn.toml").write_text(self.profile)
        proc = self.venv.run("reyn", "plugins", "lock", cwd=work, env=self.env(work))
        assert proc.returncode == 0, proc.stdout + proc.stderr
        (work / "reyn.toml").write_text(self.locked)
        return work

    def audit(self, work: Path) -> tuple[int, dict[str, Any]]:
        proc = self.venv.run("reyn", "plugins", "audit", "--json", cwd=work, env=self.env(work))
        return proc.returncode, json.loads(proc.stdout)
