"""The installation's argument-hash key: ``installation_key()``, 32 random bytes in a private file.

The audit log and the spans identify a call's arguments by ``HMAC-SHA256(key, canonical JSON)``
(``reyn_core.dispatch.argument_hash``). An unkeyed hash of a low-entropy argument (a yes/no, a
short path, a user id) can be reversed by hashing the candidates; with a key only its holder can.
The key lives in ``user_config_dir()/argument-hash.key``, made on first use with ``write_private``
(mode 0600, folders 0700) and read with ``read_private`` (a regular file owned by this user, not a
link). A key file that anyone else can read or write, or that is not exactly 32 bytes, is refused
with the reason (fail closed: it is never silently replaced, since a replaced key would break the
comparison of hashes over time without anyone knowing why, and a readable one may already be known).
"""

from __future__ import annotations

import os
import secrets
import stat
import threading
from pathlib import Path

from reyn_core.loading.userdirs import CacheMiss, read_private, user_config_dir, write_private

KEY_FILE = "argument-hash.key"
KEY_BYTES = 32
_cache: dict[Path, bytes] = {}
_lock = threading.Lock()


class ArgumentKeyError(Exception):
    """The key file exists but cannot be used (why is the message); nothing hashes with it."""


def key_path() -> Path:
    """Where this installation's key is (``$REYN_ARGUMENT_KEY_FILE`` when set, for tests and hosts
    that keep it elsewhere)."""
    override = os.environ.get("REYN_ARGUMENT_KEY_FILE")
    return Path(override) if override else user_config_dir() / KEY_FILE


def installation_key(path: Path | None = None) -> bytes:
    """The key in ``path`` (default ``key_path()``), made there first when absent. Raises
    ``ArgumentKeyError`` when the file is not private, not a regular file or not a key."""
    path = path or key_path()
    with _lock:
        key = _cache.get(path)
        if key is None:
            key = _cache[path] = _read_or_create(path)
        return key


def _read_or_create(path: Path) -> bytes:
    try:
        data = read_private(path, KEY_BYTES)
    except CacheMiss as miss:
        if not miss.absent:
            raise ArgumentKeyError(f"the argument-hash key {miss}; remove it to make a new key") from None
        try:
            write_private(path, secrets.token_bytes(KEY_BYTES))
            data = read_private(path, KEY_BYTES)  # what is there now (another process may have won)
        except (OSError, CacheMiss) as exc:
            raise ArgumentKeyError(f"the argument-hash key {path} cannot be made: {exc}") from None
    if os.name == "posix":
        mode = stat.S_IMODE(os.stat(path).st_mode)
        if mode & 0o077:
            raise ArgumentKeyError(
                f"the argument-hash key {path} is accessible to others (mode {oct(mode)}); "
                "remove it to make a new key (the old one may be known)"
            )
    if len(data) != KEY_BYTES:
        raise ArgumentKeyError(f"the argument-hash key {path} is not a {KEY_BYTES}-byte key; remove it")
    return data


__all__ = ["KEY_BYTES", "ArgumentKeyError", "installation_key", "key_path"]
