"""What runs in the launcher before it confines itself: the interpreter, the standard library and
reyn_sandbox — no site machinery (`-S`: no `.pth` file or `sitecustomize` of the environment runs),
and no module lying next to the package, in place of the standard library's or where the standard
library tries one optionally (the package is loaded by its exact location; its folder is not on
the path). Each attack has its positive control: the same files do run code when the interpreter
starts the ordinary way, or with that folder on the path."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest

import reyn_sandbox
from reyn_sandbox import Grants, launcher_argv
from reyn_sandbox._contract import LAUNCHER_BOOT

from .conftest import PACKAGE_PARENT, TIMEOUT

# Each planted file appends one line to the marker file: which process ran it, by its command line.
PLANT = (
    "import sys; open({marker!r}, 'a', encoding='utf-8').write("
    "{name!r} + (' launcher ' if '--grants' in sys.orig_argv else ' other ') + repr(sys.orig_argv) + '\\n')"
)

CONFINED_ECHO = """
import subprocess
from reyn_sandbox import Grants, launcher_argv
from reyn_sandbox._contract import LAUNCHER_BOOT
argv = launcher_argv(["/bin/sh", "-c", "echo confined"], Grants())
env = {"PATH": "/usr/bin:/bin"}
done = subprocess.run(argv, capture_output=True, text=True, cwd="/", env=env, timeout=60)
print(done.returncode, done.stdout.strip(), done.stderr.strip())
"""


@pytest.fixture(autouse=True)
def _needs_the_kernel_sandbox() -> None:
    if not reyn_sandbox.status().available:
        pytest.skip(f"no kernel sandbox here: {reyn_sandbox.status().reason}")


def _marks(marker: Path) -> list[str]:
    """`<file> launcher|other` for each planted file that ran, once per kind of process (a venv with
    a lib64 link to lib processes its site-packages twice)."""
    lines = marker.read_text(encoding="utf-8").splitlines() if marker.exists() else []
    return sorted({" ".join(line.split(" ", 2)[:2]) for line in lines})


def _launch_from(parent: Path, marker: Path, planted: Iterable[str]) -> None:
    """reyn_sandbox copied into ``parent`` (as a wheel install puts it in site-packages) with a
    module of each ``planted`` name beside it, then one confined command launched by a caller that
    finds the package there (``parent`` appended to its path): the launch must succeed."""
    shutil.copytree(
        Path(PACKAGE_PARENT) / "reyn_sandbox",
        parent / "reyn_sandbox",
        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"),
    )
    for name in planted:
        plant = PLANT.format(marker=str(marker), name=name)
        (parent / f"{name}.py").write_text(plant + "\n", encoding="utf-8")
    caller = f"import sys; sys.path.append({str(parent)!r})\n" + CONFINED_ECHO
    result = subprocess.run(
        [sys.executable, "-I", "-S", "-c", caller],
        capture_output=True,
        text=True,
        cwd="/",
        timeout=TIMEOUT * 2,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "0 confined", result.stdout


def test_no_pth_file_or_sitecustomize_of_the_environment_runs_in_the_launcher(tmp_path: Path) -> None:
    venv, marker = tmp_path / "venv", tmp_path / "ran"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=TIMEOUT)
    python = str(venv / "bin" / "python")
    site_packages = next((venv / "lib").glob("python3*/site-packages"))
    # reyn_sandbox found the way an editable install finds it: a path line in a .pth file.
    (site_packages / "reyn_sandbox_home.pth").write_text(PACKAGE_PARENT + "\n", encoding="utf-8")
    # A third-party .pth whose import line runs code, and a sitecustomize: the site machinery's hooks.
    (site_packages / "zz_third_party.pth").write_text(
        PLANT.format(marker=str(marker), name="pth") + "\n", encoding="utf-8"
    )
    (site_packages / "sitecustomize.py").write_text(
        PLANT.format(marker=str(marker), name="sitecustomize") + "\n", encoding="utf-8"
    )

    result = subprocess.run(
        [python, "-c", CONFINED_ECHO], capture_output=True, text=True, cwd="/", timeout=TIMEOUT * 2
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "0 confined", result.stdout
    # Positive control: the ordinary start of this interpreter (the caller) ran both hooks ...
    # ... and the launcher, the same interpreter started by launcher_argv, ran neither.
    assert _marks(marker) == ["pth other", "sitecustomize other"]


def test_a_module_next_to_the_package_does_not_replace_the_standard_library_in_the_launcher(
    tmp_path: Path,
) -> None:
    # A wheel install puts reyn_sandbox in site-packages, next to every other distribution's
    # top-level modules (the launcher finds the package by location, that folder not on its path).
    # Plant stdlib names there.
    parent, marker = tmp_path / "site-packages", tmp_path / "ran"
    planted = ("json", "ctypes", "dataclasses", "threading", "select", "resource")
    _launch_from(parent, marker, planted)

    assert _marks(marker) == []
    # Positive control: the planted modules do run when their folder comes first on the path.
    for name in planted:
        first = f"import sys; sys.path.insert(0, {str(parent)!r}); import {name}"
        subprocess.run(
            [sys.executable, "-I", "-S", "-c", first],
            check=True,
            timeout=TIMEOUT,
        )
    assert _marks(marker) == sorted(f"{name} other" for name in planted)


# The names the launcher's own imports try that no stdlib finder has (the stdlib's optional imports,
# such as `copy`'s `from org.python.core import PyStringMap`): a finder last on sys.meta_path sees
# exactly those, while a real launch of the probe runs in this process.
RECORD_OPTIONAL = """
import sys
class Recorder:
    names = set()
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        cls.names.add(name.partition(".")[0])
sys.meta_path.append(Recorder)
sys.path.append(sys.argv[1])
from reyn_sandbox._launch import main
code = main(["--probe"])
print(code, *sorted(Recorder.names))
"""


def test_a_module_the_stdlib_tries_optionally_does_not_run_from_the_packages_folder(tmp_path: Path) -> None:
    """The launcher loads reyn_sandbox by its exact location and puts no folder on sys.path: a module
    beside the package named as one the stdlib tries when it is there (``org``, which ``copy`` tries)
    is not imported in the launcher, which runs as root before confinement. Its own imports now try
    no such module at all (``dataclasses``, which imported ``copy``, is gone from them)."""
    parent, marker = tmp_path / "site-packages", tmp_path / "ran"
    recorded = subprocess.run(
        [sys.executable, "-I", "-S", "-c", RECORD_OPTIONAL, str(Path(PACKAGE_PARENT))],
        capture_output=True, text=True, cwd="/", timeout=TIMEOUT, check=True,
    )  # fmt: skip
    code, *tried = recorded.stdout.splitlines()[-1].split()
    # Positive control: the recorder sees a module the stdlib tries (``copy`` tries ``org``).
    with_copy = RECORD_OPTIONAL.replace(
        "from reyn_sandbox._launch import main", "import copy\nfrom reyn_sandbox._launch import main"
    )
    control_record = subprocess.run(
        [sys.executable, "-I", "-S", "-c", with_copy, str(Path(PACKAGE_PARENT))],
        capture_output=True, text=True, cwd="/", timeout=TIMEOUT, check=True,
    )  # fmt: skip
    assert code == "0", recorded.stdout
    assert [name for name in tried if name != "reyn_sandbox"] == []
    assert "org" in control_record.stdout.splitlines()[-1].split()
    _launch_from(parent, marker, sorted({*tried, "org"} - {"reyn_sandbox"}))

    # The caller (the folder on its path) imports them; the launcher, which got --grants, none.
    assert [mark for mark in _marks(marker) if mark.endswith(" launcher")] == []
    marker.unlink(missing_ok=True)
    # Positive control: with that folder on the path the ordinary way (after the stdlib, as the
    # launcher used to put it), a module the stdlib tries runs from it.
    old_boot = f"import sys; sys.path.append({str(parent)!r}); import copy"
    subprocess.run([sys.executable, "-I", "-S", "-c", old_boot], cwd="/", timeout=TIMEOUT, check=True)
    assert _marks(marker) == ["org other"]


# What the launcher may import beyond a bare interpreter's start (``-I -S`` and ``os``): the system
# calls (ctypes and what it brings), the C modules of the steps (descriptors, rlimits, poll), json's C
# scanner for the grants (``_json``). Not ``signal`` or ``re`` (each brings ``enum``, ``functools``,
# ``collections``), ``json``, ``threading``, ``importlib.util`` (``contextlib``), ``typing``,
# ``dataclasses``: each was on the launch path, ~60% of its imports (docs/performance.md, "The
# launcher's imports, trimmed"). A module added to the launch path must be added here, knowingly.
LAUNCH_IMPORTS = {"ctypes", "ctypes._endian", "_ctypes", "struct", "_struct", "types", "errno", "fcntl",
                  "resource", "select", "_json", "__future__"}  # fmt: skip
# The package's modules that serve the host (profiles, the write-root rule, pack settings), never a launch.
HOST_ONLY = {"reyn_sandbox._profile_grants", "reyn_sandbox._protected", "reyn_sandbox._grant_keys"}

# Each process of a launch — the launcher, PID 1, the idmap helper, the command's process — writes the
# modules it holds on stderr just before it exits or execs; then the launcher's own boot runs.
REPORT_MODULES = """import os, sys
def _report(real):
    def reporting(*args):
        os.write(2, ("modules: " + " ".join(sorted(sys.modules)) + "\\n").encode())
        real(*args)
    return reporting
