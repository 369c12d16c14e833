"""The tracing add-on is pinned by the lock (issue 24): under ``[lock] enforce`` a reyn-otel whose
bytes changed since ``reyn plugins lock`` (reinstalled: its RECORD agrees with the new bytes) is
refused before anything of it runs, by the ``reyn`` command's exporter set-up and by the load alike
(``RC012``, no spans); the add-on as locked is used (positive control). A fresh interpreter over the
test venv's site-packages without reyn-otel, plus a folder where a distribution named reyn-otel is
installed as an installer would (its module writes a marker when imported)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from site_mirror import run_over, site_without
from site_plugin import install_distribution

CHILD = r"""
import json, sys
import reyn_core.host as host
from reyn_core.cli.loading import export_spans

mode, profile = sys.argv[1], host.Profile.from_toml_text(sys.argv[2])
exported = export_spans(profile)  # what the `reyn` command does before its load
result = host.load(profile)
if mode == "lock":
    host.write_lock("reyn.lock", host.lock_from_load(result))
print(json.dumps({
    "exported": exported,
    "diagnostics": [[d.code, d.message] for d in result.report.diagnostics],
    "extensions": [e.to_dict() for e in result.report.extensions],
    "imported": "reyn_otel" in sys.modules,
    "hints": {d.code: d.hint for d in result.report.diagnostics},
}))
"""

ADD_ON = """
import os, pathlib
pathlib.Path(os.environ["REYN_TEST_MARKER"]).write_text("imported")

def configure_tracing(enabled, **kwargs):
    return False

def export_spans():
    return True
"""

TRACING = "[observability]\ntracing = true\n"
ENFORCED = TRACING + "\n[lock]\nenforce = true\n"


def _install_add_on(mirror: Path, comment: str = "") -> None:
    install_distribution(
        mirror,
        "reyn-otel",
        "reyn_otel",
        {"__init__.py": ADD_ON + comment},
        "[reyn.tracing]\notel = reyn_otel\n",
    )


def _child(mirror: Path, mode: str, profile: str, cwd: Path) -> dict[str, Any]:
    return run_over(mirror, mirror, CHILD, mode, profile, cwd=cwd)


@pytest.fixture
def locked(tmp_path: Path, isolated_profile_env: None, marker: Path) -> Path:
    """The mirror holding the add-on, locked in ``tmp_path``/reyn.lock by a library load."""
    mirror = site_without(tmp_path, "reyn_otel")
    _install_add_on(mirror)
    _child(mirror, "lock", TRACING, tmp_path)
    assert '[extensions."reyn.tracing:otel"]' in (tmp_path / "reyn.lock").read_text()
    marker.unlink()  # a library load with tracing on imported it
    return mirror


def test_a_tracing_add_on_whose_bytes_changed_since_locking_is_refused(
    locked: Path, tmp_path: Path, marker: Path
) -> None:
    mirror = locked
    # positive control: the add-on as locked sets up the exporter and is recorded, no RC012
    found = _child(mirror, "load", ENFORCED, tmp_path)
    assert found["exported"] is True and found["diagnostics"] == [] and marker.exists()
    assert [e["distribution"] for e in found["extensions"]] == ["reyn-otel"]
    marker.unlink()
    _install_add_on(mirror, "\n# reinstalled with other bytes\n")
    found = _child(mirror, "load", ENFORCED, tmp_path)
    assert found["exported"] is False and found["imported"] is False and not marker.exists()
    assert found["extensions"] == []
    [(code, message)] = found["diagnostics"]
    assert code == "RC012" and "drifted from" in message and "file reyn_otel/__init__.py changed" in message
    # review L5: the fix says what the cause needs (the lock), not to install what is installed
    assert "the enforced lock refuses it" in found["hints"]["RC012"]
    assert "install the reyn-otel" not in found["hints"]["RC012"]


def test_the_rc012_hint_follows_the_cause(tmp_path: Path, isolated_profile_env: None, marker: Path) -> None:
    mirror = site_without(tmp_path, "reyn_otel")
    # not installed: install it
    missing = _child(mirror, "load", TRACING, tmp_path)
    assert "install the reyn-otel distribution" in missing["hints"]["RC012"]
    # installed, its files differ from its RECORD: reinstall it (nothing to install, no lock involved)
    _install_add_on(mirror)
    source = mirror / "reyn_otel" / "__init__.py"
    source.write_text(source.read_text() + "\n# edited in place\n")
    broken = _child(mirror, "load", TRACING, tmp_path)
    hint = broken["hints"]["RC012"]
    assert "differ from its RECORD" in dict(map(tuple, [d[:2] for d in broken["diagnostics"]]))["RC012"]
    assert "reinstall it from the wheelhouse" in hint and "install the reyn-otel" not in hint
    assert "lock" not in hint and not marker.exists()
    # positive control: reinstalled, it is used and nothing is said
    _install_add_on(mirror)
    assert _child(mirror, "load", TRACING, tmp_path)["diagnostics"] == [] and marker.exists()


# the `reyn` command itself in the same fresh interpreter: its exit code, stdout and stderr, and
# whether anything of reyn-otel was imported
CLI = r"""
import contextlib, io, json, sys
from reyn_core.cli import main

