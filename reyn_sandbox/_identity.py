"""Which file a granted root is: found without following a symbolic link, as the host checked it.

The host checks each root by its path (``resolve_grants``, ``_protected``); the launcher mounts it
later, in another process. Between the two, anything that can write a folder above the root (a
confined process of another surface, say) could swap the root, or a folder on its way, for a symbolic
link to a folder the host would have refused. So the host records what it found at the path — the
``Identity``: device, inode and whether it is a folder — and the launcher reaches the path again
component by component from ``/``, each with ``O_PATH | O_NOFOLLOW`` (a link anywhere on the way is
refused, a link loop included), checks the identity and mounts from that very descriptor
(``_filesystem.build_root``). A root swapped for a link, or for another file, is refused by name and
nothing runs.

Standard library only: the launcher imports it, and so does the host when it makes the grants.
"""

from __future__ import annotations

import os
import stat

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: see _grants.py

if TYPE_CHECKING:
    from collections.abc import Callable

    from ._grants import Grants

_O_PATH = getattr(os, "O_PATH", os.O_RDONLY)  # Linux; elsewhere nothing is confined anyway
_STEP = _O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC


class RootChanged(OSError):
    """A granted root is not the file the host found at its path (or it cannot be reached without
    following a symbolic link); the message names the root."""


def open_no_symlinks(path: str, what: str) -> int:
    """An ``O_PATH`` descriptor of the absolute ``path`` reached from ``/`` without following a
    symbolic link in any component; ``RootChanged`` naming ``what`` (e.g. "write root /w") and the
    component that is a link, ``FileNotFoundError`` when a component is missing."""
    return walk(os.open("/", _STEP | os.O_DIRECTORY), path, what)


def make_dirs(path: str, what: str) -> None:
    """Create the folder ``path`` and any missing folder above it, each made in (and reached from)
    the one before without following a symbolic link (``RootChanged`` at a link)."""
    top = os.open("/", _STEP | os.O_DIRECTORY)
    os.close(walk(top, path, what, create=lambda part, fd: os.mkdir(part, dir_fd=fd)))


def walk(fd: int, path: str, what: str, create: Callable[[str, int], None] | None = None) -> int:
    """From the folder descriptor ``fd`` (consumed), an ``O_PATH`` descriptor of ``path`` reached one
    component at a time with ``O_NOFOLLOW`` (``RootChanged`` at a symbolic link). A missing component
    is ``FileNotFoundError``, or made by ``create(name, parent_fd)`` when given (which may refuse)."""
    walked = ""
    try:
        for part in path.split("/"):
            if not part or part == ".":
                continue
            walked += "/" + part
            try:
                step = os.open(part, _STEP, dir_fd=fd)
            except FileNotFoundError:
                if create is None:
                    raise
                create(part, fd)
                step = os.open(part, _STEP, dir_fd=fd)
            os.close(fd)
            fd = step
            if stat.S_ISLNK(os.fstat(fd).st_mode):
                raise RootChanged(
                    f"{what} goes through a symbolic link at {walked}: a root is granted by its real path "
                    "(the link may have been put there after the host checked it)",
                )
    except BaseException as exc:
        os.close(fd)
        if isinstance(exc, FileNotFoundError):
            raise FileNotFoundError(f"{what} does not exist (there is no {walked})") from None
        if isinstance(exc, OSError) and not isinstance(exc, RootChanged):
            raise RootChanged(f"{what} cannot be reached at {walked}: {exc.strerror}") from None
        raise
    return fd


def identity_of(fd: int) -> tuple[int, int, bool]:
    """``(st_dev, st_ino, is a folder)`` of an open descriptor."""
    info = os.fstat(fd)
    return info.st_dev, info.st_ino, stat.S_ISDIR(info.st_mode)


def found_at(
    path: str, what: str, check: Callable[[int, str], None] | None = None
) -> tuple[int, int, bool] | None:
    """The identity of what is at ``path`` now (reached as the launcher will reach it), or None when
    nothing is there; ``RootChanged`` when the way there holds a symbolic link (or ``check``, given
    the descriptor, raises it)."""
    try:
        fd = open_no_symlinks(path, what)
    except FileNotFoundError:
        return None
    try:
        if check is not None:
            check(fd, what)
        return identity_of(fd)
    finally:
        os.close(fd)


def open_checked(path: str, what: str, expected: tuple[int, int, bool]) -> int:
    """``open_no_symlinks``, refusing (``RootChanged``) unless the file there has the identity the
    host recorded. The caller mounts from the descriptor, so what is mounted is what was checked."""
    fd = open_no_symlinks(path, what)
    found = identity_of(fd)
    if found != tuple(expected):
        os.close(fd)
        kind = "folder" if found[2] else "file"
        raise RootChanged(
            f"{what} is not what the host checked: another {kind} is at its path now (device {found[0]}, "
            f"inode {found[1]}; checked: device {expected[0]}, inode {expected[1]}). Nothing was run",
        )
    return fd


def root_names(grants: Grants) -> dict[str, str]:
    """Each path of ``grants`` that carries an identity → how errors name it ("write root /w"): roots,
    ``read_only`` and ``hide`` paths; a path that is both a read and a write root is named as the
    write root, a ``read_only`` path as such."""
    names = {path: f"hide path {path}" for path in grants.hide}
    names.update({path: f"read root {path}" for path in grants.read_roots})
    names.update({path: f"write root {path}" for path in grants.write_roots})
    names.update({path: f"read_only path {path}" for path in grants.read_only})
    return names


def pinned(grants: Grants) -> Grants:
    """``grants`` with the identity of every root that has none yet and exists now (``Grants.identities``);
    ``GrantsError`` naming a root whose path goes through a symbolic link, or a hidden file with more
    than one name, or a hidden folder holding one (``_one_name.check_one_name``)."""
    from ._grants import GrantsError
    from ._one_name import SecondName, check_one_name

    known = {entry[0] for entry in grants.identities}
    added = []
    hidden = set(grants.hide)
    for path, what in root_names(grants).items():
        if path in known and path not in hidden:
            continue
        try:
            check = (lambda fd, w, p=path: check_one_name(fd, w, p)) if path in hidden else None
            found = found_at(path, what, check)
        except (RootChanged, SecondName) as exc:
            raise GrantsError(str(exc)) from None
        if found is not None and path not in known:
            added.append((path, *found))
    if not added:
        return grants
    return grants.replace(identities=(*grants.identities, *added))
