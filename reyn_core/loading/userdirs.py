"""Platform-appropriate user directories for Reyn's profile and caches, and the private-file rules
for the caches kept there.

The directories come from ``platformdirs``: ``user_config_dir()`` is ``$XDG_CONFIG_HOME/reyn``
(default ``~/.config/reyn``) on Linux and other Unixes, ``~/Library/Application Support/reyn`` on
macOS, ``%APPDATA%\\reyn`` on Windows; ``user_cache_dir()`` is ``$REYN_CACHE_DIR`` when set to an
absolute path, else ``$XDG_CACHE_HOME/reyn`` (default ``~/.cache/reyn``), ``~/Library/Caches/reyn``
on macOS, ``%LOCALAPPDATA%\\reyn\\Cache`` on Windows.

Every cache file there is read with ``read_private`` and written with ``write_private``: a cache is
trusted only when no one but this user could have written it (docs/security.md).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

APP = "reyn"


def user_config_dir() -> Path:
    """The directory holding the user-level ``reyn.toml``."""
    import platformdirs

    return Path(platformdirs.user_config_dir(APP, appauthor=False, roaming=True))


def user_cache_dir() -> Path:
    """The directory for Reyn's caches (compiled bytecode). Safe to delete at any time."""
    override = os.environ.get("REYN_CACHE_DIR")
    if override and os.path.isabs(override):
        return Path(override)
    import platformdirs

    return Path(platformdirs.user_cache_dir(APP, appauthor=False))


def own_folders() -> dict[str, Path]:
    """The folders Reyn keeps its own files in, by what they hold: ``user_cache_dir()`` (compiled
    bytecode: trusted on the next load) and ``user_config_dir()`` (the
    user's profile and the argument key). Every file Reyn keeps for itself lives under one of them,
    so what must stay out of a plugin's reach (an isolated plugin's write grant, ``RJ011``) is these
    folders, asked of the same functions that decide where the files go."""
    return {
        "Reyn's user cache folder (bytecode)": user_cache_dir(),
        "Reyn's user configuration folder (the user profile, the argument key)": user_config_dir(),
    }


# --------------------------------------------------------------------------- private cache files


class CacheMiss(Exception):
    """Why a cache file was not read: it does not exist (``absent``), cannot be read, is too large, or
    is not private. A miss, never an error: the caller computes what the cache would have said."""

    def __init__(self, reason: str, *, absent: bool = False) -> None:
        super().__init__(reason)
        self.absent = absent


_READ_FLAGS = (
    os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
)


def read_private(path: str | os.PathLike[str], max_bytes: int) -> bytes:
    """The bytes of a cache file Reyn wrote, read in one open that does not follow a link and is
    bounded to ``max_bytes``. Raises ``CacheMiss`` unless the file is regular (not a link, a folder or
    a FIFO, which the non-blocking open cannot hang on), at most ``max_bytes`` long and — on POSIX —
    owned by this user and writable by no one else, as ssh treats its files.

    A cache file holds what Reyn will trust (compiled bytecode it will run, the argument key); no
    hash inside it can prove who wrote it, since whoever can write the file can recompute any hash
    stored there. So what is trusted is who could have written it: this user only. Windows reports
    every writable file as 0o666 and has no owner here, so only the kind and the size are checked
    there; the user's ``%LOCALAPPDATA%`` is private by its ACL.
    """
    try:
        fd = os.open(path, _READ_FLAGS)
    except FileNotFoundError:
        raise CacheMiss(f"{path} does not exist", absent=True) from None
    except OSError as exc:
        if os.path.islink(path):
            raise CacheMiss(f"{path} is a symbolic link") from None
        raise CacheMiss(f"{path} cannot be opened: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise CacheMiss(f"{path} is not a regular file")
        if os.name == "posix":
            _check_private(path, st)
        if st.st_size > max_bytes:
            raise CacheMiss(f"{path} is larger than {max_bytes} bytes")
        # Reads sized by the fstat, not by the bound, and one byte past the bound at most.
        chunks, size, limit = [], 0, max_bytes + 1
        while size < limit:
            chunk = os.read(fd, min(limit - size, max(st.st_size + 1 - size, 1 << 16)))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        data = b"".join(chunks)
    except OSError as exc:
        raise CacheMiss(f"{path} cannot be read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:  # it grew since the fstat
        raise CacheMiss(f"{path} is larger than {max_bytes} bytes")
    return data


def _check_private(path: str | os.PathLike[str], st: os.stat_result) -> None:
    if st.st_uid != os.geteuid():
        raise CacheMiss(f"{path} is owned by uid {st.st_uid}, not by this user (uid {os.geteuid()})")
    if st.st_mode & 0o022:
        who = {0o020: "group", 0o002: "others", 0o022: "group and others"}[st.st_mode & 0o022]
        mode = oct(stat.S_IMODE(st.st_mode))
        raise CacheMiss(f"{path} is writable by {who} (mode {mode})")


def write_private(path: str | os.PathLike[str], data: bytes, *, durable: bool = True) -> None:
    """Write a cache file atomically (``atomic_write_bytes(private=True)``: a new file of mode 0600
    renamed over the old one, or over a link, which is replaced and not written through), creating
    each missing folder above it with mode 0700 (as the XDG base directory spec asks). Folders that
    exist are left as they are. ``durable=False`` as for ``atomic_write_bytes``: only for entries
    whose reader checks a checksum. Raises ``OSError``."""
    from reyn_core.atomic_write import atomic_write_bytes

    target = Path(path)
    _make_private_folders(target.parent)
    atomic_write_bytes(target, data, durable=durable, private=True)


def _make_private_folders(folder: Path) -> None:
    missing = []
    while not folder.is_dir():
        missing.append(folder)
        if folder.parent == folder:
            break
        folder = folder.parent
    for each in reversed(missing):
        try:
            os.mkdir(each, 0o700)
        except FileExistsError:  # made meanwhile by another process
            pass
