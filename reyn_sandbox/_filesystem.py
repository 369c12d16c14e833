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
    """One path bound into the view: its location and whether the command may write it."""

    path: str
    writable: bool
    granted: bool = False
    """One of the grants' roots (not a system or interpreter directory)."""
    identity: tuple[int, int, bool] | None = None
    """A granted root's identity as the host found it (`Grants.identities`), checked at the bind."""
    what: str = ""
    """How errors name a granted root ("write root /w")."""
    pin: bool = False
    """A folder between a write root and a `hide` or `read_only` path, bound onto itself so that the
    command cannot rename it (a mount point cannot be renamed: EBUSY) and move the path away from
    what the next call covers. Not a grant: it lies inside its write root already."""


@dataclass(frozen=True)
class Layout:
    """The resolved view: what is mounted where, what is hidden, what the interpreter needs."""

    mounts: tuple[Mount, ...]
    symlinks: tuple[tuple[str, str], ...]
    hidden: tuple[tuple[str, bool], ...]
    """Each hidden path, and whether the host found it (it has an identity): then it must be there."""
    secret_covers: tuple[str, ...] = ()
    """What hides the host's secret files (`_secret_covers.secret_covers`): each must be there."""

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
    holders = [m for m in mounts if path == m or path.startswith(m.rstrip("/") + "/")]
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


