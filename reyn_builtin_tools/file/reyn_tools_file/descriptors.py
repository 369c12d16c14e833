"""Opening, writing and deleting below a root through directory descriptors, never following a link.

The file system is walked from the root's directory descriptor, one component at a time, each opened
with ``O_NOFOLLOW | O_DIRECTORY`` relative to its parent's descriptor: a symbolic link anywhere below
a root is refused, even one swapped in after an earlier check, because nothing is ever looked up by
its full path again. Leaves are ``lstat``-ed before they are opened (FIFOs, devices and sockets are
never opened), opened with ``O_NOFOLLOW``, and checked again with ``fstat``.

Writes go to a fresh temporary file in the same directory (``O_EXCL``), are fsync-ed, renamed over
the target with ``os.replace`` relative to the directory descriptor (a rename replaces a link at the
target instead of following it), and the directory is fsync-ed. Targets with more than one hard link
are never written or deleted.

Only POSIX systems with ``O_NOFOLLOW`` and ``dir_fd`` support are supported; elsewhere the tools
are unavailable.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from reyn_core import ToolExecutionError

from .paths import Location, PathMissing, PathRefused

_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
# Opens a directory below a root: never through a link (the tree walk opens its directories so too).
DIR_FLAGS = os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | _O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | _O_CLOEXEC
_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC


def supported() -> bool:
    """Whether this platform can walk paths without following links (POSIX with ``dir_fd``)."""
    return bool(_O_NOFOLLOW and _O_DIRECTORY) and os.open in os.supports_dir_fd


_KINDS = {
    stat.S_IFREG: "regular file",
    stat.S_IFDIR: "directory",
    stat.S_IFLNK: "symbolic link",
    stat.S_IFIFO: "FIFO",
    stat.S_IFCHR: "character device",
    stat.S_IFBLK: "block device",
    stat.S_IFSOCK: "socket",
}


def kind_of(mode: int) -> str:
    """How messages name the file type of ``mode``: ``regular file``, ``symbolic link``, ``FIFO``..."""
    return _KINDS.get(stat.S_IFMT(mode), "special file")


def _refusal(parent_fd: int, name: str, shown: str, exc: OSError, *, want: str) -> Exception:
    """Turn a failed open of ``name`` into the error that says why."""
    try:
        st = os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
    except FileNotFoundError:
        return PathMissing(f"{shown!r} does not exist")
    except OSError:
        return ToolExecutionError(f"cannot open {shown!r}: {exc.strerror or exc}")
    if stat.S_ISLNK(st.st_mode):
        return PathRefused(
            f"{shown!r} is a symbolic link; the file tools never follow links", reason="symlink", path=shown
        )
    if want == "directory" and not stat.S_ISDIR(st.st_mode):
        return PathRefused(
            f"{shown!r} is a {kind_of(st.st_mode)}, not a directory", reason="not_directory", path=shown
        )
    return ToolExecutionError(f"cannot open {shown!r}: {exc.strerror or exc}")


def open_subdir(parent_fd: int, name: str, shown: str, *, create: bool = False) -> int:
    """Open directory ``name`` inside ``parent_fd`` without following a link (creating it if asked)."""
    try:
        return os.open(name, DIR_FLAGS, dir_fd=parent_fd)
    except FileNotFoundError:
        if not create:
            raise PathMissing(f"{shown!r} does not exist") from None
    except OSError as exc:
        raise _refusal(parent_fd, name, shown, exc, want="directory") from None
    try:
        os.mkdir(name, 0o755, dir_fd=parent_fd)
    except FileExistsError:
        pass  # created concurrently; the open below still refuses a link
    try:
        return os.open(name, DIR_FLAGS, dir_fd=parent_fd)
    except OSError as exc:
        raise _refusal(parent_fd, name, shown, exc, want="directory") from None


def _open_root(root: Path, *, create: bool) -> int:
    try:
        return os.open(root, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)
    except FileNotFoundError:
        if not create:
            raise PathMissing(f"the root {str(root)!r} does not exist") from None
    os.makedirs(root, exist_ok=True)  # a configured write root: operator configuration, trusted
    return os.open(root, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)


@contextmanager
def open_directory(loc: Location, *, upto: int | None = None, create: bool = False) -> Iterator[int]:
    """A descriptor of the directory at ``loc`` (or of its first ``upto`` components), walked from
    the root one component at a time with ``O_NOFOLLOW``. Closed on exit."""
    parts = loc.parts if upto is None else loc.parts[:upto]
    fd = _open_root(loc.root, create=create)
    try:
        for i, name in enumerate(parts):
            child = open_subdir(fd, name, loc.shown(i + 1), create=create)
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


@contextmanager
def open_parent(loc: Location, *, create: bool = False) -> Iterator[int]:
    """A descriptor of the directory holding ``loc``'s last component."""
    if not loc.parts:
        raise PathRefused(
            f"{loc.display!r} is a root directory, not a file", reason="is_directory", path=loc.display
        )
    with open_directory(loc, upto=len(loc.parts) - 1, create=create) as fd:
        yield fd


