"""The argument hash is keyed (HMAC-SHA256) with a private per-installation key (issue 27).

Same arguments, same key: the same hash (the audit log and spans stay comparable within an
installation); another key: another hash (an unkeyed guess cannot reproduce it). The key file is
made 0600 on first use, and a key file others could read or write is refused, never used.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import pytest

from reyn_core.dispatch import argument_hash
from reyn_core.jsondata import canonical_json
from reyn_core.loading.argument_key import KEY_BYTES, ArgumentKeyError, installation_key

ARGS = {"answer": "yes"}


def test_same_arguments_same_key_give_the_same_hash(tmp_path: Path) -> None:
    key = installation_key(tmp_path / "k1")
    assert argument_hash(ARGS, key=key) == argument_hash(dict(ARGS), key=installation_key(tmp_path / "k1"))


def test_another_key_gives_another_hash(tmp_path: Path) -> None:
    one, two = installation_key(tmp_path / "k1"), installation_key(tmp_path / "k2")
    assert one != two
    assert argument_hash(ARGS, key=one) != argument_hash(ARGS, key=two)


def test_the_hash_is_not_the_unkeyed_sha256(tmp_path: Path) -> None:
    unkeyed = hashlib.sha256(canonical_json(ARGS).encode()).hexdigest()
    assert unkeyed not in argument_hash(ARGS, key=installation_key(tmp_path / "k"))


def test_the_key_file_is_made_private(tmp_path: Path) -> None:
    path = tmp_path / "new" / "argument-hash.key"
    assert len(installation_key(path)) == KEY_BYTES
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o620, 0o606])
def test_a_key_file_others_can_access_is_refused(tmp_path: Path, mode: int) -> None:
    path = tmp_path / "argument-hash.key"
    path.write_bytes(os.urandom(KEY_BYTES))
    path.chmod(0o600)
    assert len(installation_key(path)) == KEY_BYTES  # positive control: the private file is used
    other = tmp_path / "other.key"
    other.write_bytes(os.urandom(KEY_BYTES))
    other.chmod(mode)
    with pytest.raises(ArgumentKeyError, match="remove it"):
        installation_key(other)
    assert other.read_bytes() and stat.S_IMODE(other.stat().st_mode) == mode  # refused, not replaced


def test_a_linked_or_malformed_key_file_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real.key"
    real.write_bytes(os.urandom(KEY_BYTES))
    real.chmod(0o600)
    link = tmp_path / "link.key"
    link.symlink_to(real)
    with pytest.raises(ArgumentKeyError, match="symbolic link"):
        installation_key(link)
    short = tmp_path / "short.key"
    short.write_bytes(b"abc")
    short.chmod(0o600)
    with pytest.raises(ArgumentKeyError, match="32-byte"):
        installation_key(short)
