"""Files in a plugin's tree that Reyn never executes: bytecode, extension modules, ``.pth`` files.

The loader compiles every module of a verified plugin from its digested source (``verified_import``),
so none of these can run; ``reyn plugins audit`` still names each one, because a ``.pyc`` that no
installer or Reyn wrote, or a sourceless one, is a sign that someone planted it — and it *would*
run if the package were imported outside Reyn. Only file names and the 16-byte ``.pyc`` header are
read: a planted file's body is never unmarshalled.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass

from reyn_core.loading.step3_provenance.record import ProvenanceRecord
from reyn_core.loading.step3_provenance.source_walk import BYTECODE_SUFFIXES, VCS_DIRS

_EXTENSION_SUFFIXES = tuple(dict.fromkeys((*importlib.machinery.EXTENSION_SUFFIXES, ".so", ".pyd")))


@dataclass(frozen=True, slots=True)
class InertFile:
    """A file in a plugin's tree that Reyn never executes, and what it is."""

    plugin_id: str
    path: str
    kind: str  # "bytecode", "sourceless bytecode", "extension module", "pth file"
    detail: str


def inert_files(rec: ProvenanceRecord) -> Iterator[InertFile]:
    """Every bytecode file, extension module and ``.pth`` file under ``rec``'s import locations."""
    for top, location in rec.module_locations:
        if not os.path.isdir(location):
            yield from _beside_module(rec.plugin_id, top, os.path.dirname(location))
            continue
        seen: set[str] = set()
        for dirpath, dirnames, filenames in os.walk(location, followlinks=True):
            real = os.path.realpath(dirpath)
            if real in seen:
                dirnames[:] = []
                continue
            seen.add(real)
            dirnames[:] = sorted(d for d in dirnames if d not in VCS_DIRS)
            for name in sorted(filenames):
                found = _classify(rec.plugin_id, os.path.join(dirpath, name))
                if found is not None:
                    yield found


def _beside_module(plugin_id: str, top: str, folder: str) -> Iterator[InertFile]:
    """For a single-module plugin (``top.py``): its bytecode and a same-named extension module."""
    cache = os.path.join(folder, "__pycache__")
    candidates = [os.path.join(folder, top + s) for s in (*_EXTENSION_SUFFIXES, ".pyc", ".pyo")]
    try:
        candidates += [os.path.join(cache, n) for n in sorted(os.listdir(cache)) if n.startswith(top + ".")]
    except OSError:
        pass
    for path in candidates:
        found = _classify(plugin_id, path) if os.path.isfile(path) else None
        if found is not None:
            yield found


def _classify(plugin_id: str, path: str) -> InertFile | None:
    name = os.path.basename(path)
    if name.endswith(BYTECODE_SUFFIXES) or os.path.basename(os.path.dirname(path)) == "__pycache__":
        source = _source_of(path)
        if source is None or not os.path.isfile(source):
            return InertFile(plugin_id, path, "sourceless bytecode", f"no source file; {_pyc_header(path)}")
        header = _pyc_header(path, source)
        return InertFile(plugin_id, path, "bytecode", f"{header}; Reyn compiles {source} instead")
    if name.endswith(_EXTENSION_SUFFIXES):
        return InertFile(
            plugin_id, path, "extension module", "native code is never loaded from a verified plugin's tree"
        )
    if name.endswith(".pth"):
        return InertFile(plugin_id, path, "pth file", "Python processes .pth files only in site folders")
    return None


def _source_of(path: str) -> str | None:
    """The ``.py`` a ``.pyc`` was compiled from (PEP 3147 ``__pycache__`` or legacy layout)."""
    if not path.endswith(".pyc"):
        return path[: -len(".pyo")] + ".py" if path.endswith(".pyo") else None
    try:
        return importlib.util.source_from_cache(path)
    except ValueError:  # not a PEP 3147 name: a legacy ``x.pyc`` next to where ``x.py`` would be
        if os.path.basename(os.path.dirname(path)) == "__pycache__":
            return None
        return path[: -len(".pyc")] + ".py"


def _pyc_header(path: str, source: str | None = None) -> str:
    """What the 16-byte header of a ``.pyc`` says (PEP 552), without reading its code; for a
    timestamp header, whether it names ``source``'s current mtime and size (Python would run it)."""
    try:
        with open(path, "rb") as f:
            head = f.read(16)
    except OSError as exc:
        return f"unreadable ({exc.strerror or exc})"
    if len(head) < 16:
        return "truncated header"
    magic = "this Python's" if head[:4] == importlib.util.MAGIC_NUMBER else "another Python's"
    (flags,) = struct.unpack("<I", head[4:8])
    if flags & 0b1:
        kind = "checked hash-based" if flags & 0b10 else "unchecked hash-based"
    else:
        mtime, size = struct.unpack("<II", head[8:16])
        kind = f"timestamp-based (source mtime {mtime}, size {size}"
        try:
            st = os.stat(source) if source else None
        except OSError:
            st = None
        if st is not None:
            same = (int(st.st_mtime) & 0xFFFFFFFF, st.st_size & 0xFFFFFFFF) == (mtime, size)
            kind += ": matches the source" if same else ": stale, the source differs"
        kind += ")"
    return f"{kind} header, {magic} magic number"


__all__ = ["InertFile", "inert_files"]
