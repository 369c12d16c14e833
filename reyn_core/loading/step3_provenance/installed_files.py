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


def installed_location(entries: Iterable[RecordEntry], site: str, top: str) -> str | None:
    """Where RECORD installs import name ``top`` in site-packages: its package folder, ``top.py``
    or an extension module; None when RECORD does not install it."""
    module = None
    for e in entries:
        first, _, rest = e.rel.partition("/")
        if rest and first == top and not is_bytecode(e.rel):
            return os.path.join(site, top)
        if not rest and (
            first == f"{top}.py" or (first.startswith(f"{top}.") and first.endswith((".so", ".pyd")))
        ):
            module = os.path.join(site, first)
    return module


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
    "RecordEntry",
    "inside",
    "installed_location",
    "is_bytecode",
    "is_installer_file",
    "parse_record",
    "unlisted_files",
]
