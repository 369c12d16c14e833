"""The install story of an isolated plugin: the example plugin's wheel, built by pip and installed
into a brand-new venv from a wheelhouse (reyn-core, reyn-isolation and reyn-sandbox built from this
tree, no editable install, no source folder), enabled with ``isolation = "process"``: refused (RJ012)
and never imported in process while reyn-isolation is not installed; once it is, it answers a tool
call through the real ``reyn`` command — from a worker started by that venv's interpreter, under the
real kernel sandbox."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

ISOLATED = '[plugins]\nenable = ["example"]\n\n[plugins.example]\nisolation = "process"\n'
# a load of the profile in cwd: the plugin's status, its diagnostics' codes but RJ008 (runs isolated),
# its tools, and whether its module was imported into this process
LOAD_AND_SAY = """
import json, sys
from reyn_core.host import load
[info] = [i for i in load().report.plugins if i.plugin_id == "example"]
print(json.dumps({
    "status": info.status,
    "codes": [d.code for d in info.diagnostics if d.code != "RJ008"],
    "tools": list(info.tools),
    "imported": "reyn_example" in sys.modules,
}))
"""


def test_an_isolated_example_wheel_in_a_fresh_venv_answers_a_call(make_venv: Any, tmp_path: Path) -> None:
    os.chmod(tmp_path, 0o755)  # the worker runs as an unprivileged user
    venv = make_venv("isolated")
    # pip builds the example's wheel from its folder (build requirements from the wheelhouse too) and
    # installs that wheel: no editable install, no source folder on the path
    venv.install("reyn_plugin_example")
    work = tmp_path / "work"
    work.mkdir()
    (work / "reyn.toml").write_text(ISOLATED)
    args = json.dumps({"value": 1, "from_unit": "mi", "to_unit": "km"})

    # fail closed: without reyn-isolation the plugin is refused with one RJ012 naming the distribution
    # to install, and it is not imported in process instead
    refused = venv.run("reyn", "tools", "call", "convert_units", "--args", args, "--json", cwd=work)
    assert refused.returncode != 0 and "RJ012" in refused.stderr, refused.stdout + refused.stderr
    assert "pip install --find-links DIST reyn-isolation" in refused.stderr
    loaded = venv.run("python", "-c", LOAD_AND_SAY, cwd=work)
    assert json.loads(loaded.stdout) == {
        "status": "refused",
        "codes": ["RJ012"],
        "tools": [],
        "imported": False,
    }, loaded.stderr

    venv.install("reyn-isolation")
    again = venv.run("python", "-c", LOAD_AND_SAY, cwd=work)
    assert json.loads(again.stdout)["status"] == "loaded", again.stdout + again.stderr
    assert json.loads(again.stdout)["imported"] is False  # the worker imported it, not the host
    proc = venv.run("reyn", "tools", "call", "convert_units", "--args", args, "--json", cwd=work)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    envelope = json.loads(proc.stdout)
    assert envelope["status"] == "ok", envelope
    assert envelope["data"]["value"] == pytest.approx(1.609344, rel=1e-3)

    listed = venv.run("reyn", "plugins", "list", "--json", cwd=work)
    assert listed.returncode == 0, listed.stderr
    [entry] = [p for p in json.loads(listed.stdout)["plugins"] if p["id"] == "example"]
    assert entry["status"] == "loaded" and entry["permissions"]["isolation"] == "process"
    assert entry["permissions"]["landlock_abi"], entry["permissions"]
    # the code that ran is the venv's installed wheel, in a worker (RJ008), not the checkout's
    doctor = venv.run("reyn", "doctor", cwd=work)
    assert "RJ008" in doctor.stdout and "runs isolated" in doctor.stdout, doctor.stdout + doctor.stderr
    where = venv.run("python", "-c", "import reyn_core, reyn_example; print(reyn_example.__file__)")
    assert Path(where.stdout.strip()).is_relative_to(venv.site_packages), where.stdout + where.stderr

    # the positive control of the sandbox: without isolation the same call answers the same way
    (work / "reyn.toml").write_text('[plugins]\nenable = ["example"]\n')
    again = venv.run("reyn", "tools", "call", "convert_units", "--args", args, "--json", cwd=work)
    assert json.loads(again.stdout) == envelope
