"""The fresh-venv fixtures install real wheels offline from the wheelhouse."""

from __future__ import annotations

from pathlib import Path


def test_fresh_venv_installs_core_from_wheelhouse_and_imports_it(make_venv):
    venv = make_venv()
    venv.install("reyn-core")
    proc = venv.run(
        "python", "-c", "import reyn_core, sys; print(reyn_core.__file__); print('litellm' in sys.modules)"
    )
    assert proc.returncode == 0, proc.stderr
    path, heavy = proc.stdout.split()
    assert str(venv.site_packages) in path  # the installed copy, not the repository's
    assert heavy == "False"


def _files(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``folder`` but bytecode caches: path → (mtime in ns, size)."""
    return {
        str(p.relative_to(folder)): (p.stat().st_mtime_ns, p.stat().st_size)
        for p in folder.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


def test_installing_a_repository_folder_writes_nothing_into_it(make_venv, repo_root):
    """A folder of the tree is built from a copy: building in the folder itself (setuptools' build/
    and *.egg-info) would race another test building the same folder on another pytest-xdist worker."""
    folder = repo_root / "reyn_plugin_example"
    before = _files(folder)
    venv = make_venv()
    venv.install("reyn-core", "reyn_plugin_example")
    proc = venv.run("python", "-c", "import reyn_example; print(reyn_example.__file__)")
    assert proc.returncode == 0, proc.stderr
    assert str(venv.site_packages) in proc.stdout  # installed (control), from its wheel
    assert _files(folder) == before
