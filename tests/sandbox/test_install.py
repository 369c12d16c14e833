"""The reyn-sandbox wheel works on its own: installed into a fresh venv, it confines a command."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import reyn_sandbox

from .conftest import TIMEOUT

DISTRIBUTION = Path(reyn_sandbox.__file__).resolve().parent

CONFINED_ECHO = """
import subprocess, sys
import reyn_sandbox
from reyn_sandbox import Grants, launcher_argv
argv = launcher_argv(["sh", "-c", "echo confined; ls /proc | grep -c '^[0-9]'"], Grants())
env = {"PATH": "/usr/bin:/bin"}
done = subprocess.run(argv, capture_output=True, text=True, cwd="/", env=env, timeout=60)
print(reyn_sandbox.__file__)
print(done.returncode, done.stdout.split(), done.stderr)
"""


def test_the_wheel_installed_in_a_fresh_venv_confines_a_command(tmp_path: Path) -> None:
    if not reyn_sandbox.status().available:
        pytest.skip(f"no kernel sandbox here: {reyn_sandbox.status().reason}")
    wheels, venv, source = tmp_path / "wheels", tmp_path / "venv", tmp_path / "source"
    # Built from a copy: setuptools leaves build/ and *.egg-info next to the pyproject it builds.
    shutil.copytree(DISTRIBUTION, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run(
        [*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(wheels), str(source)],
        check=True,
        capture_output=True,
        timeout=TIMEOUT * 5,
    )
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=TIMEOUT * 2
    )
    (wheel,) = wheels.glob("reyn_sandbox-*.whl")
    subprocess.run(
        [*pip, "--python", str(venv / "bin" / "python"), "install", "--no-index", "--no-deps", str(wheel)],
        check=True,
        capture_output=True,
        timeout=TIMEOUT * 5,
    )

    result = subprocess.run(
        [str(venv / "bin" / "python"), "-c", CONFINED_ECHO],
        capture_output=True,
        text=True,
        cwd="/",
        timeout=TIMEOUT * 2,
    )

    assert result.returncode == 0, result.stderr
    location, outcome = result.stdout.splitlines()
    assert location.startswith(str(venv)) and "site-packages" in location
    # Two processes in its /proc: the sandbox's PID 1 and the shell (grep is the third, counted too).
    assert outcome.startswith("0 ['confined',")
