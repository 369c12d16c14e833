"""The sandbox's filesystem: a fresh root holding only what is granted, then Landlock over it.

Inside the mount namespace a tmpfs becomes the new root; each granted path is bind-mounted at its own
path (read roots and system directories read-only), hidden paths are covered, /proc is a fresh
mount of the sandbox's own PID namespace, /dev holds five harmless nodes, /tmp and /dev/shm are
private tmpfs. Whatever is not granted — /run's sockets, /home, /root, other processes' /proc —
does not exist in the view, which is how pathname unix sockets outside the roots become unreachable
(Landlock up to ABI 7 does not check connect(2) on them).
"""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass

from . import _identity, _idmap
from . import _syscalls as sc
from ._grants import Grants
from ._secret_covers import secret_covers

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
"""Read-only for every command: programs, shared libraries, and /etc (ld.so.cache, passwd, ssl
certificates, timezone). /etc's secrets (shadow, ssh host keys) are root-only files, unreadable to
the sandbox's non-root uid."""

DEV_NODES = ("null", "zero", "full", "random", "urandom")
TMP = "/tmp"
SHM = "/dev/shm"
_STAGE = "/tmp"  # where the new root's tmpfs is mounted before pivot_root (a path every system has)


@dataclass(frozen=True)
class Mount:
    """One granted path: its resolved location and whether the command may write it."""

    path: str
    writable: bool
    granted: bool = False
    """One of the grants' roots (not a system or interpreter directory)."""
    identity: tuple[int, int, bool] | None = None
    """A granted root's identity as the host found it (`Grants.identities`), checked at the bind."""
    what: str = ""
    """How errors name a granted root ("write root /w")."""


@dataclass(frozen=True)
class Layout:
    """The resolved view: what is mounted where, what is hidden, what the interpreter needs."""

    mounts: tuple[Mount, ...]
    symlinks: tuple[tuple[str, str], ...]
    hidden: tuple[str, ...]
    secret_covers: tuple[str, ...] = ()
    """What hides the host's secret files (`_protected.secret_covers`): each must be there to cover."""

    @property
    def read_paths(self) -> list[str]:
        """Paths Landlock grants read and execute on."""
        return [m.path for m in self.mounts if not m.writable]

    @property
    def write_paths(self) -> list[str]:
        """Paths Landlock grants every right on."""
        return [m.path for m in self.mounts if m.writable]


def check_working_directory(layout: Layout, cwd: str) -> None:
    """The command starts where it was asked to, so that must be granted: "/" or inside a mounted path
    (never a skeleton folder or the private /tmp standing where an ungranted path was). ValueError if not."""
    resolved = os.path.realpath(cwd)
    if resolved == "/" or any(
        resolved == m.path or resolved.startswith(m.path.rstrip("/") + "/") for m in layout.mounts
    ):
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
    # Roots are mounted at their own paths, never resolved here: a link on the way is refused at the
    # bind (_identity), so the path checked by the host is the path mounted.
    for roots, writable in ((grants.read_roots, False), (grants.write_roots, True)):
        for root in roots:
            if root == "/":
                raise ValueError("the filesystem root cannot be a root; grant the directories needed")
            if not os.path.lexists(root):
                raise FileNotFoundError(f"{'write' if writable else 'read'} root {root} does not exist")
            # A path that is both a read and a write root is writable (the wider grant wins).
            mounts[root] = mounts.get(root, False) or writable
            granted.add(root)
    for path in grants.read_only:
        if os.path.lexists(path):
            # Read-only wins over a write root at the same path; deeper, it is mounted over it.
            mounts[path] = False
            granted.add(path)
    hidden = tuple(os.path.realpath(path) for path in grants.hide if os.path.lexists(path))
    ordered = sorted(mounts.items(), key=lambda item: (item[0].count("/"), item[0]))
    identities = {entry[0]: entry[1:] for entry in grants.identities}
    names = _identity.root_names(grants)
    found = []
    for path, writable in ordered:
        if path not in granted:
            found.append(Mount(path, writable))
            continue
        if path not in identities:
            raise ValueError(
                f"{names[path]} has no identity: it did not exist when the grants were made, so the host "
                "never checked it (grants from reyn_sandbox.launcher_argv carry one for every root)"
            )
        found.append(Mount(path, writable, True, identities[path], names[path]))
    return Layout(tuple(found), tuple(symlinks), hidden, secret_covers(grants.secrets, mounts))


