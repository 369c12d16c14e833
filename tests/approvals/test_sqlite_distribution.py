"""The core ships no approval store (issue 24): the default backend ``sqlite`` is the reyn-approvals-sqlite
distribution, found by name like any store. On a host that never installed it (the test venv's
site-packages mirrored without it), a profile whose rules hold calls loads with ``RC011`` naming
``pip install … reyn-approvals-sqlite``, and a held call is refused before its handler runs — never run
unapproved — while a call no rule holds runs. Positive control: the same profile on the same site with
the distribution installed holds the call, and once approved the call runs. Real ``reyn`` processes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from site_mirror import site_without

CALL = ("path=out/a.md", "text=hi")
INSTALL = "pip install --find-links DIST reyn-approvals-sqlite"
# `reyn ARGS` over the mirror: a fresh interpreter without the venv's site-packages (-S) sees the
# mirror (everything installed but reyn-approvals-sqlite) and, ahead of it, the test plugin's site.
REYN = (
    "import runpy, site, sys\n"
    "mirror, first, *args = sys.argv[1:]\n"
    "site.addsitedir(mirror)\n"
    "sys.path.insert(0, first)\n"
    "sys.argv = ['reyn', *args]\n"
    "runpy.run_module('reyn_core', run_name='__main__')\n"
)


@pytest.fixture
def mirror(tmp_path: Path) -> Path:
    return site_without(tmp_path, "reyn_approvals_sqlite")


def _without_sqlite(world: Any, mirror: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-S", "-c", REYN, str(mirror), str(world.site), *args],
        cwd=world.root,
        env=world.env(),
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def test_without_the_sqlite_store_a_held_call_is_refused_saying_how_to_install_it(
    world: Any, mirror: Path, operator_log: Any
) -> None:
    probe = f"import site; site.addsitedir({str(mirror)!r}); import reyn_approvals_sqlite"
    probe_done = subprocess.run(
        [sys.executable, "-S", "-c", probe], capture_output=True, text=True, timeout=60
    )
    assert probe_done.returncode != 0 and "ModuleNotFoundError" in probe_done.stderr  # the host has no store

    done = _without_sqlite(world, mirror, "tools", "call", world.write, *CALL, "--json")
    envelope = json.loads(done.stdout)
    assert envelope["error"]["reason"] == "unavailable", envelope
    assert "reyn-approvals-sqlite" in operator_log.record(envelope["error"]["message"])
    assert not (world.root / "out" / "a.md").exists()  # fail closed: refused, never run unapproved
    assert not (world.root / "approvals.sqlite").exists()

    doctor = _without_sqlite(world, mirror, "doctor", "--json")
    assert "RC011" in doctor.stdout and INSTALL in doctor.stdout, doctor.stdout + doctor.stderr
    read = _without_sqlite(world, mirror, "tools", "call", world.read, "path=out/a.md", "--json")
    assert read.returncode == 0 and json.loads(read.stdout)["status"] == "ok"  # no rule holds it
    listed = _without_sqlite(world, mirror, "approvals", "list")
    assert listed.returncode != 0 and INSTALL in listed.stderr and "Traceback" not in listed.stderr


def test_with_the_sqlite_store_the_same_profile_holds_the_call_and_runs_it_once_approved(world: Any) -> None:
    code, envelope = world.reyn_json("tools", "call", world.write, *CALL)
    assert code == 1 and envelope["error"]["kind"] == "approval_required", envelope
    approval = envelope["error"]["approval"]
    assert (world.root / "approvals.sqlite").exists() and not (world.root / "out" / "a.md").exists()
    assert world.reyn("approvals", "approve", approval).returncode == 0
    code, envelope = world.reyn_json("tools", "call", world.write, *CALL, "--approval", approval)
    assert code == 0 and envelope["status"] == "ok", envelope
    assert (world.root / "out" / "a.md").read_text() == "hi\n"


def test_the_store_file_is_a_setting_of_the_store(world: Any, operator_log: Any) -> None:
    # `[approvals.settings] file` is read by reyn-approvals-sqlite (relative to the profile's folder);
    # an unknown key is the store's RC011, and every held call is refused until it is fixed
    text = world.profile.read_text()
    world.profile.write_text(text.replace('file = "approvals.sqlite"', 'file = "state/apr.sqlite"'))
    _, envelope = world.reyn_json("tools", "call", world.write, *CALL)
    assert envelope["error"]["kind"] == "approval_required" and (world.root / "state" / "apr.sqlite").exists()
    world.profile.write_text(text.replace('file = "approvals.sqlite"', 'path = "approvals.sqlite"'))
    _, envelope = world.reyn_json("tools", "call", world.write, *CALL)
    assert envelope["error"]["reason"] == "unavailable" and "path" in operator_log.record(
        envelope["error"]["message"]
    )
    assert not (world.root / "out" / "a.md").exists()
