"""Walking an import package's source tree: which files a ``source-tree`` digest covers."""

from __future__ import annotations

import os
from collections.abc import Iterator

VCS_DIRS = frozenset({".git", ".hg", ".svn", ".bzr"})
# Skipped in a source tree: tool caches and build output (``build``/``dist`` only when they are not
# Python packages themselves, since a package may well have a ``build`` subpackage).
CACHE_DIRS = frozenset(
    {"__pycache__", ".eggs", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache"}
)
BUILD_DIRS = frozenset({"build", "dist"})
BYTECODE_SUFFIXES = (".pyc", ".pyo")


def walk_source(top: str, location: str) -> Iterator[tuple[str, str]]:
    """``(path as it would be installed, file)`` for a package's source tree or a single module."""
    if os.path.isfile(location):
        yield os.path.basename(location), location
        return
    seen: set[str] = set()
    for dirpath, dirnames, filenames in os.walk(location, followlinks=True):
        real = os.path.realpath(dirpath)
        if real in seen:  # a symlink loop
            dirnames[:] = []
            continue
        seen.add(real)
        dirnames[:] = sorted(d for d in dirnames if not skip_source_dir(dirpath, d))
        rel_dir = "" if dirpath == location else os.path.relpath(dirpath, location).replace(os.sep, "/") + "/"
        for filename in sorted(filenames):
            if not filename.endswith(BYTECODE_SUFFIXES):
                yield f"{top}/{rel_dir}{filename}", os.path.join(dirpath, filename)


def skip_source_dir(parent: str, name: str) -> bool:
    if name in VCS_DIRS or name in CACHE_DIRS or name.endswith(".egg-info"):
        return True
    return name in BUILD_DIRS and not os.path.exists(os.path.join(parent, name, "__init__.py"))


__all__ = ["BUILD_DIRS", "BYTECODE_SUFFIXES", "CACHE_DIRS", "VCS_DIRS", "walk_source"]
