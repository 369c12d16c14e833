"""``atomic_write_bytes``, the one writer of a file Reyn replaces: the file keeps its identity (a
link stays a link and the file it names gets the bytes; the mode stays), a new file gets the mode
any new file gets, and a private file is ``0o600`` whatever the umask — on real files."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from reyn_core.host import atomic_write_bytes
from reyn_core.loading.userdirs import write_private


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_link_stays_a_link_and_the_file_it_names_gets_the_bytes(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "config.json"
    real.parent.mkdir()
    real.write_bytes(b"old")
    link = tmp_path / "config.json"
    link.symlink_to(real)
    atomic_write_bytes(link, b"new", through_link=True)
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_bytes() == b"new"
    assert sorted(p.name for p in real.parent.iterdir()) == ["config.json"]  # no temporary file left


def test_a_link_to_a_link_reaches_the_last_file(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.write_bytes(b"old")
    (tmp_path / "middle").symlink_to(real)
    (tmp_path / "first").symlink_to(tmp_path / "middle")
    atomic_write_bytes(tmp_path / "first", b"new", through_link=True)
    assert (tmp_path / "first").is_symlink() and (tmp_path / "middle").is_symlink()
    assert real.read_bytes() == b"new"


@pytest.mark.parametrize("victim_exists", [True, False])
def test_a_link_is_replaced_not_followed_unless_the_caller_read_through_it(tmp_path, victim_exists):
    # A cloned project plants `reyn.lock -> ~/.bashrc`: writing the lock must not overwrite the
    # victim (nor create it when missing). Control: the same write with through_link, of a file that
    # exists, goes through the link (the test above); a dangling link is replaced even then.
    victim = tmp_path / "home" / ".bashrc"
    victim.parent.mkdir()
    if victim_exists:
        victim.write_bytes(b"precious")
    for through in (False, True):
        lock = tmp_path / f"reyn-{through}.lock"
        lock.symlink_to(victim)
        atomic_write_bytes(lock, b"lock text", through_link=through)
        followed = through and victim_exists
        assert lock.is_symlink() is followed
        assert lock.read_bytes() == b"lock text"
        if not followed:  # the victim is as it was: untouched, or still absent
            assert (victim.read_bytes() if victim.exists() else None) == (
                b"precious" if victim_exists else None
            )
    assert victim.exists() is victim_exists
    if victim_exists:
        assert victim.read_bytes() == b"lock text"  # only the through_link write, of an existing file


@pytest.mark.parametrize("kept", [0o664, 0o640, 0o600, 0o755])
def test_an_existing_file_keeps_its_mode(tmp_path: Path, kept: int, umask) -> None:
    path = tmp_path / "reyn.toml"
    path.write_bytes(b"old")
    path.chmod(kept)
    with umask(0o077):  # the umask decides only a new file's mode
        atomic_write_bytes(path, b"new")
    assert path.read_bytes() == b"new" and mode(path) == kept


@pytest.mark.parametrize(("mask", "expected"), [(0o022, 0o644), (0o002, 0o664), (0o027, 0o640)])
def test_a_new_file_gets_the_mode_the_umask_gives(tmp_path: Path, mask: int, expected: int, umask) -> None:
    path = tmp_path / "reyn.lock"
    with umask(mask):
        atomic_write_bytes(path, b"new")
        control = tmp_path / "control"
        control.write_bytes(b"")  # positive control: what open() makes under the same umask
    assert mode(path) == expected == mode(control)


@pytest.mark.parametrize("mask", [0o000, 0o022])
def test_a_private_file_is_0600_whatever_the_umask_and_the_old_mode(tmp_path: Path, mask: int, umask) -> None:
    new, old = tmp_path / "new.key", tmp_path / "old.key"
    old.write_bytes(b"old")
    old.chmod(0o644)
    with umask(mask):
        atomic_write_bytes(new, b"secret", private=True)
        atomic_write_bytes(old, b"secret", private=True)
        write_private(tmp_path / "cache" / "entry", b"cached")  # the caches and the argument key
    assert mode(new) == mode(old) == mode(tmp_path / "cache" / "entry") == 0o600
    assert mode(tmp_path / "cache") == 0o700


def test_a_private_file_replaces_a_link_instead_of_writing_through_it(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_bytes(b"not yours")
    link = tmp_path / "argument-hash.key"
    link.symlink_to(elsewhere)
    atomic_write_bytes(link, b"secret", private=True)
    assert not link.is_symlink() and link.read_bytes() == b"secret" and mode(link) == 0o600
    assert elsewhere.read_bytes() == b"not yours"


def test_a_failed_write_leaves_the_file_and_no_temporary_file(tmp_path: Path) -> None:
    folder = tmp_path / "d"
    folder.mkdir()
    path = folder / "reyn.toml"
    path.write_bytes(b"old")
    (folder / "blocker").mkdir()
    with pytest.raises(IsADirectoryError):
        atomic_write_bytes(folder / "blocker", b"new")  # a folder cannot be replaced by a file
    assert path.read_bytes() == b"old"
    assert sorted(p.name for p in folder.iterdir()) == ["blocker", "reyn.toml"]
