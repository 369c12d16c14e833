"""The installer's ``RECORD``: which files a distribution installed in site-packages, and their hashes."""

from __future__ import annotations

import base64
import binascii
import csv
import hashlib
import io
import os
import posixpath
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from reyn_core.loading.step3_provenance.source_walk import BYTECODE_SUFFIXES, walk_source

# Written by the installer, not the wheel: they differ between two installs of the same wheel.
INSTALLER_FILES = frozenset({"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"})


@dataclass(frozen=True, slots=True)
class RecordEntry:
    rel: str  # normalised, relative to site-packages, forward slashes
    abspath: str
    algorithm: str | None
    expected_hex: str | None


def parse_record(text: str, site: str) -> tuple[list[RecordEntry], list[str]]:
    """RECORD rows inside site-packages (others, like console scripts, are dropped) and problems."""
    entries: list[RecordEntry] = []
    problems: list[str] = []
    for row in csv.reader(io.StringIO(text)):
        if not row or not row[0]:
            continue
        rel = inside(site, row[0])
        if rel is None:
            continue
        algorithm = expected = None
        if len(row) > 1 and row[1]:
            algorithm, _, b64 = row[1].partition("=")
            try:
                expected = base64.urlsafe_b64decode(b64 + "=" * (-len(b64) % 4)).hex()
            except (binascii.Error, ValueError):
                problems.append(f"RECORD has a malformed hash for {rel}")
            if algorithm not in hashlib.algorithms_guaranteed:
                problems.append(f"RECORD uses an unknown hash algorithm {algorithm!r} for {rel}")
                algorithm = expected = None
        entries.append(RecordEntry(rel, os.path.join(site, rel), algorithm, expected))
    return entries, problems


def inside(site: str, path: str) -> str | None:
    """``path`` relative to ``site`` with forward slashes, or None when it lies outside."""
    norm = posixpath.normpath(path.replace("\\", "/"))
    if not (
        norm.startswith("/") or norm == ".." or norm.startswith("../") or (len(norm) > 1 and norm[1] == ":")
    ):
        return None if norm == "." else norm  # the usual case: a plain relative path, no I/O
    full = os.path.normpath(os.path.join(site, path))
    try:
        if os.path.commonpath([site, full]) != site:
            return None
    except ValueError:  # different drives on Windows
        return None
    rel = os.path.relpath(full, site)
    return None if rel == "." else rel.replace(os.sep, "/")


def is_bytecode(rel: str) -> bool:
    return rel.endswith(BYTECODE_SUFFIXES) or "__pycache__" in rel.split("/")


def is_installer_file(rel: str) -> bool:
    parts = rel.split("/")
    return len(parts) == 2 and parts[0].endswith((".dist-info", ".egg-info")) and parts[1] in INSTALLER_FILES


# Files Python's import system can load as a module: source, bytecode, extension modules.
MODULE_SUFFIXES = (".py", *BYTECODE_SUFFIXES, ".so", ".pyd")


def import_locations(rels: Iterable[str]) -> dict[str, str]:
    """Every top-level import name a listing of files installs, and where: ``{name: path}`` with
    ``path`` relative to the folder the listing is relative to (site-packages) — the package folder
    (``pkg``) or the module file (always ``name.py``, even when only bytecode or an extension module
    of it is listed).

    The names come from the files themselves, never from metadata a wheel may or may not ship
    (``top_level.txt``): a top-level folder holding any module file at any depth is a package
    (regular or namespace), a top-level module file (or its ``__pycache__`` bytecode) is a module.
    Listing bytecode or native code makes the name the distribution's too, so the verified finder
    owns it and refuses those files rather than leaving the name to Python's normal import."""
    found: dict[str, str] = {}
    for rel in rels:
        if not rel.endswith(MODULE_SUFFIXES):
            continue
        first, _, rest = rel.partition("/")
        if first == "__pycache__" and "/" not in rest:
            first, rest = rest, ""  # a top-level module's bytecode: ``__pycache__/m.cpython-311.pyc``
        if rest:
            if first.isidentifier():
                found[first] = first  # a package folder comes before a module of the same name
        else:
            stem = first.partition(".")[0]
            if stem.isidentifier():
                found.setdefault(stem, stem + ".py")
    return found


def unlisted_files(entries: list[RecordEntry], site: str) -> Iterator[tuple[str, str]]:
    """Files inside the distribution's own regular packages that RECORD does not list."""
    listed = {e.rel for e in entries}
    packages = sorted(
        {e.rel.split("/", 1)[0] for e in entries if e.rel.count("/") == 1 and e.rel.endswith("/__init__.py")}
    )
    for pkg in packages:
        if pkg.endswith((".dist-info", ".egg-info", ".data")):
            continue
        for rel, path in walk_source(pkg, os.path.join(site, pkg)):
            if rel not in listed:
                yield rel, path


__all__ = [
    "INSTALLER_FILES",
    "MODULE_SUFFIXES",
    "RecordEntry",
    "import_locations",
    "inside",
    "is_bytecode",
    "is_installer_file",
    "parse_record",
    "unlisted_files",
]
