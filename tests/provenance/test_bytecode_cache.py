"""Reyn's bytecode cache: an entry is used only when its seal — an HMAC under the installation's key over
what it was compiled from and the code — matches, so an entry planted without the key, moved to the name
of other bytes, or torn by a power loss is compiled again, never run."""

from __future__ import annotations

import hashlib
import marshal
import os
from collections.abc import Callable
from pathlib import Path
from types import CodeType

import pytest

from reyn_core.loading.argument_key import installation_key
from reyn_core.loading.step4_import import bytecode_cache
from reyn_core.loading.step4_import.bytecode_cache import compile_source, entry_path

SOURCE = b"ANSWER = 41 + 1\n"
PATH = "/plugins/demo_plug/answer.py"


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("REYN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("REYN_ARGUMENT_KEY_FILE", str(tmp_path / "config" / "argument-hash.key"))
    monkeypatch.delenv("REYN_BYTECODE_CACHE", raising=False)
    return tmp_path / "cache"


def _run(code: CodeType) -> object:
    namespace: dict[str, object] = {}
    exec(code, namespace)
    return namespace["ANSWER"]


def _entry() -> Path:
    return entry_path(hashlib.sha256(SOURCE).hexdigest(), PATH)


def _compile() -> CodeType:
    return compile_source(SOURCE, PATH, hashlib.sha256(SOURCE).hexdigest())


def _planted(code: CodeType, key: bytes | None) -> bytes:
    """An entry holding ``code`` for SOURCE at PATH: sealed with ``key``, or (None) with a plain
    sha256 of the code, as anyone who can write the folder could make it."""
    payload = marshal.dumps(code)
    if key is None:
        seal = hashlib.sha256(payload).digest()
    else:
        inputs = bytecode_cache._inputs(hashlib.sha256(SOURCE).hexdigest(), PATH)
        seal = bytecode_cache._seal(key, inputs, payload)
    return b"reyn-bytecode-v3\n" + seal + payload


def test_an_entry_sealed_by_the_installation_is_what_the_next_import_runs() -> None:
    """Positive control: the cache is read, and what it holds runs — so only the key's holder may
    write an entry: one sealed with the installation's key holding other code is run as it stands."""
    assert _run(_compile()) == 42
    entry = _entry()
    assert entry.stat().st_mode & 0o777 == 0o600
    assert entry.read_bytes().split(b"\n", 1)[0] == b"reyn-bytecode-v3"
    entry.write_bytes(_planted(compile(b"ANSWER = 7\n", PATH, "exec", dont_inherit=True), installation_key()))
    assert _run(_compile()) == 7


def test_an_entry_planted_without_the_key_is_never_run() -> None:
    """A private, whole entry (its checksum right) holding other code, written by someone who can
    write the cache folder but does not hold the key, fails its seal: the source is compiled."""
    assert _run(_compile()) == 42
    _entry().write_bytes(_planted(compile(b"ANSWER = 7\n", PATH, "exec", dont_inherit=True), None))
    assert _run(_compile()) == 42


def test_an_entry_moved_to_the_name_of_other_bytes_is_never_run() -> None:
    """Another module's genuine entry, renamed to this source's name, is sealed for other inputs."""
    other_source = b"ANSWER = 7\n"
    compile_source(other_source, PATH, hashlib.sha256(other_source).hexdigest())
    other_entry = entry_path(hashlib.sha256(other_source).hexdigest(), PATH)
    _entry().parent.mkdir(parents=True, exist_ok=True)
    os.replace(other_entry, _entry())
    assert _run(_compile()) == 42


def test_without_a_usable_key_nothing_is_cached(tmp_path: Path) -> None:
    """A key file others can read is refused (``ArgumentKeyError``): every module is compiled and
    no entry is written or read. Control: the first test writes one with the key."""
    key_file = tmp_path / "config" / "argument-hash.key"
    key_file.parent.mkdir(parents=True)
    key_file.write_bytes(b"k" * 32)
    key_file.chmod(0o644)
    assert _run(_compile()) == 42
    assert not _entry().exists()


def _truncated(blob: bytes) -> bytes:
    return blob[: len(blob) // 2]


def _zeroed(blob: bytes) -> bytes:
    return b"\0" * len(blob)


def _flipped(blob: bytes) -> bytes:
    return blob[:-1] + bytes([blob[-1] ^ 0x01])


def _empty(blob: bytes) -> bytes:
    return b""


def _header_only(blob: bytes) -> bytes:
    return blob.split(b"\n", 1)[0] + b"\n"


@pytest.mark.parametrize("damage", [_truncated, _zeroed, _flipped, _empty, _header_only])
def test_a_torn_or_garbled_entry_is_compiled_again_and_rewritten(damage: Callable[[bytes], bytes]) -> None:
    assert _run(_compile()) == 42
    entry = _entry()
    whole = entry.read_bytes()
    entry.write_bytes(damage(whole))
    os.chmod(entry, 0o600)
    assert _run(_compile()) == 42  # from the source, not from the damaged bytes
    assert entry.read_bytes() == whole  # and the entry is whole again
    assert _run(_compile()) == 42