os._exit, os.execvpe = _report(os._exit), _report(os.execvpe)
"""


def _launched_modules(boot_prefix: str = "") -> tuple[set[str], set[str]]:
    """The modules a real launch of ``/bin/true`` imported in any of its processes, beyond those of a
    bare ``-I -S`` start that imports ``os``; and the package's own among them."""
    argv = launcher_argv(["/bin/true"], Grants(read_roots=("/usr",)))
    boot = argv.index("-c") + 1
    argv[boot] = REPORT_MODULES + boot_prefix + argv[boot]
    done = subprocess.run(argv, capture_output=True, text=True, cwd="/usr", timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    reports = [line.split()[1:] for line in done.stderr.splitlines() if line.startswith("modules: ")]
    assert len(reports) >= 3, done.stderr  # the launcher, PID 1, the command's process (and a helper)
    bare = subprocess.run(
        [sys.executable, "-I", "-S", "-c", "import os, sys; print(*sys.modules)"],
        capture_output=True, text=True, timeout=TIMEOUT, check=True,
    )  # fmt: skip
    imported = set().union(*reports) - set(bare.stdout.split())
    own = {name for name in imported if name.split(".")[0] == "reyn_sandbox"}
    return imported - own, own


def test_a_launch_imports_only_the_modules_it_needs() -> None:
    """Pinned: the standard library modules a whole launch imports, in every process of it, beyond a
    bare interpreter's start — a module creeping back onto the launch path fails here, by name."""
    stdlib, own = _launched_modules()

    assert stdlib - LAUNCH_IMPORTS == set()
    assert own & HOST_ONLY == set()
    # Positive controls: the check sees what is imported on the way (ctypes at the start, _json only
    # when the grants are read), the package's own modules, and a module the launch did not need.
    assert {"ctypes", "_json"} <= stdlib and "reyn_sandbox._supervisor" in own
    control, _own = _launched_modules(boot_prefix="import signal, json; ")
    assert {"signal", "json", "re", "enum", "functools"} <= control - LAUNCH_IMPORTS


def test_the_boot_uses_importlib_utils_own_functions() -> None:
    """The boot takes ``spec_from_file_location`` and ``module_from_spec`` from the import system's
    modules (loaded at every start) rather than importing ``importlib.util``, which re-exports them:
    the same functions, checked here on this Python."""
    import _frozen_importlib
    import _frozen_importlib_external
    import importlib.util

    assert importlib.util.spec_from_file_location is _frozen_importlib_external.spec_from_file_location
    assert importlib.util.module_from_spec is _frozen_importlib.module_from_spec
    assert "importlib" not in LAUNCHER_BOOT.replace("_frozen_importlib", "")
