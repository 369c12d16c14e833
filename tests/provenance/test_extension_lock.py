"""The lock's ``[extensions."<group>:<name>"]`` (format 4, issue 24): what ``reyn plugins lock`` writes
for the extensions a load imported, read back strictly, and what ``reyn plugins audit`` reports when
they drift. The load-time refusal under ``[lock] enforce`` is tests/isolation/test_extension_lock.py
(real installed distributions)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from reyn_core.loading.extension_origin import ExtensionOrigin
from reyn_core.loading.report import LoadReport, LoadResult
from reyn_core.loading.step1_profile.profile import Profile
from reyn_core.loading.step3_provenance.lock import LockError, LockFile
from reyn_core.loading.step3_provenance.lock_audit import audit, lock_from_load
from reyn_core.loading.step3_provenance.lock_file import read_lock, render_lock, write_lock
from reyn_core.loading.step3_provenance.record import ProvenanceRecord
from reyn_core.registry import RegistryBuilder

from .test_lock import _h, make_record

KEY = "reyn.isolation:process"


FILES = {"reyn_isolation/__init__.py": _h("i"), "reyn_isolation/step.py": _h("s")}


def _backend(files: dict[str, str] = FILES, version: str = "1.0") -> ProvenanceRecord:
    """The provenance record of a reyn-isolation backend (as ``extension_origin`` computes it)."""
    return make_record(
        files,
        plugin_id=KEY,
        entry_point="reyn_isolation.step:backend",
        distribution="reyn-isolation",
        version=version,
    )


def _origin(record: ProvenanceRecord) -> ExtensionOrigin:
    group, name = record.plugin_id.split(":")
    return ExtensionOrigin(
        group,
        name,
        record.entry_point,
        record.distribution,
        record.version,
        record.source_kind,
        record.tree_digest,
        record,
    )


def _result(*records: ProvenanceRecord) -> LoadResult:
    report = LoadReport(plugins=(), diagnostics=(), extensions=tuple(_origin(r) for r in records))
    return LoadResult(RegistryBuilder().freeze(), report, Profile())


def test_the_lock_pins_each_extension_the_load_imported_and_reads_it_back(tmp_path: Path) -> None:
    lock = lock_from_load(_result(_backend()))
    [entry] = lock.extensions
    assert (entry.plugin_id, entry.distribution, entry.version) == (KEY, "reyn-isolation", "1.0")
    assert entry.tree_digest == _backend().tree_digest and entry.tools == () and entry.api_version is None
    write_lock(tmp_path / "reyn.lock", lock)
    text = (tmp_path / "reyn.lock").read_text()
    assert f'[extensions."{KEY}"]' in text and f'[extensions."{KEY}".files]' in text
    assert "api_version" not in text and "tools" not in text
    assert read_lock(tmp_path / "reyn.lock") == lock
    assert render_lock(lock) == text and lock.extension(KEY) == entry
    assert lock_from_load(_result()).extensions == ()  # a load that imported none pins none


@pytest.mark.parametrize(
    ("mutate", "reason"),
    [
        (lambda t: t.replace(f'"{KEY}"', '"no-colon"'), "expected a key '<group>:<name>'"),
        (lambda t: t.replace("entry_point = ", "tools = 1\nentry_point = "), "unknown key 'tools'"),
        (lambda t: t.replace('distribution = "reyn-isolation"\n', ""), "missing key 'distribution'"),
        (lambda t: t.replace(_h("s"), _h("x")), "does not produce tree_digest"),
    ],
    ids=["key", "plugin-only-key", "missing-key", "edited-file-hash"],
)
def test_a_malformed_extension_entry_is_a_clear_error(
    tmp_path: Path, mutate: Callable[[str], str], reason: str
) -> None:
    path = tmp_path / "reyn.lock"
    good = render_lock(lock_from_load(_result(_backend())))
    path.write_text(mutate(good))
    with pytest.raises(LockError) as err:
        read_lock(path)
    assert reason in err.value.reason and "extensions" in err.value.reason
    path.write_text(good)  # positive control
    assert read_lock(path).extension(KEY) is not None


def test_audit_reports_extension_drift_by_file() -> None:
    lock = lock_from_load(_result(_backend()))
    assert audit(lock, _result(_backend())) == []  # positive control: unchanged
    files = {"reyn_isolation/__init__.py": _h("i"), "reyn_isolation/step.py": _h("changed")}
    drifts = audit(lock, _result(_backend(files=files)))
    assert [(d.kind, d.subject, d.plugin_id) for d in drifts] == [
        ("digest_changed", "extension", KEY),
        ("file_changed", "extension", KEY),
    ]
    assert drifts[1].path == "reyn_isolation/step.py" and drifts[1].detail.startswith(f"extension {KEY!r}")
    assert drifts[1].to_dict()["subject"] == "extension"
    [added] = audit(LockFile(), _result(_backend()))
    assert (added.kind, added.plugin_id) == ("extension_added", KEY) and "reyn plugins lock" in added.detail
    [removed] = audit(lock, _result())
    assert (removed.kind, removed.plugin_id) == ("extension_removed", KEY)
    [moved] = audit(lock, _result(_backend(version="2.0")))
    assert moved.kind == "version_changed" and "1.0 in the lock, 2.0 installed" in moved.detail
