"""The isolation backend is pinned by the lock (issue 24): ``reyn plugins lock`` writes
``[extensions."reyn.isolation:process"]``, and under ``[lock] enforce`` a backend whose bytes changed
since (reinstalled: RECORD agrees with the new bytes, so only the lock can tell) or that the lock does
not have is refused before anything of it runs: the isolated plugin is refused with ``RJ012`` and
never imported. Positive controls: the unchanged backend loads; relocking accepts it. ``reyn plugins
audit`` names the drift. Each case is a fresh interpreter over the test venv's site-packages without
reyn-isolation, plus a folder where a distribution named reyn-isolation is installed as an installer
would (its backend writes a marker when imported)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from site_mirror import run_over, site_without
from site_plugin import install_distribution

from .plugin_kit import install_package_plugin
from .test_extension_point import EVIL_BACKEND, PLUGIN, PROFILE

ENFORCED = PROFILE + "\n[lock]\nenforce = true\n"

CHILD = r"""
import json, sys
import reyn_core.host as host
from reyn_core.loading.step3_provenance.lock import LockFile
from reyn_core.loading.step3_provenance.lock_audit import audit
from reyn_core.loading.step3_provenance.lock_file import read_lock

mode, profile = sys.argv[1], sys.argv[2]
# as `reyn plugins lock` and `reyn plugins audit` load (extensions recorded, the backend imported only
# to run the isolated plugin, and by an audit only as the enforced lock has it)
review = {"lock": "lock", "lock-plugins-only": "lock", "audit": "audit"}.get(mode)
result = host.load(host.Profile.from_toml_text(profile), review=review)
out = {"extensions": [e.to_dict() for e in result.report.extensions]}
if mode == "lock":
    host.write_lock("reyn.lock", host.lock_from_load(result))
elif mode == "lock-plugins-only":  # a lock written before the backend was pinned
    host.write_lock("reyn.lock", LockFile(plugins=host.lock_from_load(result).plugins))
elif mode == "audit":
    out["drift"] = [d.to_dict() for d in audit(read_lock("reyn.lock"), result)]
else:
    [info] = [i for i in result.report.plugins if i.plugin_id == "loud"]
    out["status"] = info.status
    out["diagnostics"] = [[d.code, d.message] for d in result.report.diagnostics]
    out["hints"] = {d.code: d.hint for d in result.report.diagnostics}
    out["imported"] = sorted(m for m in sys.modules if m.startswith(("reyn_iso_", "reyn_isolation")))
print(json.dumps(out))
"""


def _child(mirror: Path, site: Path, mode: str, profile: str, cwd: Path) -> dict[str, Any]:
    return run_over(mirror, site, CHILD, mode, profile, cwd=cwd)


def _install_backend(mirror: Path, comment: str = "") -> None:
    """A distribution named reyn-isolation (RECORD as installed), whose backend imports the plugin in
    process and answers loaded (the marker says it ran)."""
    entry_points = "[reyn.isolation]\nprocess = reyn_isolation.step:backend\n"
    files = {"__init__.py": "", "step.py": EVIL_BACKEND + comment}
    install_distribution(mirror, "reyn-isolation", "reyn_isolation", files, entry_points)


@pytest.fixture
def world(site: Path, tmp_path: Path, marker: Path) -> tuple[Path, Path, Path]:
    """(mirror holding the backend, site holding the plugin, the folder of reyn.lock), locked."""
    install_package_plugin(site, "loud", {"__init__.py": PLUGIN})
    mirror = site_without(tmp_path, "reyn_isolation")
    _install_backend(mirror)
    _child(mirror, site, "lock", PROFILE, tmp_path)
    text = (tmp_path / "reyn.lock").read_text()
    assert '[extensions."reyn.isolation:process"]' in text and 'distribution = "reyn-isolation"' in text
    marker.unlink()  # locking loaded (and so ran) the backend
    return mirror, site, tmp_path


def _refused(found: dict[str, Any], marker: Path) -> str:
    assert found["status"] == "refused" and found["imported"] == [] and found["extensions"] == []
    assert not marker.exists()  # nothing of the backend ran
    [rj012] = [m for c, m in found["diagnostics"] if c == "RJ012"]
    return str(rj012)


def test_a_backend_whose_bytes_changed_since_locking_is_refused(
    world: tuple[Path, Path, Path], marker: Path
) -> None:
    mirror, site, cwd = world
    # positive control: the backend as locked loads under enforce
    found = _child(mirror, site, "load", ENFORCED, cwd)
    assert found["status"] == "loaded" and marker.exists(), found["diagnostics"]
    assert [e["name"] for e in found["extensions"]] == ["process"]
    marker.unlink()
    _install_backend(mirror, "\n# reinstalled with other bytes\n")  # its RECORD agrees with them
    refused = _child(mirror, site, "load", ENFORCED, cwd)
    rj012 = _refused(refused, marker)
    assert "reyn-isolation 1.0 is not imported" in rj012 and "drifted from" in rj012
    assert "file reyn_isolation/step.py changed" in rj012
    # review L5: the fix is the lock's, not installing what is installed
    hint = refused["hints"]["RJ012"]
    assert "the enforced lock refuses it" in hint and "pip install" not in hint
    # plugins audit under the enforced lock names the drift, and never runs the backend to do so
    drift = _child(mirror, site, "audit", ENFORCED, cwd)["drift"]
    assert {(d["kind"], d["plugin"], d["subject"]) for d in drift} == {
        ("plugin_not_loaded", "loud", "plugin"),  # it needs the backend, which the enforced lock refuses
        ("digest_changed", "reyn.isolation:process", "extension"),
        ("file_changed", "reyn.isolation:process", "extension"),
    }
    assert not marker.exists()


def test_a_backend_the_lock_does_not_have_is_refused_until_relocked(
    world: tuple[Path, Path, Path], marker: Path
) -> None:
    mirror, site, cwd = world
    _child(mirror, site, "lock-plugins-only", PROFILE, cwd)
    marker.unlink()
    rj012 = _refused(_child(mirror, site, "load", ENFORCED, cwd), marker)
    assert "it is not in" in rj012 and "run `reyn plugins lock`" in rj012
    drift = _child(mirror, site, "audit", ENFORCED, cwd)["drift"]
    assert [(d["kind"], d["plugin"]) for d in drift] == [
        ("plugin_not_loaded", "loud"),  # it needs the backend, which the enforced lock refuses
        ("extension_added", "reyn.isolation:process"),
    ]
    assert not marker.exists()  # the audit recorded the backend the lock refuses, never imported it
    # positive control: relocked, the same backend loads
    _child(mirror, site, "lock", PROFILE, cwd)
    marker.unlink()
    found = _child(mirror, site, "load", ENFORCED, cwd)
    assert found["status"] == "loaded" and marker.exists(), found["diagnostics"]
