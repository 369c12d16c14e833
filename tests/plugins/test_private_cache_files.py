"""Cache files are trusted only when private (``reyn_core.loading.userdirs.read_private``): a regular
file, not a link, owned by this user and writable by no one else, read in one bounded open. Anything
else is a miss — the caller computes what the file would have given — never an error. (Reyn keeps
no digest or schema-check cache any more: tests/provenance/test_no_stored_digest.py shows a forged
``digests.json``, private or not, is never read.)"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reyn_core.loading.userdirs import CacheMiss, read_private, write_private

pytestmark = pytest.mark.skipif(os.name != "posix", reason="owner and mode bits are checked on POSIX only")


def _private(path: Path, data: bytes = b"cached") -> Path:
    path.write_bytes(data)
    path.chmod(0o600)
    return path


def _miss(path: Path, max_bytes: int = 1024) -> CacheMiss:
    with pytest.raises(CacheMiss) as caught:
        read_private(path, max_bytes)
    return caught.value


# --------------------------------------------------------------------------- reading


def test_a_private_file_is_read(tmp_path: Path) -> None:
    assert read_private(_private(tmp_path / "c.json"), 1024) == b"cached"
    assert read_private(_private(tmp_path / "exact.json", b"x" * 1024), 1024) == b"x" * 1024


def test_a_missing_file_is_an_absent_miss(tmp_path: Path) -> None:
    miss = _miss(tmp_path / "nothing.json")
    assert miss.absent and "does not exist" in str(miss)


@pytest.mark.parametrize(("mode", "who"), [(0o620, "group"), (0o602, "others"), (0o666, "group and others")])
def test_a_file_others_can_write_is_a_miss(tmp_path: Path, mode: int, who: str) -> None:
    path = _private(tmp_path / "c.json")
    path.chmod(mode)
    miss = _miss(path)
    assert not miss.absent and f"writable by {who}" in str(miss) and oct(mode) in str(miss)


def test_a_file_readable_by_others_is_still_private(tmp_path: Path) -> None:
    # What matters is who could have written it; 0644 (a umask-022 default) cannot be forged.
    path = _private(tmp_path / "c.json")
    path.chmod(0o644)
    assert read_private(path, 1024) == b"cached"


def test_a_file_owned_by_another_user_is_a_miss(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("giving a file to another user needs root")
    path = _private(tmp_path / "c.json")
    os.chown(path, 54321, 54321)
    assert "owned by uid 54321" in str(_miss(path))


def test_a_link_is_a_miss_even_to_a_private_file(tmp_path: Path) -> None:
    target = _private(tmp_path / "elsewhere.json")
    link = tmp_path / "c.json"
    link.symlink_to(target)
    assert "is a symbolic link" in str(_miss(link))


def test_a_folder_or_a_fifo_is_a_miss_and_a_fifo_does_not_block(tmp_path: Path) -> None:
    (tmp_path / "dir.json").mkdir()
    assert "not a regular file" in str(_miss(tmp_path / "dir.json"))
    os.mkfifo(tmp_path / "fifo.json", 0o600)
    assert "not a regular file" in str(_miss(tmp_path / "fifo.json"))


def test_a_file_over_the_bound_is_a_miss(tmp_path: Path) -> None:
    path = _private(tmp_path / "c.json", b"x" * 1025)
    assert "larger than 1024 bytes" in str(_miss(path, 1024))


# --------------------------------------------------------------------------- writing


def test_a_write_creates_a_private_file_and_private_folders(tmp_path: Path) -> None:
    target = tmp_path / "made" / "by" / "reyn" / "c.json"
    write_private(target, b"data")
    assert target.read_bytes() == b"data"
    assert target.stat().st_mode & 0o777 == 0o600
    for folder in (tmp_path / "made", tmp_path / "made" / "by", target.parent):
        assert folder.stat().st_mode & 0o777 == 0o700, folder
    assert read_private(target, 1024) == b"data"


def test_a_write_leaves_existing_folders_alone(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    write_private(tmp_path / "c.json", b"data")
    assert tmp_path.stat().st_mode & 0o777 == 0o755


def test_a_write_replaces_a_link_instead_of_writing_through_it(tmp_path: Path) -> None:
    target = _private(tmp_path / "elsewhere.json", b"someone else's")
    link = tmp_path / "c.json"
    link.symlink_to(target)
    write_private(link, b"ours")
    assert not link.is_symlink() and link.read_bytes() == b"ours"
    assert target.read_bytes() == b"someone else's"
