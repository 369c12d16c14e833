"""Which distribution may provide an approval store (issue 24): the documented store ``postgres`` only
reyn-approvals-postgres; a store of another name one distribution that is not a Reyn plugin. A plugin's
distribution declaring a store is reported (``RD006``) and never imported, and the store stays unusable
(every call that needs approval is refused, as before); the same store from a distribution that is not a
plugin is imported from its verified files and holds the call (positive control). Real ``reyn``
subprocesses over the approvals world of conftest.py."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from site_plugin import install_distribution

STORE = """
import os, pathlib
pathlib.Path(os.environ["REYN_TEST_MARKER"]).write_text("imported")
from reyn_approvals_sqlite import SqliteApprovalStore

def open_store(settings, base):
    return SqliteApprovalStore(pathlib.Path(base) / "custom.sqlite")
"""


OLD_SHAPE = STORE.replace(
    "def open_store(settings, base):\n    return SqliteApprovalStore(",
    "class OldStore(SqliteApprovalStore):\n"
    "    def decide(self, approval_id, *, approve, by, reason, now):\n"
    "        raise AssertionError('never called')\n\n"
    "def open_store(settings, base):\n    return OldStore(",
)


def _store_dist(world: Any, dist: str, *, plugin: bool, source: str = STORE) -> None:
    """``dist`` declaring the approval store ``custom`` (and, when ``plugin``, a Reyn plugin too)."""
    entry_points = "[reyn.approval_stores]\ncustom = reyn_custom_store.store:open_store\n"
    if plugin:
        entry_points += "[reyn.plugins]\ncustomplugin = reyn_custom_store\n"
    install_distribution(
        world.site, dist, "reyn_custom_store", {"__init__.py": "", "store.py": source}, entry_points
    )
    text = world.profile.read_text().replace('settings.file = "approvals.sqlite"', 'backend = "custom"')
    world.profile.write_text(text)


def _call(world: Any) -> dict[str, Any]:
    done = world.reyn("tools", "call", world.write, "path=out/a.md", "text=hi", "--json")
    envelope: dict[str, Any] = json.loads(done.stdout)
    return envelope


def test_a_plugin_providing_the_store_is_never_imported_and_held_calls_are_refused(
    world: Any, marker: Path, operator_log: Any
) -> None:
    _store_dist(world, "reyn-custom-store", plugin=True)
    envelope = _call(world)
    assert envelope["error"]["reason"] == "unavailable" and not marker.exists()
    why = operator_log.record(envelope["error"]["message"])
    assert "no installed distribution provides the approval store 'custom'" in why
    assert not (world.root / "out" / "a.md").exists()  # fail closed: refused, not run
    done = world.reyn("doctor", "--json")
    assert "RD006" in done.stdout and "it is a Reyn plugin" in done.stdout and not marker.exists()


def test_the_same_store_from_a_distribution_that_is_not_a_plugin_holds_the_call(
    world: Any, marker: Path
) -> None:
    _store_dist(world, "reyn-custom-store", plugin=False)
    envelope = _call(world)
    assert envelope["error"]["kind"] == "approval_required", envelope
    assert envelope["error"]["approval"].startswith("apr-") and (world.root / "custom.sqlite").exists()
    assert marker.exists() and not (world.root / "out" / "a.md").exists()


def test_a_store_with_the_old_decide_is_unusable_and_held_calls_are_refused(
    world: Any, marker: Path, operator_log: Any
) -> None:
    # the store protocol's decide(decided) replaced decide(approval_id, *, approve, ...): a store of
    # the old shape passes the protocol's name check, so the load checks decide's shape (RC011)
    # instead of letting the first decision fail with a TypeError; control: the test above
    assert "class OldStore" in OLD_SHAPE
    _store_dist(world, "reyn-custom-store", plugin=False, source=OLD_SHAPE)
    envelope = _call(world)
    assert envelope["error"]["reason"] == "unavailable", envelope
    assert "has decide() of another shape" in operator_log.record(envelope["error"]["message"])
    assert marker.exists() and not (world.root / "out" / "a.md").exists()
    done = world.reyn("doctor", "--json")
    assert "RC011" in done.stdout and "decide(decided)" in done.stdout


def test_postgres_from_another_distribution_is_never_imported(world: Any, marker: Path) -> None:
    install_distribution(
        world.site,
        "not-postgres",
        "reyn_custom_store",
        {"__init__.py": "", "store.py": STORE},
        "[reyn.approval_stores]\npostgres = reyn_custom_store.store:open_store\n",
    )
    text = world.profile.read_text().replace('settings.file = "approvals.sqlite"', 'backend = "postgres"')
    world.profile.write_text(text)
    done = world.reyn("doctor", "--json")
    assert "RD006" in done.stdout and "only reyn-approvals-postgres may provide it" in done.stdout
    assert not marker.exists()


def test_under_an_enforced_lock_a_store_reinstalled_with_other_bytes_is_refused(
    world: Any, marker: Path, operator_log: Any
) -> None:
    # the store is pinned by `reyn plugins lock` ([extensions."reyn.approval_stores:custom"]); one whose
    # bytes changed since (RECORD rewritten to match, as a reinstall does) is refused before it runs
    _store_dist(world, "reyn-custom-store", plugin=False)
    done = world.reyn("plugins", "lock")
    assert done.returncode == 0, done.stderr
    assert '[extensions."reyn.approval_stores:custom"]' in (world.root / "reyn.lock").read_text()
    assert not marker.exists()  # locking recorded the store, it never imported it (review M2)
    world.profile.write_text(world.profile.read_text() + "\n[lock]\nenforce = true\n")
    envelope = _call(world)  # positive control: the store as locked holds the call
    assert envelope["error"]["kind"] == "approval_required", envelope
    assert marker.exists()
    marker.unlink()
    install_distribution(
        world.site,
        "reyn-custom-store",
        "reyn_custom_store",
        {"__init__.py": "", "store.py": STORE + "\n# other bytes\n"},
        "[reyn.approval_stores]\ncustom = reyn_custom_store.store:open_store\n",
    )
    envelope = _call(world)
    assert envelope["error"]["reason"] == "unavailable" and not marker.exists()
    assert "drifted from" in operator_log.record(envelope["error"]["message"]), envelope
    assert not (world.root / "out" / "a.md").exists()  # fail closed: refused, not run
    doctor = world.reyn("doctor", "--json")
    assert "RC011" in doctor.stdout and "file reyn_custom_store/store.py changed" in doctor.stdout
    assert "the enforced lock refuses it" in doctor.stdout  # its hint follows the cause (review L5)
    assert not marker.exists()


# --------------------------------------------------------------------------- a store raising at import

RAISING = STORE.replace(
    "from reyn_approvals_sqlite import SqliteApprovalStore\n",
    "from reyn_approvals_sqlite import SqliteApprovalStore\n\n"
    "def start():\n    raise ValueError('the store cannot start')\n\nstart()\n",
)


def test_a_store_raising_at_import_is_refused_naming_no_host_path_to_the_model(
    world: Any, marker: Path, operator_log: Any
) -> None:
    # the refusal reaches a model (reason: unavailable) in fixed words citing the operator's log,
    # which holds why (the location inside the distribution, the host path in the traceback); the
    # host path is the operator's, in RC011's traceback too; control: the test above where the same
    # store imports cleanly and holds the call
    _store_dist(world, "reyn-custom-store", plugin=False, source=RAISING)
    envelope = _call(world)
    assert envelope["error"]["reason"] == "unavailable", envelope
    message = envelope["error"]["message"]
    assert (
        "the approval store (RC011), its argument-hash key or the audit log (RC006) cannot be used" in message
    )
    why = operator_log.record(message)
    assert "failed at reyn_custom_store/store.py:7 (in start): ValueError: the store cannot start" in why
    assert str(world.site) not in message and str(world.root) not in message
    assert not re.search(r"(^|[\s'\"(=])/[\w.-]+/", message), message  # no absolute path at all
    assert not (world.root / "out" / "a.md").exists()  # fail closed: refused, not run
    done = world.reyn("--traceback", "doctor")
    store = world.site / "reyn_custom_store" / "store.py"
    assert "RC011" in done.stdout and "reyn: traceback of RC011" in done.stderr, done.stderr
    assert f"raised at {store}:7 (in start)" in done.stderr
    assert "Traceback (most recent call last)" in done.stderr
