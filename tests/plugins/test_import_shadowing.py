"""A module of the plugin's name earlier on sys.path is never imported instead of the digested files
(hardening issue 11, class 6): refused with RI009 before any of it runs, locked or not.

Real venv, a real wheel plugin and a real editable plugin, real ``python -m reyn_core doctor`` /
``reyn doctor`` / script runs; each shadow writes a marker file when it is executed, so the tests
prove the code never ran, not only that the report says so.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from plugin_distkit import PluginDist, editable_profiles, tool_plugin, venv_with_plugins

WHEEL = PluginDist("rtp-shadowed", "shadowed", tool_plugin(["shadowed_tool"]))
EDIT = PluginDist("rtp-shedit", "shedit", tool_plugin(["shedit_tool"]))
MARKER_CODE = "import os\nopen(os.environ['SHADOW_MARKER'], 'a').write('shadow ran\\n')\nREYN_API = 1\n"


class World:
    def __init__(self, venv: Any, root: Path) -> None:
        self.venv, self.root = venv, root
        self.cache = root / "cache"
        self.n = 0

    def workdir(self, profile: str) -> Path:
        self.n += 1
        work = self.root / f"work{self.n}"
        work.mkdir()
        (work / "reyn.toml").write_text(textwrap.dedent(profile))
        return work

    def env(self, work: Path, **extra: str) -> dict[str, str]:
        return {
            "REYN_CACHE_DIR": str(self.cache),
            "XDG_CONFIG_HOME": str(work / "xdg"),
            "SHADOW_MARKER": str(work / "MARKER"),
            **extra,
        }


@pytest.fixture(scope="module")
def world(make_module_venv, tmp_path_factory) -> World:
    root = tmp_path_factory.mktemp("shadow")
    return World(venv_with_plugins(make_module_venv, "shadow", root, [WHEEL], [EDIT]), root)


PROFILE, LOCKED = editable_profiles("shadowed", "shedit")


def doctor(world: World, work: Path, *argv: str, **env: str) -> tuple[dict[str, Any], Path]:
    args = argv or ("python", "-m", "reyn_core", "doctor", "--json")
    proc = world.venv.run(*args, cwd=work, env=world.env(work, **env))
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    return json.loads(proc.stdout), work / "MARKER"


def codes(report: dict[str, Any], plugin: str) -> list[str]:
    return [d["code"] for d in report["diagnostics"] if d.get("plugin") == plugin]


def messages(report: dict[str, Any], code: str) -> str:
    return "\n".join(d["message"] for d in report["diagnostics"] if d["code"] == code)


def locked_work(world: World) -> Path:
    work = world.workdir(PROFILE)
    proc = world.venv.run("reyn", "plugins", "lock", cwd=work, env=world.env(work))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (work / "reyn.toml").write_text(textwrap.dedent(LOCKED))
    return work


def test_without_a_shadow_both_plugins_load(world: World) -> None:
    work = locked_work(world)
    report, marker = doctor(world, work)
    assert codes(report, "shadowed") == [] and codes(report, "shedit") == [], report
    assert not marker.exists()


def test_a_package_folder_in_the_working_directory_is_refused_under_python_m(world: World) -> None:
    work = locked_work(world)
    (work / "rtp_shadowed").mkdir()
    (work / "rtp_shadowed" / "__init__.py").write_text(MARKER_CODE)
    (work / "rtp_shadowed" / "plugin.py").write_text(MARKER_CODE)
    report, marker = doctor(world, work)
    assert not marker.exists(), "the shadowing package was executed"
    assert codes(report, "shadowed") == ["RI009"]
    text = messages(report, "RI009")
    assert str(work / "rtp_shadowed") in text and "the working directory" in text
    assert codes(report, "shedit") == []  # the other plugin loads


def test_a_module_file_in_the_working_directory_is_refused(world: World) -> None:
    work = locked_work(world)
    (work / "rtp_shadowed.py").write_text(MARKER_CODE)
    report, marker = doctor(world, work)
    assert not marker.exists()
    assert codes(report, "shadowed") == ["RI009"]
    assert str(work / "rtp_shadowed.py") in messages(report, "RI009")


@pytest.mark.parametrize(
    ("package", "plugin_id", "expected"),
    [("rtp_shedit", "shedit", ["RI009"]), ("rtp_shadowed", "shadowed", [])],
    ids=["shadows-an-editable-install", "not-a-regular-wheel-package"],
)
def test_a_namespace_folder_shadows_an_editable_install_but_not_a_wheel_package(
    world: World, package: str, plugin_id: str, expected: list[str]
) -> None:
    # No __init__.py: the path finder turns the folder into a namespace package, which is found
    # before the editable finder on sys.meta_path gets a chance; an installed regular package wins
    # over a namespace portion, so there is nothing to refuse there (no false alarm).
    work = locked_work(world)
    (work / package).mkdir()
    (work / package / "plugin.py").write_text(MARKER_CODE)
    report, marker = doctor(world, work)
    assert not marker.exists()
    assert codes(report, plugin_id) == expected
    if expected:
        assert str(work / package) in messages(report, "RI009")


def test_a_shadow_on_pythonpath_is_refused_for_the_console_script(world: World) -> None:
    work = locked_work(world)
    elsewhere = world.root / f"pp{world.n}"
    (elsewhere / "rtp_shadowed").mkdir(parents=True)
    (elsewhere / "rtp_shadowed" / "__init__.py").write_text(MARKER_CODE)
    report, marker = doctor(world, work, "reyn", "doctor", "--json", PYTHONPATH=str(elsewhere))
    assert not marker.exists()
    assert codes(report, "shadowed") == ["RI009"]
    assert str(elsewhere / "rtp_shadowed") in messages(report, "RI009")


def test_a_shadow_next_to_a_script_is_refused(world: World) -> None:
    work = locked_work(world)
    scripts = world.root / f"scripts{world.n}"
    scripts.mkdir()
    (scripts / "rtp_shedit.py").write_text(MARKER_CODE)
    (scripts / "host.py").write_text(
        "import json, sys\nfrom reyn_core.host import load, load_profile\n"
        "r = load(load_profile(profile_file=sys.argv[1]))\n"
        "print(json.dumps({'diagnostics': [d.to_json() for d in r.report.diagnostics]}))\n"
    )
    report, marker = doctor(world, work, "python", str(scripts / "host.py"), str(work / "reyn.toml"))
    assert not marker.exists()
    assert codes(report, "shedit") == ["RI009"] and codes(report, "shadowed") == []
    assert str(scripts / "rtp_shedit.py") in messages(report, "RI009")


def test_a_shadow_is_refused_without_a_lock_or_pin_too(world: World) -> None:
    work = world.workdir(PROFILE)  # no [lock] enforce, no digest pin: still fail closed
    (work / "rtp_shadowed").mkdir()
    (work / "rtp_shadowed" / "__init__.py").write_text(MARKER_CODE)
    report, marker = doctor(world, work)
    assert not marker.exists()
    assert codes(report, "shadowed") == ["RI009"]
