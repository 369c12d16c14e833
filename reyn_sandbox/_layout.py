"""What the sandbox's view holds, decided before anything is mounted: the layout.

`plan` turns the grants into the list of paths bound into the fresh root (each granted root at its
own path, read-only unless it is a write root; the system directories and the launcher's Python
installation read-only), the hidden paths to cover, the folders to pin above `hide` and `read_only`
paths, and the covers over the host's secrets. It reads the file system (what exists) but changes
nothing; `_filesystem.build_root` mounts the layout, and Landlock is applied over it with the same
read and write paths (`Layout.read_paths`, `Layout.write_paths`).
"""

from __future__ import annotations

import os
import stat
import sys

from . import _identity
from ._grants import Grants
from ._paths import path_within
from ._secret_covers import secret_covers
from ._value import Value

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
"""Read-only for every command: programs, shared libraries, and /etc (ld.so.cache, passwd, ssl
certificates, timezone). /etc's secrets (shadow, ssh host keys) are root-only files, unreadable to
the sandbox's non-root uid."""


class Mount(Value):
    """One path bound into the view: its location and whether the command may write it."""

    __slots__ = ("granted", "identity", "path", "pin", "what", "writable")

    path: str
    writable: bool
    granted: bool
    """One of the grants' roots (not a system or interpreter directory)."""
    identity: tuple[int, int, bool] | None
    """A granted root's identity as the host found it (`Grants.identities`), checked at the bind."""
    what: str
    """How errors name a granted root ("write root /w")."""
    pin: bool
    """A folder between a write root and a `hide` or `read_only` path, bound onto itself so that the
    command cannot rename it (a mount point cannot be renamed: EBUSY) and move the path away from
    what the next call covers. Not a grant: it lies inside its write root already."""

    def __init__(
        self,
        path: str,
        writable: bool,
        granted: bool = False,
        identity: tuple[int, int, bool] | None = None,
        what: str = "",
        pin: bool = False,
    ) -> None:
        self._init(path=path, writable=writable, granted=granted, identity=identity, what=what, pin=pin)


class Layout(Value):
    """The resolved view: what is mounted where, what is hidden, what the interpreter needs."""

    __slots__ = ("hidden", "mounts", "secret_covers", "symlinks")

    mounts: tuple[Mount, ...]
    symlinks: tuple[tuple[str, str], ...]
    hidden: tuple[tuple[str, bool], ...]
    """Each hidden path, and whether the host found it (it has an identity): then it must be there."""
    secret_covers: tuple[str, ...]
    """What hides the host's secret files (`_secret_covers.secret_covers`): each must be there."""

    def __init__(
        self,
        mounts: tuple[Mount, ...],
        symlinks: tuple[tuple[str, str], ...],
        hidden: tuple[tuple[str, bool], ...],
        secret_covers: tuple[str, ...] = (),
    ) -> None:
        self._init(mounts=mounts, symlinks=symlinks, hidden=hidden, secret_covers=secret_covers)

    @property
    def read_paths(self) -> list[str]:
        """Paths Landlock grants read and execute on."""
        return [m.path for m in self.mounts if not m.writable and not m.pin]

    @property
    def write_paths(self) -> list[str]:
        """Paths Landlock grants every right on."""
        return [m.path for m in self.mounts if m.writable and not m.pin]


def check_working_directory(layout: Layout, cwd: str) -> None:
    """The command starts where it was asked to, so that must be granted: "/" or inside a mounted path
    (never a skeleton folder or the private /tmp standing where an ungranted path was). ValueError if not."""
    resolved = os.path.realpath(cwd)
    if resolved == "/" or any(path_within(resolved, m.path) for m in layout.mounts):
        return
    raise ValueError(f"the working directory {cwd} is outside the read and write roots")


def check_write_roots(layout: Layout, uid: int, gid: int) -> None:
    """As root the command runs as uid/gid, with plain Unix permissions on write roots (not idmapped,
    see _idmap): refuse up front a write root that user could not write, rather than fail later."""
    for mount in layout.mounts:
        if not (mount.granted and mount.writable):
            continue
        info = os.stat(mount.path)
        needed = (stat.S_IWUSR | stat.S_IXUSR) if stat.S_ISDIR(info.st_mode) else stat.S_IWUSR
        if info.st_uid == uid:
            shift = 0
        elif info.st_gid == gid:
            shift = 3
        else:
            shift = 6
        if info.st_mode & (needed >> shift) != needed >> shift:
            raise PermissionError(
                f"write root {mount.path} is not writable by uid {uid} / gid {gid}, the command's user "
                "when the launcher runs as root: give that user write access or choose Grants.uid/gid"
            )


