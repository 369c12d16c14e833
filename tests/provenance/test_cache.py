"""The digest cache: warm calls read no file, persistence, corruption, racy files, and its trust boundary."""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from reyn_core.loading.step3_provenance.cache import DigestCache
from reyn_core.loading.step3_provenance.record import provenance_for


@pytest.fixture(scope="module")
def wheel(kit: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cache-wheel")
    return kit.build_wheel(kit.write_project(root / "proj"), root / "dist")


@pytest.fixture(scope="module")
def shared(kit: Any, make_module_venv: Any, wheel: Path) -> Any:
    """One install for the tests that only read it."""
    venv = make_module_venv("shared")
    kit.pip_install(venv, str(wheel))
    kit.backdate(venv.site_packages)
    return venv


@pytest.fixture
def installed(kit: Any, make_venv: Any, wheel: Path) -> Any:
    """A private install for tests that tamper with it."""
    venv = make_venv("cached")
    kit.pip_install(venv, str(wheel))
    kit.backdate(venv.site_packages)
    return venv


def _prov(kit: Any, venv: Any, cache: DigestCache | None) -> Any:
    return provenance_for(
        kit.dist_in(venv.site_packages), plugin_id="demo", entry_point="demo_plug.plugin", cache=cache
    )


def _old_file(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    then = time.time() - 3600
    os.utime(path, (then, then))
    return path


def test_warm_call_hashes_nothing(kit: Any, shared: Any, tmp_path: Path) -> None:
    cache = DigestCache(tmp_path / "cache.json")
    cold = _prov(kit, shared, cache)
    assert cache.misses > 0 and cache.hits == 0
    misses = cache.misses
    warm = _prov(kit, shared, cache)
    assert cache.misses == misses  # no file was read again
    assert cache.hits == misses
    assert warm == cold


def test_the_cache_trusts_size_and_mtime_and_an_uncached_call_does_not(
    kit: Any, installed: Any, tmp_path: Path
) -> None:
    """The trust boundary, shown: same size + same mtime_ns = same bytes, as far as the cache knows."""
    cache = DigestCache(tmp_path / "cache.json")
    before = _prov(kit, installed, cache)
    target = installed.site_packages / "demo_plug" / "plugin.py"
    st = target.stat()
    data = target.read_bytes()
    target.write_bytes(data[:-2] + b"#\n")  # same length, different bytes
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert _prov(kit, installed, cache).tree_digest == before.tree_digest  # the cache did not look
    fresh = _prov(kit, installed, None)
    assert fresh.tree_digest != before.tree_digest
    assert fresh.record_mismatches == ("demo_plug/plugin.py",)


def test_a_changed_mtime_is_rehashed(kit: Any, installed: Any, tmp_path: Path) -> None:
    cache = DigestCache(tmp_path / "cache.json")
    before = _prov(kit, installed, cache)
    target = installed.site_packages / "demo_plug" / "plugin.py"
    _old_file(target, target.read_bytes()[:-2] + b"#\n")
    os.utime(target, (time.time() - 1800, time.time() - 1800))
    after = _prov(kit, installed, cache)
    assert after.tree_digest != before.tree_digest
    assert after.record_mismatches == ("demo_plug/plugin.py",)


def test_cache_persists_across_instances(kit: Any, shared: Any, tmp_path: Path) -> None:
    path = tmp_path / "cache.json"
    first = _prov(kit, shared, DigestCache(path))
    assert json.loads(path.read_text())["format"] == "reyn-digest-cache-v1"
    again = DigestCache(path)
    assert _prov(kit, shared, again) == first
    assert again.misses == 0 and again.hits > 0


@pytest.mark.parametrize(
    "content",
    [
        b"\x00\xffnot json at all",
        b"[1, 2, 3]",
        b'{"format": "other", "entries": {}}',
        b'{"format": "reyn-digest-cache-v1", "entries": []}',
        b"",
    ],
    ids=["garbage", "array", "wrong-format", "entries-not-object", "empty"],
)
def test_corrupt_cache_file_is_ignored_and_replaced(
    kit: Any, shared: Any, tmp_path: Path, content: bytes
) -> None:
    path = tmp_path / "cache.json"
    path.write_bytes(content)
    rec = _prov(kit, shared, DigestCache(path))
    assert rec.tree_digest == _prov(kit, shared, None).tree_digest
    assert json.loads(path.read_text())["format"] == "reyn-digest-cache-v1"


def test_malformed_entries_are_skipped_and_good_ones_kept(tmp_path: Path) -> None:
    good = _old_file(tmp_path / "good.txt", b"good")
    bad = _old_file(tmp_path / "bad.txt", b"bad")
    st = good.stat()
    fake = "f" * 64  # a poisoned hash for the bad entry would be used if its shape were accepted
    path = tmp_path / "cache.json"
    path.write_text(
        json.dumps(
            {
                "format": "reyn-digest-cache-v1",
                "entries": {
                    str(good): [st.st_size, st.st_mtime_ns, hashlib.sha256(b"good").hexdigest()],
                    str(bad): ["3", bad.stat().st_mtime_ns, fake],
                    "/x": [1, 2, "not-hex"],
                },
            }
        )
    )
    path.chmod(0o600)  # a cache file is read only when private, whatever the umask
    cache = DigestCache(path)
    assert cache.sha256(good) == hashlib.sha256(b"good").hexdigest() and cache.hits == 1
    assert cache.sha256(bad) == hashlib.sha256(b"bad").hexdigest() and cache.misses == 1


def test_recently_modified_files_are_not_cached(tmp_path: Path) -> None:
    fresh = tmp_path / "fresh.txt"
    fresh.write_bytes(b"just written")
    cache = DigestCache()
    cache.sha256(fresh)
    cache.sha256(fresh)
    assert (cache.hits, cache.misses) == (0, 2)
    old = _old_file(tmp_path / "old.txt", b"old")
    cache.sha256(old)
    cache.sha256(old)
    assert (cache.hits, cache.misses) == (1, 3)


def test_in_memory_cache_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    cache = DigestCache()
    cache.sha256(_old_file(tmp_path / "a.txt", b"a"))
    cache.save()
    assert sorted(os.listdir(tmp_path)) == ["a.txt"]


def test_unwritable_cache_location_is_not_an_error(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache folder should be")
    cache = DigestCache(blocker / "reyn" / "digests.json")
    assert cache.sha256(_old_file(tmp_path / "a.txt", b"a")) == hashlib.sha256(b"a").hexdigest()
    cache.save()  # silently skipped
    assert blocker.read_text().startswith("a file")


def test_save_merges_with_other_processes_and_drops_deleted_files(tmp_path: Path) -> None:
    path = tmp_path / "cache.json"
    a, b = DigestCache(path), DigestCache(path)
    fa = _old_file(tmp_path / "a.txt", b"a")
    fb = _old_file(tmp_path / "b.txt", b"b")
    gone = _old_file(tmp_path / "gone.txt", b"gone")
    a.sha256(fa)
    a.sha256(gone)
    a.save()
    b.sha256(fb)
    gone.unlink()
    b.save()
    entries = json.loads(path.read_text())["entries"]
    assert set(entries) == {str(fa), str(fb)}
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]  # atomic write left no temp file


def test_default_cache_lives_in_the_user_cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REYN_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    cache = DigestCache.default()
    assert cache.path == tmp_path / "xdg" / "reyn" / "digests.json"
    assert DigestCache.default() is cache
    cache.sha256(_old_file(tmp_path / "a.txt", b"a"))
    cache.save()
    assert cache.path.is_file()
    assert (cache.path.parent.stat().st_mode & 0o777) == 0o700


def test_unreadable_installed_file_is_reported_not_raised(kit: Any, installed: Any) -> None:
    target = installed.site_packages / "demo_plug" / "data" / "notes.txt"
    target.unlink()
    target.mkdir()  # a directory where RECORD says a file is: reading it fails
    rec = _prov(kit, installed, DigestCache())
    assert "demo_plug/data/notes.txt" in rec.record_mismatches
    assert any("cannot read demo_plug/data/notes.txt" in p for p in rec.problems)


def _forged_cache_file(path: Path, target: Path) -> None:
    """A cache file saying ``target``'s size and mtime have a hash its bytes do not have."""
    st = target.stat()
    entries = {str(target): [st.st_size, st.st_mtime_ns, "f" * 64]}
    path.write_text(json.dumps({"format": "reyn-digest-cache-v1", "entries": entries}))
    path.chmod(0o600)


def _group_writable(path: Path) -> None:
    path.chmod(0o660)


def _world_writable(path: Path) -> None:
    path.chmod(0o646)


def _a_link(path: Path) -> None:
    planted = path.with_name("planted.json")
    path.rename(planted)
    path.symlink_to(planted)


@pytest.mark.skipif(os.name != "posix", reason="owner and mode bits are checked on POSIX only")
@pytest.mark.parametrize("plant", [_group_writable, _world_writable, _a_link], ids=lambda f: f.__name__[1:])
def test_a_cache_file_someone_else_could_write_is_not_believed(tmp_path: Path, plant: Any) -> None:
    target = _old_file(tmp_path / "module.py", b"the bytes on disk")
    path = tmp_path / "digests.json"
    _forged_cache_file(path, target)
    plant(path)
    cache = DigestCache(path)
    assert cache.sha256(target) == hashlib.sha256(b"the bytes on disk").hexdigest()
    assert (cache.hits, cache.misses) == (0, 1)
    assert cache.disk_miss is not None and str(path) in cache.disk_miss
    cache.save()  # the forged entry is not carried into the private file written in its place
    assert not path.is_symlink() and path.stat().st_mode & 0o777 == 0o600
    assert json.loads(path.read_text())["entries"][str(target)][2] == cache.sha256(target)


def test_a_private_cache_file_is_believed_which_is_the_boundary(tmp_path: Path) -> None:
    # The counterpart: the user who owns the cache can forge it, as they can change the plugin.
    target = _old_file(tmp_path / "module.py", b"the bytes on disk")
    path = tmp_path / "digests.json"
    _forged_cache_file(path, target)
    cache = DigestCache(path)
    assert cache.sha256(target) == "f" * 64 and cache.hits == 1 and cache.disk_miss is None


def test_a_cache_file_over_the_bound_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import reyn_core.loading.step3_provenance.cache as module

    target = _old_file(tmp_path / "module.py", b"the bytes on disk")
    path = tmp_path / "digests.json"
    _forged_cache_file(path, target)
    monkeypatch.setattr(module, "MAX_FILE_BYTES", path.stat().st_size - 1)
    cache = DigestCache(path)
    assert cache.sha256(target) == hashlib.sha256(b"the bytes on disk").hexdigest() and cache.hits == 0
    assert cache.disk_miss is not None and "larger than" in cache.disk_miss


def test_saved_cache_file_and_the_folders_reyn_made_are_private(tmp_path: Path) -> None:
    cache = DigestCache(tmp_path / "made" / "for" / "reyn" / "digests.json")
    cache.sha256(_old_file(tmp_path / "a.txt", b"a"))
    cache.save()
    assert cache.path is not None and cache.path.stat().st_mode & 0o777 == 0o600
    for folder in (tmp_path / "made", tmp_path / "made" / "for", cache.path.parent):
        assert folder.stat().st_mode & 0o777 == 0o700, folder


def test_save_false_defers_the_write_to_one_save(kit: Any, shared: Any, tmp_path: Path) -> None:
    """A caller computing several records (a load) saves the cache once, and loses nothing by it."""
    path = tmp_path / "cache.json"
    cache = DigestCache(path)
    first = provenance_for(
        kit.dist_in(shared.site_packages),
        plugin_id="demo",
        entry_point="demo_plug.plugin",
        cache=cache,
        save=False,
    )
    assert not path.exists()
    cache.save()
    again = DigestCache(path)
    assert _prov(kit, shared, again) == first
    assert again.misses == 0 and again.hits > 0


def test_a_load_saves_every_enabled_plugins_digests(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One write per load (not one per plugin) still persists every plugin's digests: computing
    the same records again from the saved file hashes nothing."""
    from importlib.metadata import distribution

    from reyn_core.loading.loader import load
    from reyn_core.loading.step1_profile.profile import Profile

    monkeypatch.setenv("REYN_CACHE_DIR", str(tmp_path / "cache"))
    result = load(Profile.from_toml_text('[plugins]\nenable = ["file", "memory"]\n'))
    loaded = [p for p in result.report.plugins if p.enabled]
    assert [(p.plugin_id, p.status) for p in loaded] == [("file", "loaded"), ("memory", "loaded")]
    records = [p.provenance for p in loaded]
    fresh = DigestCache(tmp_path / "cache" / "digests.json")
    for rec in records:
        assert rec is not None
        again = provenance_for(
            distribution(rec.distribution), plugin_id=rec.plugin_id, entry_point=rec.entry_point, cache=fresh
        )
        assert again.tree_digest == rec.tree_digest
    assert fresh.misses == 0 and fresh.hits >= sum(len(rec.files) for rec in records if rec is not None)