def build_root(layout: Layout, grants: Grants, owner: tuple[int, int], as_root: bool) -> None:
    """Replace this mount namespace's root with the layout (needs CAP_SYS_ADMIN in its user namespace).

    Sources are opened before anything is mounted over them (a root below the staging directory,
    /tmp, stays reachable). Every mount point is reached from a descriptor of the new root, one
    component at a time without following a link (`_target`), and mounted onto by descriptor: a
    target below a granted folder — which another process may write while this runs — cannot be
    swapped for a link, or another file, between the check and the mount. `owner` (uid, gid) owns
    /tmp. As root, read roots are idmapped so the operator's files there are the command's (_idmap).
    """
    sc.mount(None, "/", None, sc.MS_REC | sc.MS_PRIVATE)
    sources = {m.path: _open_source(m) for m in layout.mounts}
    devices = {name: os.open(f"/dev/{name}", os.O_PATH | os.O_CLOEXEC) for name in DEV_NODES}
    sc.mount("tmpfs", _STAGE, "tmpfs", sc.MS_NOSUID | sc.MS_NODEV, "mode=0755,size=16m")
    new = _STAGE
    root = os.open(new, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    ours = {os.fstat(root).st_dev}  # the tmpfs mounts made here: nothing else can write them
    # /proc first: the idmapping namespace's child is found by its pid in our own PID namespace.
    _mount_at(root, "/proc", ours, "proc", sc.MS_NOSUID | sc.MS_NODEV | sc.MS_NOEXEC)
    idmap_fd = _idmap.mapping_namespace(owner[0], owner[1], new + "/proc") if as_root else None
    private_tmp = f"mode=0700,uid={owner[0]},gid={owner[1]},size={grants.tmp_bytes}"
    # A root that is /tmp itself is the host's /tmp, granted: then no private /tmp goes over it.
    tmp_done = any(m.path == TMP for m in layout.mounts)
    for mount in layout.mounts:
        if not tmp_done and mount.path.count("/") > 1:
            ours.add(_mount_at(root, TMP, ours, "tmpfs", sc.MS_NOSUID | sc.MS_NODEV, private_tmp))
            tmp_done = True
        source = sources[mount.path]
        target = _target(root, mount.path, ours, os.fstat(source), mount.what or f"mount point {mount.path}")
        try:
            if idmap_fd is not None and mount.granted and not mount.writable:
                if _idmap.bind_read_only(source, target, idmap_fd):
                    continue
            _bind(source, target, writable=mount.writable)
        finally:
            os.close(target)
    if not tmp_done:
        ours.add(_mount_at(root, TMP, ours, "tmpfs", sc.MS_NOSUID | sc.MS_NODEV, private_tmp))
    for link, destination in layout.symlinks:
        os.symlink(destination, link.lstrip("/"), dir_fd=root)
    _build_dev(root, ours, devices, private_tmp)
    for path, required in layout.hidden:
        _cover(root, path, required, devices["null"])
    for path in layout.secret_covers:  # never skipped: one gone since `plan` stops the start
        _cover(root, path, True, devices["null"])
    if idmap_fd is not None:
        os.close(idmap_fd)
    for fd in (root, *sources.values(), *devices.values()):
        os.close(fd)
    sc.remount_read_only(new)
    os.chdir(new)
    sc.pivot_root(".", ".")
    sc.umount2(".", sc.MNT_DETACH)
    os.chdir("/")


def _open_source(mount: Mount) -> int:
    """A granted root (or a pinned folder) reached without a symbolic link — a granted root checked
    against the identity the host recorded (`_identity.RootChanged`, an OSError naming it, otherwise);
    system and interpreter directories by path (the host's own, resolved by `plan`)."""
    if mount.pin:
        return _identity.open_no_symlinks(mount.path, mount.what)
    if mount.identity is None:
        return os.open(mount.path, os.O_PATH | os.O_CLOEXEC)
    return _identity.open_checked(mount.path, mount.what, mount.identity)


def _target(root: int, path: str, ours: set[int], expected: os.stat_result | None, what: str) -> int:
    """An ``O_PATH`` descriptor of the mount point `path` inside the new root, reached from `root`
    without following a link. A missing folder on the way, or the mount point itself (a folder, or a
    file when `expected` is one), is made — only on a tmpfs of `ours`; in a bound folder it was there
    when the source was opened, so its absence is a change. An existing mount point outside `ours`
    must be the file `expected` (the source: roots are mounted at their own paths), else
    ``RootChanged`` and nothing runs. With `expected` None nothing is made (the caller checks it)."""
    parent, name = os.path.split(path)

    def make(part: str, fd: int) -> None:
        if os.fstat(fd).st_dev not in ours:
            raise _identity.RootChanged(f"{what}: a folder on its way is missing, moved since the check")
        os.mkdir(part, 0o755, dir_fd=fd)

    fd = _identity.walk(os.dup(root), parent, what, make)
    try:
        try:
            step = os.open(name, _STEP, dir_fd=fd)
        except FileNotFoundError:
            if expected is None:
                raise FileNotFoundError(f"{what} does not exist (there is no {path})") from None
            if os.fstat(fd).st_dev not in ours:
                raise _identity.RootChanged(
                    f"{what} is missing where it is mounted, moved since the check"
                ) from None
            if stat.S_ISDIR(expected.st_mode):
                os.mkdir(name, 0o755, dir_fd=fd)
            else:
                os.close(
                    os.open(
                        name,
                        os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_WRONLY | os.O_CLOEXEC,
                        0o644,
                        dir_fd=fd,
                    )
                )
            step = os.open(name, _STEP, dir_fd=fd)
    finally:
        os.close(fd)
    info = os.fstat(step)
    moved = expected is not None and (info.st_dev, info.st_ino) != (expected.st_dev, expected.st_ino)
    if stat.S_ISLNK(info.st_mode):
        os.close(step)
        raise _identity.RootChanged(
            f"{what} goes through a symbolic link at {path}, put there after the check"
        )
    if moved and info.st_dev not in ours:
        os.close(step)
        raise _identity.RootChanged(f"{what} is not where it was checked: another file is at {path} now")
    return step


_STEP = os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC


def _mount_at(
    root: int, path: str, ours: set[int], fstype: str, flags: int, options: str | None = None
) -> int:
    """Mount a fresh `fstype` at `path` (a folder made on a tmpfs of ours); its device number."""
    target = _target(root, path, ours, os.fstat(root), f"mount point {path}")
    try:
        sc.mount(fstype, f"/proc/self/fd/{target}", fstype, flags, options)
    finally:
        os.close(target)
    mounted = os.open(path.lstrip("/"), _STEP, dir_fd=root)  # the new mount, on top at that folder
    try:
        return os.fstat(mounted).st_dev
    finally:
        os.close(mounted)


def _bind(source: int, target: int, writable: bool) -> None:
    """Bind `source`'s tree onto `target` (both descriptors), read-only unless `writable`."""
    tree = sc.clone_tree(source)
    try:
        if not writable:
            sc.set_tree_attributes(tree, sc.MOUNT_ATTR_RDONLY)
        sc.attach_tree(tree, target)
    finally:
        os.close(tree)


def _build_dev(root: int, ours: set[int], devices: dict[str, int], tmp_options: str) -> None:
    ours.add(_mount_at(root, "/dev", ours, "tmpfs", sc.MS_NOSUID | sc.MS_NODEV, "mode=0755,size=64k"))
    for name, fd in devices.items():
        target = _target(root, f"/dev/{name}", ours, os.fstat(fd), f"/dev/{name}")
        try:
            _bind(fd, target, writable=True)
        finally:
            os.close(target)
    for name, destination in (
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ):
        os.symlink(destination, f"dev/{name}", dir_fd=root)
    _mount_at(
        root, SHM, ours, "tmpfs", sc.MS_NOSUID | sc.MS_NODEV, tmp_options.replace("mode=0700", "mode=01777")
    )
    sc.remount_read_only(_STAGE + "/dev")  # a tmpfs of ours, at a path through tmpfs of ours only


def _cover(root: int, path: str, required: bool, null: int) -> None:
    """Make the hidden `path` unreachable — an empty read-only tmpfs over a folder, /dev/null over a
    file — reached from the new root without a link. Missing: refused when the host found it
    (`required`: it moved, perhaps under another name), skipped otherwise."""
    try:
        target = _target(root, path, set(), None, f"hide path {path}")
    except FileNotFoundError:
        if required:
            raise
        return
    try:
        _identity.check_one_name(target, f"hide path {path}")
        if stat.S_ISDIR(os.fstat(target).st_mode):
            flags = sc.MS_NOSUID | sc.MS_NODEV | sc.MS_RDONLY
            sc.mount("tmpfs", f"/proc/self/fd/{target}", "tmpfs", flags, "mode=000,size=4k")
        else:
            _bind(null, target, writable=False)
    finally:
        os.close(target)
