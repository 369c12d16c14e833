"""The names the verified finder serves come from the digested files, not from declared metadata.

A real wheel with two top-level packages — ``rtv_plug`` (the entry point) and ``rtv_helpers``, which
it imports — and no ``top_level.txt`` (hatchling, flit, pdm, poetry-core and uv wheels ship none),
installed with pip into a fresh venv and locked. Every module of both packages runs from its hashed
source: a ``.pyc`` planted beside the helper never runs, and a ``rtv_helpers`` earlier on
``sys.path`` refuses the plugin (``RI009``) instead of running. Each attack has its control: plain
Python in the same venv does run the planted file.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import json
import marshal
import os
import struct
import sys
import textwrap
import zipfile
from pathlib import Path
from typing import Any

import pytest

import reyn_sandbox
from reyn_core.loading.step3_provenance.installed_files import import_locations

from .project_kit import LockedWorld, pip_install

PLUGIN = textwrap.dedent('''\
    from reyn_core import ToolGates, hookimpl, tool
    import rtv_helpers

    REYN_API = 1

    @tool(name="which", cluster="t", purity="read_only", gates=ToolGates(router="allow", phase="allow"))
    def which() -> str:
        """Which helper code ran, and who loaded it."""
        return rtv_helpers.VALUE + " via " + type(rtv_helpers.__spec__.loader).__name__

    @hookimpl
    def reyn_register_tools(register, settings):
        register(which)
    ''')
HELPER = 'VALUE = "hashed source"\n'
PLANTED = 'import os\nopen(os.environ["PLANT_MARKER"], "a").write("planted ran\\n")\nVALUE = "planted"\n'
PROFILE = '[plugins]\nenable = ["rtv"]\n'

PROBE = textwrap.dedent("""\
    import asyncio, json, sys
    from reyn_core import ToolContext
    from reyn_core.host import dispatch_tool, load, load_profile

    result = load(load_profile(profile_file=sys.argv[1]))
    ctx = ToolContext(surface="router", agent="probe")
    call = asyncio.run(dispatch_tool(result.registry, "which", "{}", ctx, surface="router")) \\
        if "which" in result.registry else None
    print(json.dumps({
        "status": {p.plugin_id: p.status for p in result.report.plugins},
        "diagnostics": [d.to_json() for d in result.report.diagnostics],
        "call": call,
    }, default=str))
    """)


def hatchling_like_wheel(out: Path) -> Path:
    """A wheel as hatchling writes one: two top-level packages, RECORD with their hashes, and no
    ``top_level.txt``."""
    info = "rtv_plug-1.0.dist-info"
    files = {
        "rtv_plug/__init__.py": PLUGIN,
        "rtv_helpers/__init__.py": HELPER,
        f"{info}/METADATA": "Metadata-Version: 2.1\nName: rtv-plug\nVersion: 1.0\nRequires-Dist: reyn-core\n",
        f"{info}/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: hatchling 1.25.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
        f"{info}/entry_points.txt": "[reyn.plugins]\nrtv = rtv_plug\n",
    }

    def row(rel: str, data: bytes) -> str:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        return f"{rel},sha256={digest},{len(data)}"

    rows = [row(rel, text.encode()) for rel, text in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = "\n".join(rows) + "\n"
    wheel = out / "rtv_plug-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for rel, text in files.items():
            z.writestr(rel, text)
    return wheel


class World(LockedWorld):
    def __init__(self, venv: Any, root: Path) -> None:
        super().__init__(venv, root, PROFILE, PROFILE + "[lock]\nenforce = true\n")
        self.probe = root / "probe.py"
        self.probe.write_text(PROBE)
        self.helper = venv.site_packages / "rtv_helpers" / "__init__.py"

    def run(self, work: Path, **env: str) -> dict[str, Any]:
        profile = str(work / "reyn.toml")
        proc = self.venv.run("python", str(self.probe), profile, cwd=work, env=self.env(work, **env))
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return dict(json.loads(proc.stdout), marker=(work / "MARKER").exists())

    def plain_import(self, work: Path, **env: str) -> str:
        """The control: what plain Python (no Reyn) runs for ``rtv_helpers``."""
        code = "import rtv_helpers; print(rtv_helpers.VALUE)"
        proc = self.venv.run("python", "-c", code, cwd=work, env=self.env(work, **env))
        return proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def world(make_module_venv: Any, tmp_path_factory: pytest.TempPathFactory) -> World:
    root = tmp_path_factory.mktemp("names")
    venv = make_module_venv("names")
    venv.install("reyn-core", "reyn-isolation")
    for folder in (root, venv.path.parent):
        os.chmod(folder, 0o755)  # an isolated worker runs as an unprivileged user
    pip_install(venv, "--no-deps", str(hatchling_like_wheel(root)))
    assert not list(venv.site_packages.glob("rtv_plug-1.0.dist-info/top_level.txt"))
    return World(venv, root)


def test_a_second_package_is_served_from_its_digested_source(world: World) -> None:
    work = world.locked_work()
    report = world.run(work)
    assert report["status"] == {"rtv": "loaded"} and report["diagnostics"] == [], report
    assert report["call"]["data"] == "hashed source via VerifiedLoader"
    assert not report["marker"]
    code, audit = world.audit(work)
    assert code == 0 and audit["ok"], audit


def test_a_planted_pyc_in_a_second_package_never_runs(world: World) -> None:
    work = world.locked_work()
    st = world.helper.stat()
    code = compile(PLANTED, str(world.helper), "exec", dont_inherit=True)
    header = struct.pack("<III", 0, int(st.st_mtime) & 0xFFFFFFFF, st.st_size & 0xFFFFFFFF)
    pyc = world.helper.parent / "__pycache__" / f"__init__.{sys.implementation.cache_tag}.pyc"
    pyc.parent.mkdir(exist_ok=True)
    pyc.write_bytes(importlib.util.MAGIC_NUMBER + header + marshal.dumps(code))
    try:
        report = world.run(work)
        assert report["status"] == {"rtv": "loaded"} and report["diagnostics"] == [], report
        assert report["call"]["data"] == "hashed source via VerifiedLoader"
        assert not report["marker"], "planted bytecode ran"
        status, audit = world.audit(work)
        assert status == 0, audit  # the lock matches: what runs is what was locked
        found = {e["path"]: e for e in audit["never_executed"] if e["plugin"] == "rtv"}
        assert found[str(pyc)]["kind"] == "bytecode"
        assert "matches the source" in found[str(pyc)]["detail"]
        assert world.plain_import(work).strip() == "planted", "control: plain Python runs the plant"
    finally:
        pyc.unlink()


def test_a_second_package_shadowed_on_sys_path_refuses_the_plugin(world: World) -> None:
    work = world.locked_work()
    shadow = world.root / f"shadow{world.n}"
    (shadow / "rtv_helpers").mkdir(parents=True)
    (shadow / "rtv_helpers" / "__init__.py").write_text(PLANTED)
    report = world.run(work, PYTHONPATH=str(shadow))
    assert report["status"] == {"rtv": "refused"} and report["call"] is None
    (error,) = [d for d in report["diagnostics"] if d["severity"] == "error"]
    assert error["code"] == "RI009"
    assert "module 'rtv_helpers' would be imported from" in error["message"]
    assert str(shadow / "rtv_helpers") in error["message"]
    assert not report["marker"], "the shadowing package ran"
    assert world.plain_import(work, PYTHONPATH=str(shadow)).strip() == "planted", "control: the shadow works"


def test_an_isolated_worker_serves_a_second_package_from_its_digested_source(world: World) -> None:
    sandbox = reyn_sandbox.status()
    if not sandbox.available:
        pytest.skip(f"the kernel sandbox is unavailable here: {sandbox.reason}")
    work = world.locked_work()
    (work / "reyn.toml").write_text(PROFILE + '[plugins.rtv]\nisolation = "process"\n')
    report = world.run(work)
    assert report["status"] == {"rtv": "loaded"}, report
    assert [d["code"] for d in report["diagnostics"]] == ["RJ008"], report  # runs isolated
    assert report["call"]["data"] == "hashed source via VerifiedLoader"


@pytest.mark.parametrize(
    ("listing", "expected"),
    [
        (["pkg/__init__.py", "pkg/sub/mod.py", "pkg/data/x.json"], {"pkg": "pkg"}),
        (["ns/portion/mod.py"], {"ns": "ns"}),  # a namespace package: no __init__.py
        (["single.py", "__pycache__/single.cpython-311.pyc"], {"single": "single.py"}),
        (["__pycache__/gone.cpython-311.pyc"], {"gone": "gone.py"}),  # bytecode only: owned, refused
        (["_native.cpython-311-x86_64-linux-gnu.so"], {"_native": "_native.py"}),
        (["data_only/a.json", "x.pth", "rtv-1.0.dist-info/METADATA", "not-a-name/m.py"], {}),
        (["both.py", "both/__init__.py"], {"both": "both"}),
    ],
)
def test_import_names_come_from_the_listed_module_files(listing: list[str], expected: dict[str, str]) -> None:
    assert import_locations(listing) == expected
