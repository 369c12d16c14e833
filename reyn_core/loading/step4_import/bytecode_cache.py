"""Reyn's own bytecode cache for verified plugin modules: each entry sealed by the installation's key.

``verified_import`` compiles each module of a verified plugin from the bytes it has just read and
hash-checked. Compiling the six capability packs' sources is most of a warm start's import time, so
the compiled code is kept — but never in the plugin's ``__pycache__`` (anyone who can write the
plugin's tree can plant a ``.pyc`` there, and a ``.pyc`` header names the source's mtime and size,
or a hash Python does not check by default).

An entry is trusted only because it carries an HMAC-SHA256, under the installation's key
(``argument_key.installation_key``: 32 random bytes in a private file), over what it was compiled
from — the source's sha256, its path, the interpreter's version and magic number, the optimisation
level and the ``-X`` options — and the marshalled code itself. A folder or file that someone else
could write is therefore not enough to plant code: an entry made without the key, or moved to the
name of other bytes, fails its seal and is compiled again (a miss, never an error). So what runs is
code compiled from exactly the hashed bytes, by this installation. Without a usable key nothing is
read or written: every module is compiled.

``REYN_BYTECODE_CACHE=off`` compiles every time and stores nothing. ``python -B`` /
``PYTHONDONTWRITEBYTECODE`` do not turn it off: they keep ``.pyc`` files out of source folders, and
this cache writes only to Reyn's own cache folder.
"""

from __future__ import annotations

import hashlib
import hmac
import importlib.util
import marshal
import os
import sys
from pathlib import Path
from types import CodeType

from reyn_core.loading.userdirs import CacheMiss, read_private, user_cache_dir, write_private

_FORMAT = b"reyn-bytecode-v3\n"
_SEAL_BYTES = 32  # HMAC-SHA256 of the compilation's inputs and the marshalled code, after the format line
MAX_ENTRY_BYTES = 16 * 1024 * 1024
"""An entry larger than this is not read (a miss)."""


def cache_enabled() -> bool:
    """False when ``REYN_BYTECODE_CACHE`` is ``off`` (or ``0``/``false``/``no``)."""
    return os.environ.get("REYN_BYTECODE_CACHE", "").strip().lower() not in ("off", "0", "false", "no")


def _inputs(source_sha256: str, path: str) -> bytes:
    """Everything the compiled code depends on besides the source bytes (named by their sha256)."""
    parts = (
        importlib.util.MAGIC_NUMBER,
        sys.version.encode(),
        str(sys.flags.optimize).encode(),
        repr(sorted(sys._xoptions.items())).encode(),  # -X no_debug_ranges changes the code objects
        path.encode("utf-8", "surrogateescape"),
        source_sha256.encode("ascii"),
    )
    return b"".join(part + b"\0" for part in parts)


def entry_path(source_sha256: str, path: str) -> Path:
    """Where the code compiled from a file with these bytes at this path is cached."""
    key = hashlib.sha256(_FORMAT + _inputs(source_sha256, path)).hexdigest()
    return user_cache_dir() / "bytecode" / key[:2] / f"{key}.bin"


def compile_source(data: bytes, path: str, source_sha256: str) -> CodeType:
    """Code compiled from ``data`` (the bytes whose sha256 is ``source_sha256``) as the import system
    compiles a source file, from Reyn's private cache when it holds this exact compilation, sealed by
    this installation's key."""
    key = _key() if cache_enabled() else None
    if key is None:
        return _compile(data, path)
    inputs = _inputs(source_sha256, path)
    entry = entry_path(source_sha256, path)
    code = _read_entry(entry, key, inputs)
    if code is not None:
        return code
    code = _compile(data, path)
    try:
        payload = marshal.dumps(code)
        write_private(entry, _FORMAT + _seal(key, inputs, payload) + payload, durable=False)
    except (OSError, ValueError):  # the cache only saves time
        pass
    return code


def _key() -> bytes | None:
    from reyn_core.loading.argument_key import ArgumentKeyError, installation_key

    try:
        return installation_key()
    except ArgumentKeyError:  # no usable key: nothing is sealed, so nothing is read or written
        return None


def _seal(key: bytes, inputs: bytes, payload: bytes | memoryview) -> bytes:
    mac = hmac.new(key, inputs, hashlib.sha256)
    mac.update(payload)
    return mac.digest()


def _compile(data: bytes, path: str) -> CodeType:
    code: CodeType = compile(data, path, "exec", dont_inherit=True)
    return code


def _read_entry(entry: Path, key: bytes, inputs: bytes) -> CodeType | None:
    try:
        blob = read_private(entry, MAX_ENTRY_BYTES)
    except CacheMiss:
        return None
    start = len(_FORMAT) + _SEAL_BYTES
    if len(blob) < start or not blob.startswith(_FORMAT):
        return None
    payload = memoryview(blob)[start:]
    if not hmac.compare_digest(_seal(key, inputs, payload), blob[len(_FORMAT) : start]):
        return None  # not sealed by this installation for these inputs (planted, moved, torn): compiled
    try:
        code = marshal.loads(payload)
    except (EOFError, ValueError, TypeError):
        return None
    return code if isinstance(code, CodeType) else None


__all__ = ["MAX_ENTRY_BYTES", "cache_enabled", "compile_source", "entry_path"]