def build_root(layout: Layout, grants: Grants, owner: tuple[int, int], as_root: bool) -> None:
    """Replace this mount namespace's root with the layout (needs CAP_SYS_ADMIN in its user namespace).

    Sources are opened before anything is mounted over them and bound through /proc/self/fd, so a
    root below the staging directory (/tmp) stays reachable. `owner` (uid, gid) owns /tmp. As root,
    read roots are idmapped so the operator's files there are the (unprivileged) command's (_idmap).
    """
    sc.mount(None, "/", None, sc.MS_REC | sc.MS_PRIVATE)
    sources = {m.path: _open_source(m) for m in layout.mounts}
    devices = {name: os.open(f"/dev/{name}", os.O_PATH | os.O_CLOEXEC) for name in DEV_NODES}
    sc.mount("tmpfs", _STAGE, "tmpfs", sc.MS_NOSUID | sc.MS_NODEV, "mode=0755,size=16m")
    new = _STAGE
    # /proc first: the idmapping namespace's child is found by its pid in our own PID namespace.
    os.makedirs(new + "/proc", exist_ok=True)
    sc.mount("proc", new + "/proc", "proc", sc.MS_NOSUID | sc.MS_NODEV | sc.MS_NOEXEC)
    idmap_fd = _idmap.mapping_namespace(owner[0], owner[1], new + "/proc") if as_root else None
    private_tmp = f"mode=0700,uid={owner[0]},gid={owner[1]},size={grants.tmp_bytes}"
    # A root that is /tmp itself is the host's /tmp, granted: then no private /tmp goes over it.
    tmp_done = any(m.path == TMP for m in layout.mounts)
    for mount in layout.mounts:
        if not tmp_done and mount.path.count("/") > 1:
            _mount_tmpfs(new + TMP, private_tmp)
            tmp_done = True
        target = new + mount.path
        fd = sources[mount.path]
        if idmap_fd is not None and mount.granted and not mount.writable:
            _make_mountpoint(target, stat.S_ISDIR(os.fstat(fd).st_mode))
            if _idmap.bind_read_only(fd, target, idmap_fd):
                continue
        _bind(fd, target, writable=mount.writable)
    if not tmp_done:
        _mount_tmpfs(new + TMP, private_tmp)
    for link, target in layout.symlinks:
        os.symlink(target, new + link)
    _build_dev(new, devices, private_tmp)
    for path in layout.secret_covers:  # first: an operator's cover over one leaves it out of sight
        _cover_secret(new + path, new)
    for path in layout.hidden:
        _cover(new + path, new)
    if idmap_fd is not None:
        os.close(idmap_fd)
    for fd in (*sources.values(), *devices.values()):
        os.close(fd)
    sc.remount_read_only(new)
    os.chdir(new)
    sc.pivot_root(".", ".")
    sc.umount2(".", sc.MNT_DETACH)
    os.chdir("/")


def _open_source(mount: Mount) -> int:
    """A granted root reached without a symbolic link and checked against the identity the host
    recorded (`_identity.RootChanged`, an OSError naming it, otherwise); system and interpreter
    directories by path (the host's own, resolved by `plan`)."""
    if mount.identity is None:
        return os.open(mount.path, os.O_PATH | os.O_CLOEXEC)
    return _identity.open_checked(mount.path, mount.what, mount.identity)


def _mount_tmpfs(target: str, options: str) -> None:
    os.makedirs(target, exist_ok=True)
    sc.mount("tmpfs", target, "tmpfs", sc.MS_NOSUID | sc.MS_NODEV, options)


def _make_mountpoint(target: str, is_dir: bool) -> None:
    if os.path.lexists(target):
        return
    if is_dir:
        os.makedirs(target, mode=0o755, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
        os.close(os.open(target, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o644))


def _bind(fd: int, target: str, writable: bool) -> None:
    _make_mountpoint(target, stat.S_ISDIR(os.fstat(fd).st_mode))
    sc.mount(f"/proc/self/fd/{fd}", target, None, sc.MS_BIND | sc.MS_REC)
    if not writable:
        sc.remount_read_only(target)


def _build_dev(new: str, devices: dict[str, int], tmp_options: str) -> None:
    _mount_tmpfs(new + "/dev", "mode=0755,size=64k")
    for name, fd in devices.items():
        _bind(fd, f"{new}/dev/{name}", writable=True)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0")):
        os.symlink(target, f"{new}/dev/{name}")
    os.symlink("/proc/self/fd/1", f"{new}/dev/stdout")
    os.symlink("/proc/self/fd/2", f"{new}/dev/stderr")
    _mount_tmpfs(new + SHM, tmp_options.replace("mode=0700", "mode=01777"))
    sc.remount_read_only(new + "/dev")


def _cover_secret(target: str, new: str) -> None:
    """`_cover`, never skipped: a secret's cover that is gone since `plan` stops the start."""
    if not os.path.lexists(target):
        raise FileNotFoundError(f"{target[len(new) :]} hides a secret of the host and is gone; nothing runs")
    _cover(target, new)


def _cover(target: str, new: str) -> None:
    """Make `target` unreachable: an empty read-only tmpfs over a directory, /dev/null over a file."""
    if os.path.isdir(target) and not os.path.islink(target):
        sc.mount("tmpfs", target, "tmpfs", sc.MS_NOSUID | sc.MS_NODEV | sc.MS_RDONLY, "mode=000,size=4k")
    elif os.path.lexists(target):
        sc.mount(new + "/dev/null", target, None, sc.MS_BIND)
        sc.remount_read_only(target)
