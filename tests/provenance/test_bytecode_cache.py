"""Reyn's bytecode cache: an entry is used only when its checksum matches its code, so an entry written
without a flush to disk and torn by a power loss is compiled again, never run."""

from __future__ import annotations

import hashlib
import marshal
import os
from collections.abc import Callable
from pathlib import Path
from types import CodeType

import pytest

from reyn_core.loading.step4_import.bytecode_cache import compile_source, entry_path

SOURCE = b"ANSWER = 41 + 1\n"
PATH = "/plugins/demo_plug/answer.py"


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("REYN_CACHE_DIR", str(tmp_path / "cache"))
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


def test_an_intact_entry_is_what_the_next_import_runs() -> None:
    """Positive control: the cache is read. A whole entry (its checksum right) holding other code is
    run as it stands — which is why the folder must be private, as it is checked to be."""
    assert _run(_compile()) == 42
    entry = _entry()
    blob = entry.read_bytes()
    assert entry.stat().st_mode & 0o777 == 0o600
    header = blob.split(b"\n", 1)[0]
    assert header == b"reyn-bytecode-v2"
    other = compile(b"ANSWER = 7\n", PATH, "exec", dont_inherit=True)
    payload = marshal.dumps(other)
    entry.write_bytes(header + b"\n" + hashlib.sha256(payload).digest() + payload)
    assert _run(_compile()) == 7


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
