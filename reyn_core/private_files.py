"""Private files of the host's: opened relative to a checked folder, never through a link, 0600.

The checks of ``private_log_file`` without its handler (no ``logging`` import: the load makes the
remote failure log's files with them, and a render imports no ``logging``). ``open_private_folder``:
owned by the user, writable by no one else — like ssh's StrictModes; ``open_private_file``: opened
relative to that open folder, never following a link, created 0600 and set 0600, then checked (a
regular file of the user's with one name). A failed check raises ``LogFileRefused``, which says what
to fix. Standard library only.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

POSIX = os.name == "posix"
# How the host opens a log of its own (this one, the audit log): appending, never through a link at
# the name; O_NONBLOCK: a FIFO planted at the name fails the open (or the check) instead of blocking
APPEND_FLAGS = (
    os.O_WRONLY
    | os.O_APPEND
    | os.O_CREAT
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_NONBLOCK", 0)
)


class LogFileRefused(OSError):
    """A log file or its folder failed a check: the message names it and says what to fix."""


def open_private_folder(folder: Path) -> int | None:
    """Make ``folder`` exist (missing folders 0700), open it, and check that the current user owns
    it and no one else may write it; return its descriptor (None where the platform opens no
    folders: Windows, which has no such modes). Raises ``LogFileRefused`` (``OSError``)."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    if not POSIX:
        return None
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if st.st_uid != os.geteuid():
            raise LogFileRefused(
                f"the log folder {folder} is owned by user id {st.st_uid}, not by this user "
                f"({os.geteuid()}): put the log in a folder of your own"
            )
        if st.st_mode & 0o022:
            raise LogFileRefused(
                f"the log folder {folder} can be written by others (mode {stat.filemode(st.st_mode)}): "
                "anyone who can write it could plant a file or link the log's records go to; "
                "make it writable by you only (chmod go-w) or choose another folder"
            )
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_private_file(folder: Path, dir_fd: int | None, name: str) -> int:
    """Open (make) ``name`` in the open folder ``dir_fd`` to append, never through a link, mode
    0600 (an existing file is set 0600), and check it is a regular file of this user with one name;
    return its descriptor. Raises ``LogFileRefused`` (``OSError``); a link at ``name`` is refused
    by the open itself."""
    target = name if dir_fd is not None else str(folder / name)
    try:
        fd = os.open(target, APPEND_FLAGS, 0o600, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a FIFO no one reads (O_NONBLOCK)
            raise LogFileRefused(f"the log file {folder / name} is not a regular file: remove it") from exc
        if os.path.islink(folder / name):
            raise LogFileRefused(
                f"the log file {folder / name} is a symbolic link: the log's records would go where "
                "it points; remove it"
            ) from exc
        raise
    if not POSIX:
        return fd
    try:
        st = os.fstat(fd)
        problem = (
            "is not a regular file"
            if not stat.S_ISREG(st.st_mode)
            else f"is owned by user id {st.st_uid}, not by this user"
            if st.st_uid != os.geteuid()
            else f"has {st.st_nlink} names (a hard link elsewhere would read it)"
            if st.st_nlink != 1
            else None
        )
        if problem is not None:
            raise LogFileRefused(f"the log file {folder / name} {problem}: remove it")
        os.fchmod(fd, 0o600)  # only once it is known to be this user's own file
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def log_names(name: str, backup_count: int) -> list[str]:
    """A rotated log's names, newest first: ``name``, ``name.1`` .. ``name.{backup_count}``."""
    return [name, *(f"{name}.{n}" for n in range(1, backup_count + 1))]


def rotation_sources(folder: Path, dir_fd: int | None, names: list[str]) -> list[str]:
    """Those of ``names`` (a log's names, ``log_names``) that a rotation moves, in order: every one
    present but the oldest, which is only ever replaced. Each present name, the oldest included, must
    be a regular file: a link, a FIFO or a folder there is refused (``LogFileRefused``) — the rotation
    renames them (and over the oldest: a folder there would fail every rotation), it never opens
    them, so nothing else is asked of them. The writer asks this before it moves anything, and the
    load (``make_private_log``) asks the same beforehand: one rule, so the load refuses exactly what
    the writer would."""
    present = []
    for name in names:
        try:
            st = os.stat(name if dir_fd is not None else folder / name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            continue
        if not stat.S_ISREG(st.st_mode):
            raise LogFileRefused(f"the log file {folder / name} is not a regular file: remove it")
        present.append(name)
    return [name for name in present if name != names[-1]]


def make_private_log(path: Path, backup_count: int) -> None:
    """Check the rotated log at ``path`` as its writer (``private_log_file``) will use it, now: its
    folder (``open_private_folder``), the file it opens (``open_private_file``), the files its
    rotation moves (``rotation_sources``) — and make each missing copy exist, empty and 0600 (the
    load marks them secret, and only a file that exists can be covered; the writer renames over
    them). Raises ``OSError`` (``LogFileRefused`` for a failed check)."""
    folder = path.parent
    dir_fd = open_private_folder(folder)
    try:
        names = log_names(path.name, backup_count)
        os.close(open_private_file(folder, dir_fd, names[0]))
        for name in names[1:]:
            try:
                target = name if dir_fd is not None else str(folder / name)
                os.close(os.open(target, _MAKE_FLAGS, 0o600, dir_fd=dir_fd))
            except FileExistsError:  # whatever is there is the rotation's to check (below) or replace
                pass
        rotation_sources(folder, dir_fd, names)
    finally:
        if dir_fd is not None:
            os.close(dir_fd)


_MAKE_FLAGS = (
    os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
)
