"""The tree digest: sha256 of files, and the one digest over a sorted listing of ``(path, sha256)``."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path

DIGEST_VERSION = "reyn-tree-digest-v1"
"""The first line of the canonical listing. A change to the listing rules gets a new tag."""

_CHUNK = 1 << 20


def tree_digest(files: Iterable[tuple[str, str]]) -> str:
    """The digest of a listing of ``(relative path, sha256 hex)``: the one definition of the algorithm.

    The listing is sorted here, so callers may pass it in any order. Paths never contain NUL and the
    hash is fixed-length hex, so the encoding is unambiguous even for paths containing newlines.
    """
    h = hashlib.sha256()
    h.update(DIGEST_VERSION.encode() + b"\n")
    for path, hexdigest in sorted(files):
        h.update(path.encode("utf-8", "surrogateescape") + b"\0" + hexdigest.encode("ascii") + b"\n")
    return "sha256:" + h.hexdigest()


def hash_file(path: str | Path, algorithm: str = "sha256") -> str:
    """Hex digest of a file's bytes, read in chunks."""
    h = hashlib.new(algorithm)
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def is_sha256_hex(value: str) -> bool:
    """Whether ``value`` is 64 lowercase hex digits."""
    # str.strip in C instead of a per-character generator
    return len(value) == 64 and value.isascii() and not value.strip("0123456789abcdef")


__all__ = ["DIGEST_VERSION", "hash_file", "is_sha256_hex", "tree_digest"]