def lstat_at(parent_fd: int, name: str) -> os.stat_result | None:
    """``lstat`` of ``name`` inside ``parent_fd``, or None when it does not exist."""
    try:
        return os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _require_regular(st: os.stat_result, shown: str) -> None:
    if stat.S_ISLNK(st.st_mode):
        raise PathRefused(
            f"{shown!r} is a symbolic link; the file tools never follow links", reason="symlink", path=shown
        )
    if stat.S_ISDIR(st.st_mode):
        raise PathRefused(f"{shown!r} is a directory, not a file", reason="is_directory", path=shown)
    if not stat.S_ISREG(st.st_mode):
        raise PathRefused(
            f"{shown!r} is a {kind_of(st.st_mode)}; only regular files are read or written",
            reason="special_file",
            path=shown,
        )


def open_regular_at(
    parent_fd: int, name: str, shown: str, *, allow_hardlinks: bool = False
) -> tuple[int, os.stat_result]:
    """Open regular file ``name`` in ``parent_fd`` for reading: never a link, FIFO or device, and
    not a file with several hard links unless ``allow_hardlinks``."""
    st = lstat_at(parent_fd, name)
    if st is None:
        raise PathMissing(f"{shown!r} does not exist")
    _require_regular(st, shown)  # before open: opening a FIFO or a device can block or act
    try:
        fd = os.open(name, _READ_FLAGS, dir_fd=parent_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # swapped for a link since the lstat
            raise PathRefused(
                f"{shown!r} is a symbolic link; the file tools never follow links",
                reason="symlink",
                path=shown,
            ) from None
        raise ToolExecutionError(f"cannot open {shown!r}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        _require_regular(st, shown)  # what was opened is what counts
        if not allow_hardlinks:
            _refuse_hardlinked(st, shown, action="read")
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def _check_replaceable(st: os.stat_result, shown: str, *, action: str) -> None:
    _require_regular(st, shown)
    _refuse_hardlinked(st, shown, action=action)


def _refuse_hardlinked(st: os.stat_result, shown: str, *, action: str) -> None:
    if st.st_nlink > 1:
        opt_in = " unless the operator sets allow_hardlinked_reads" if action == "read" else ""
        raise PathRefused(
            f"{shown!r} has {st.st_nlink} hard links; the file tools do not {action} a file that is also "
            f"reachable by another name (it may live outside the roots){opt_in}",
            reason="hardlink",
            path=shown,
        )


def atomic_write_at(parent_fd: int, name: str, data: bytes, shown: str) -> bool:
    """Replace (or create) ``name`` in ``parent_fd`` with ``data``, atomically and durably.

    Returns True when the file was created. A link, a special file or a multiply-linked file at the
    target is refused; the rename never follows a link.
    """
    st = lstat_at(parent_fd, name)
    if st is not None:
        _check_replaceable(st, shown, action="write")
    tmp = f".reyn-{secrets.token_hex(8)}.tmp"
    fd = os.open(tmp, _TEMP_FLAGS, 0o644, dir_fd=parent_fd)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if st is not None:
                os.fchmod(fd, stat.S_IMODE(st.st_mode))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, name, src_dir_fd=parent_fd, dst_dir_fd=parent_fd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=parent_fd)
        except OSError:
            pass
        raise
    os.fsync(parent_fd)
    return st is None


def unlink_at(parent_fd: int, name: str, shown: str) -> None:
    """Delete regular file ``name`` in ``parent_fd``: never a link, a directory or a hard-linked file."""
    st = lstat_at(parent_fd, name)
    if st is None:
        raise PathMissing(f"{shown!r} does not exist")
    _check_replaceable(st, shown, action="delete")
    os.unlink(name, dir_fd=parent_fd)
    os.fsync(parent_fd)