def interpreter_dirs() -> tuple[str, ...]:
    """The launcher's Python installation — base and virtual environment — so `python …` runs inside.

    The launcher starts with -S, so site.py never set sys.prefix to the virtual environment: it is
    found as the folder above sys.executable's that holds a pyvenv.cfg, as site.py would find it.
    """
    found = [sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix]
    venv = os.path.dirname(os.path.dirname(os.path.abspath(sys.executable)))
    if os.path.isfile(os.path.join(venv, "pyvenv.cfg")):
        found.append(venv)
    return tuple(dict.fromkeys(found))


def plan(grants: Grants) -> Layout:
    """Resolve the grants into a layout; raises OSError naming a root that does not exist."""
    mounts: dict[str, bool] = {}
    granted: set[str] = set()
    symlinks: list[tuple[str, str]] = []
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            symlinks.append((path, os.readlink(path)))
        elif os.path.isdir(path):
            mounts[path] = False
    for path in interpreter_dirs():
        mounts.setdefault(os.path.realpath(path), False)
    identities = {entry[0]: entry[1:] for entry in grants.identities}
    names = _identity.root_names(grants)
    top = os.stat("/")
    # Roots are mounted at their own paths, never resolved here: a link on the way is refused at the
    # bind (_identity), so the path checked by the host is the path mounted.
    for roots, writable in ((grants.read_roots, False), (grants.write_roots, True)):
        for root in roots:
            if root == "/" or identities.get(root, (None, None))[:2] == (top.st_dev, top.st_ino):
                raise ValueError("the filesystem root cannot be a root; grant the directories needed")
            if not os.path.lexists(root):
                raise FileNotFoundError(f"{'write' if writable else 'read'} root {root} does not exist")
            # A path that is both a read and a write root is writable (the wider grant wins).
            mounts[root] = mounts.get(root, False) or writable
            granted.add(root)
    # A read_only or hide path the host found (it has an identity) must be there at the start: one
    # moved away since is refused, never skipped. One the host did not find is skipped when absent;
    # a hidden path covers the file there when the command starts (a log rotated between calls).
    for path in grants.read_only:
        if path in identities or os.path.lexists(path):
            # Read-only wins over a write root at the same path; deeper, it is mounted over it.
            mounts[path] = False
            granted.add(path)
    hidden = [
        path
        for path in grants.hide
        if (path in identities or os.path.lexists(path)) and _holder(path, mounts) is not None
    ]
    pins = _pins([*grants.read_only, *hidden], mounts, names)
    ordered = sorted(
        {**mounts, **dict.fromkeys(pins, True)}.items(), key=lambda item: (item[0].count("/"), item[0])
    )
    found = []
    for path, writable in ordered:
        if path in pins:
            found.append(Mount(path, True, pin=True, what=pins[path]))
        elif path not in granted:
            found.append(Mount(path, writable))
        elif path not in identities:
            raise ValueError(
                f"{names[path]} has no identity: it did not exist when the grants were made, so the host "
                "never checked it (grants from reyn_sandbox.launcher_argv carry one for every root)"
            )
        else:
            found.append(Mount(path, writable, True, identities[path], names[path]))
    return Layout(
        tuple(found),
        tuple(symlinks),
        tuple((path, path in identities) for path in hidden),
        # under a hidden path that must be covered, a secret is out of sight already
        secret_covers(
            grants.secrets,
            mounts,
            [path for path in hidden if path in identities],
            [path for path in mounts if path not in granted],
        ),
    )


def _holder(path: str, mounts: dict[str, bool]) -> str | None:
    """The deepest of `mounts` holding `path` (itself included), or None."""
    holders = [m for m in mounts if path_within(path, m)]
    return max(holders, key=len) if holders else None


def _pins(entries: list[str], mounts: dict[str, bool], names: dict[str, str]) -> dict[str, str]:
    """The folders above `entries` that the command could rename (they lie in a writable mount and
    are no mount point yet), up to the nearest mount point; each → how errors name it."""
    pins: dict[str, str] = {}
    for entry in entries:
        folder = os.path.dirname(entry)
        while folder not in mounts and folder != "/":
            holder = _holder(folder, mounts)
            if holder is None or not mounts[holder]:
                break
            pins.setdefault(folder, f"the folder {folder} above {names[entry]}")
            folder = os.path.dirname(folder)
    return pins