out, err = io.StringIO(), io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
    code = main(["--profile-file", "reyn.toml", *sys.argv[1:]])
print(json.dumps({"code": code, "out": out.getvalue(), "err": err.getvalue(),
                  "imported": "reyn_otel" in sys.modules}))
"""


def _reyn(mirror: Path, cwd: Path, *argv: str) -> dict[str, Any]:
    return run_over(mirror, mirror, CLI, *argv, cwd=cwd)


def test_plugins_lock_and_audit_describe_the_add_on_without_importing_it(
    tmp_path: Path, isolated_profile_env: None, marker: Path
) -> None:
    # review M2 and L3: a profile with tracing on and no plugin is locked (its [extensions] entry), and
    # neither `plugins lock` nor `plugins audit` imports the add-on or starts exporting spans to do it
    mirror = site_without(tmp_path, "reyn_otel")
    _install_add_on(mirror)
    (tmp_path / "reyn.toml").write_text(TRACING)
    done = _reyn(mirror, tmp_path, "plugins", "lock")
    assert done["code"] == 0, done
    assert "0 plugin(s), 0 tool(s), 1 extension(s)" in done["out"]
    assert '[extensions."reyn.tracing:otel"]' in (tmp_path / "reyn.lock").read_text()
    assert done["imported"] is False and not marker.exists()
    # positive control: the enforced load uses the add-on as locked (exports, no RC012)
    found = _child(mirror, "load", ENFORCED, tmp_path)
    assert found["exported"] is True and found["diagnostics"] == [] and marker.exists()
    marker.unlink()
    (tmp_path / "reyn.toml").write_text(ENFORCED)
    ok = _reyn(mirror, tmp_path, "plugins", "audit")
    assert ok["code"] == 0 and ok["out"].startswith("ok:"), ok
    assert "extension reyn.tracing:otel: reyn-otel 1.0" in ok["out"]
    assert ok["imported"] is False and not marker.exists()

    _install_add_on(mirror, "\n# reinstalled with other bytes\n")
    drifted = _reyn(mirror, tmp_path, "plugins", "audit", "--json")
    assert drifted["code"] != 0, drifted
    report = json.loads(drifted["out"])
    assert {(d["kind"], d["plugin"]) for d in report["drift"]} == {
        ("digest_changed", "reyn.tracing:otel"),
        ("file_changed", "reyn.tracing:otel"),
    }
    assert drifted["imported"] is False and not marker.exists()  # the refused add-on never ran


def test_a_profile_with_no_plugin_and_no_extension_has_nothing_to_lock(
    tmp_path: Path, isolated_profile_env: None, marker: Path
) -> None:
    mirror = site_without(tmp_path, "reyn_otel")
    _install_add_on(mirror)  # installed, but this profile does not turn tracing on
    (tmp_path / "reyn.toml").write_text("[observability]\ntracing = false\n")
    done = _reyn(mirror, tmp_path, "plugins", "lock")
    assert done["code"] != 0 and "nothing to lock" in done["err"], done
    assert not (tmp_path / "reyn.lock").exists() and not marker.exists()


def test_an_outdated_lock_is_said_once_and_refuses_the_add_on(
    locked: Path, tmp_path: Path, marker: Path
) -> None:
    # review L4: a version-3 lock (before [extensions]) under enforce: one RL004 for the load, and the
    # add-on is refused (RC012 naming RL004), never imported
    mirror = locked
    lock = tmp_path / "reyn.lock"
    text = lock.read_text()
    assert "version = 4" in text
    lock.write_text(text.replace("version = 4", "version = 3", 1))
    found = _child(mirror, "load", ENFORCED, tmp_path)
    codes = [code for code, _ in found["diagnostics"]]
    assert codes.count("RL004") == 1 and codes.count("RC012") == 1, found["diagnostics"]
    assert found["exported"] is False and found["imported"] is False and not marker.exists()
    assert "enforced lock refuses it" in found["hints"]["RC012"]
    # positive control: relocked in the current format, the add-on is used
    _child(mirror, "lock", TRACING, tmp_path)
    marker.unlink()
    again = _child(mirror, "load", ENFORCED, tmp_path)
    assert again["diagnostics"] == [] and again["exported"] is True and marker.exists()
