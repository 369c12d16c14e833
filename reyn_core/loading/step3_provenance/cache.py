"""The digest cache: sha256 of files keyed by (path, size, mtime_ns), in memory and on disk.

Kept apart from ``provenance`` because it has its own trust boundary (docs/provenance.md, "The
digest cache"): it trusts that a file with the same path, size and mtime_ns has the same bytes, and
it trusts its file on disk only when no one but this user could have written it (``read_private``).
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

from reyn_core.loading.step3_provenance.digest import hash_file, is_sha256_hex
from reyn_core.loading.userdirs import read_private_entries, user_cache_dir, write_private

# Files modified this recently are re-hashed every time (see DigestCache): a second change within
# one timestamp tick would otherwise go unseen.
RACY_NS = 2_000_000_000
MAX_FILE_BYTES = 64 * 1024 * 1024
"""A cache file larger than this is not read (a miss: every file is hashed, and the next save
writes a new one)."""


def default_cache_dir() -> Path:
    """Reyn's user cache dir: ``$REYN_CACHE_DIR``, else ``$XDG_CACHE_HOME/reyn`` or ``~/.cache/reyn``
    (``~/Library/Caches/reyn`` on macOS, ``%LOCALAPPDATA%\\reyn\\Cache`` on Windows)."""
    return user_cache_dir()


_CACHE_FORMAT = "reyn-digest-cache-v1"
_DEFAULT_CACHES: dict[Path, DigestCache] = {}
_DEFAULT_LOCK = threading.Lock()


class DigestCache:
    """sha256 of files keyed by (absolute path, size, mtime_ns), in memory and optionally on disk.

    A hit costs one ``stat`` and no read. Trust boundary: a file whose bytes are replaced while its
    size and mtime_ns are kept (``os.utime`` can set any mtime) is reported with its old hash until the
    cache entry goes; pass ``cache=None`` to ``provenance_for`` (as ``reyn plugins audit`` should)
    to re-hash everything. Files modified less than two seconds before hashing are never cached, so a
    write racing the hash cannot leave a stale entry behind. With a ``path`` the entries persist as
    JSON, written atomically (mode 0600); a missing, unreadable or corrupt file simply starts an empty
    cache, and so does one that is not private (a link, another owner, group- or world-writable):
    a forged digest there would let a changed plugin pass its pin or lock. ``disk_miss`` says why the
    file was not used.
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self.hits = 0
        self.misses = 0
        self._entries: dict[str, tuple[int, int, str]] = {}
        self._dirty: dict[str, tuple[int, int, str]] = {}
        self._loaded = self.path is None
        self._lock = threading.Lock()
        self.disk_miss: str | None = None
        """Why the file on disk was not used (not there, unreadable, too large, not private); None
        when it was read, or is not read yet."""

    @classmethod
    def default(cls) -> DigestCache:
        """The process-wide cache persisted at ``default_cache_dir() / "digests.json"``."""
        path = default_cache_dir() / "digests.json"
        with _DEFAULT_LOCK:
            cache = _DEFAULT_CACHES.get(path)
            if cache is None:
                cache = _DEFAULT_CACHES[path] = cls(path)
            return cache

    def __len__(self) -> int:
        self._ensure_loaded()
        return len(self._entries)

    def sha256(self, path: str | Path) -> str:
        """The sha256 hex of ``path``'s bytes; from the cache when size and mtime_ns match.

        Raises ``OSError`` when the file cannot be read.
        """
        key = os.path.abspath(path)
        st = os.stat(key)
        self._ensure_loaded()
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry[0] == st.st_size and entry[1] == st.st_mtime_ns:
                self.hits += 1
                return entry[2]
        hexdigest = hash_file(key)
        with self._lock:
            self.misses += 1
            if time.time_ns() - st.st_mtime_ns >= RACY_NS:
                entry = (st.st_size, st.st_mtime_ns, hexdigest)
                self._entries[key] = entry
                if self.path is not None:
                    self._dirty[key] = entry
        return hexdigest

    def save(self) -> None:
        """Write new entries to disk (merged with what another process may have written meanwhile).

        Entries for files that no longer exist are dropped. Failing to write is not an error: the
        cache only saves time.
        """
        if self.path is None or not self._dirty:
            return
        with self._lock:
            # Only a private file's entries are carried over: a forged one is not laundered into ours.
            merged = _read_cache_file(self.path)[0]
            merged.update(self._dirty)
            merged = {k: v for k, v in merged.items() if os.path.exists(k)}
            payload = {"format": _CACHE_FORMAT, "entries": {k: list(v) for k, v in sorted(merged.items())}}
            try:
                write_private(self.path, json.dumps(payload, separators=(",", ":")).encode())
            except OSError:
                return
            self._dirty.clear()

    def _ensure_loaded(self) -> None:
        if self._loaded:
            return
        with self._lock:
            if not self._loaded and self.path is not None:
                on_disk, self.disk_miss = _read_cache_file(self.path)
                on_disk.update(self._entries)
                self._entries = on_disk
                self._loaded = True


def _read_cache_file(path: Path) -> tuple[dict[str, tuple[int, int, str]], str | None]:
    """The valid entries of a private cache file, and why there are none when the file was not used;
    anything unreadable, malformed or not private is ignored."""
    entries, miss = read_private_entries(
        path, MAX_FILE_BYTES, stamp=("format", _CACHE_FORMAT), stranger=f"is not a {_CACHE_FORMAT} file"
    )
    out: dict[str, tuple[int, int, str]] = {}
    for key, value in entries.items():
        if (
            isinstance(value, list)
            and len(value) == 3
            and all(type(v) is int for v in value[:2])
            and isinstance(value[2], str)
            and is_sha256_hex(value[2])
        ):
            out[key] = (value[0], value[1], value[2])
    return out, miss


__all__ = ["DigestCache", "default_cache_dir"]
