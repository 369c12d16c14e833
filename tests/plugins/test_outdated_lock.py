"""A ``reyn.lock`` written in an older format (version 1, before the definition digest) under
``[lock] enforce = true``: one ``RL004`` diagnostic for the whole load asking to re-run
``reyn plugins lock``, every enabled plugin refused (fail closed), and no drift (``RL001``) per
plugin; the same lock re-written in the current format loads."""

from __future__ import annotations

import pytest
from plugin_distkit import tool_plugin
from site_plugin import install_site_plugin

from reyn_core.host import Profile, load, lock_from_load, write_lock
from reyn_core.loading.step3_provenance.lock_file import render_lock


def _profiles(pids: tuple[str, ...]) -> tuple[str, str]:
    """(enabling ``pids``, the same with ``[lock] enforce = true``)."""
    plain = "[plugins]\nenable = [" + ", ".join(f'"{p}"' for p in pids) + "]\n"
    return plain, plain + "[lock]\nenforce = true\n"


pytestmark = pytest.mark.usefixtures("isolated_profile_env")


@pytest.fixture
def world(request, tmp_path, monkeypatch):
    """Two plugins (ids unique to the test: a module imported by an earlier test stays imported)
    installed and locked in the current format (``reyn.lock`` in the cwd)."""
    stem = "ol_" + request.node.name.removeprefix("test_")[:12].replace("a_", "")
    pids = (f"{stem}_one", f"{stem}_two")
    site = tmp_path / "site"
    for pid in pids:
        install_site_plugin(site, pid, tool_plugin([f"{pid}_echo"], cluster="probe"))
    monkeypatch.syspath_prepend(str(site))
    plain, _ = _profiles(pids)
    write_lock(tmp_path / "reyn.lock", lock_from_load(load(Profile.from_toml_text(plain))))
    return pids, tmp_path / "reyn.lock"


def test_a_current_lock_loads_every_plugin(world):
    # Positive control: the same world and lock, in the current format.
    pids, _ = world
    result = load(Profile.from_toml_text(_profiles(pids)[1]))
    assert [result.report.plugin(pid).status for pid in pids] == ["loaded", "loaded"]
    assert not result.report.diagnostics


@pytest.mark.parametrize("old", [1, 2, 3])
def test_an_older_lock_gives_one_rl004_and_refuses_every_plugin(world, old):
    # version 2 pinned digests without the result schema (issue 28): every pin differs now; version 3
    # pinned no extension (issue 24)
    pids, locked = world
    text = locked.read_text()
    assert "\nversion = 4\n" in text
    locked.write_text(text.replace("version = 4\n", f"version = {old}\n", 1))
    result = load(Profile.from_toml_text(_profiles(pids)[1]))
    assert [result.report.plugin(pid).status for pid in pids] == ["refused", "refused"]
    (diag,) = result.report.diagnostics
    assert (diag.code, diag.severity, diag.plugin) == ("RL004", "error", None)
    assert f"lock format version {old}" in diag.message and "re-run `reyn plugins lock`" in diag.message
    assert not list(result.registry)


def test_re_locking_after_an_outdated_lock_loads_again(world):
    pids, locked = world
    plain, enforced = _profiles(pids)
    current = locked.read_text()
    locked.write_text(current.replace("version = 4\n", "version = 3\n", 1))
    assert load(Profile.from_toml_text(enforced)).report.plugin(pids[0]).status == "refused"
    unenforced = load(Profile.from_toml_text(plain))
    write_lock(locked, lock_from_load(unenforced))  # what `reyn plugins lock` does
    assert locked.read_text() == current == render_lock(lock_from_load(unenforced))
    again = load(Profile.from_toml_text(enforced))
    assert [again.report.plugin(pid).status for pid in pids] == ["loaded", "loaded"]
