"""Reyn's own bytecode cache for verified plugin modules: keyed by the source's sha256, private.

``verified_import`` compiles each module of a verified plugin from the bytes it has just read and
hash-checked. Compiling the six capability packs' sources is most of a warm start's import time, so
the compiled code is kept — but never in the plugin's ``__pycache__`` (anyone who can write the
plugin's tree can plant a ``.pyc`` there, and a ``.pyc`` header names the source's mtime and size,
or a hash Python does not check by default). The entry's name is a sha256 over the source's sha256,
its path (code objects carry it), the interpreter's magic number and the optimisation level: the
same name can only mean code compiled from those exact bytes, so there is nothing to invalidate.
Like every Reyn cache the file is trusted only when this user alone could have written it
(``userdirs.read_private``); anything else is a miss and the source is compiled.

An entry carries the sha256 of its marshalled code, checked on every read: a torn or garbled entry
(a power loss after an unflushed write) is a miss, never code that runs. That check, not a flush to
disk, is what makes an entry whole, so entries are written without an ``fsync`` (a first run writes
one per module).

``REYN_BYTECODE_CACHE=off`` compiles every time and stores nothing.
"""

from __future__ import annotations

import hashlib
import importlib.util
import marshal
import os
import sys
from pathlib import Path
from types import CodeType

from reyn_core.loading.userdirs import CacheMiss, read_private, user_cache_dir, write_private

_FORMAT = b"reyn-bytecode-v2\n"
_DIGEST_BYTES = 32  # sha256 of the marshalled code, after the format line
MAX_ENTRY_BYTES = 16 * 1024 * 1024
"""An entry larger than this is not read (a miss)."""


def cache_enabled() -> bool:
    """False when ``REYN_BYTECODE_CACHE`` is ``off`` (or ``0``/``false``/``no``)."""
    return os.environ.get("REYN_BYTECODE_CACHE", "").strip().lower() not in ("off", "0", "false", "no")


def entry_path(source_sha256: str, path: str) -> Path:
    """Where the code compiled from a file with these bytes at this path is cached."""
    h = hashlib.sha256(_FORMAT)
    for part in (
        importlib.util.MAGIC_NUMBER,
        str(sys.flags.optimize).encode(),
        path.encode("utf-8", "surrogateescape"),
        source_sha256.encode("ascii"),
    ):
        h.update(part + b"\0")
    key = h.hexdigest()
    return user_cache_dir() / "bytecode" / key[:2] / f"{key}.bin"


def compile_source(data: bytes, path: str, source_sha256: str) -> CodeType:
    """Code compiled from ``data`` (the bytes whose sha256 is ``source_sha256``) as the import system
    compiles a source file, from Reyn's private cache when it holds this exact compilation."""
    if not cache_enabled():
        return _compile(data, path)
    entry = entry_path(source_sha256, path)
    code = _read_entry(entry)
    if code is not None:
        return code
    code = _compile(data, path)
    try:
        payload = marshal.dumps(code)
        write_private(entry, _FORMAT + hashlib.sha256(payload).digest() + payload, durable=False)
    except (OSError, ValueError):  # the cache only saves time
        pass
    return code


def _compile(data: bytes, path: str) -> CodeType:
    code: CodeType = compile(data, path, "exec", dont_inherit=True)
    return code


def _read_entry(entry: Path) -> CodeType | None:
    try:
        blob = read_private(entry, MAX_ENTRY_BYTES)
    except CacheMiss:
        return None
    if not blob.startswith(_FORMAT):
        return None
    start = len(_FORMAT) + _DIGEST_BYTES
    payload = memoryview(blob)[start:]
    if len(blob) < start or hashlib.sha256(payload).digest() != blob[len(_FORMAT) : start]:
        return None  # torn or garbled (written without a flush to disk): compiled again
    try:
        code = marshal.loads(payload)
    except (EOFError, ValueError, TypeError):
        return None
    return code if isinstance(code, CodeType) else None


__all__ = ["MAX_ENTRY_BYTES", "cache_enabled", "compile_source", "entry_path"]
