"""The sandbox's filesystem: a fresh root holding only what is granted, then Landlock over it.

Inside the mount namespace a tmpfs becomes the new root; each granted path of the layout
(`_layout.plan`) is bind-mounted at its own path (read roots and system directories read-only),
hidden paths are covered, /proc is a fresh mount of the sandbox's own PID namespace, /dev holds five
harmless nodes, /tmp and /dev/shm are private tmpfs. Whatever is not granted — /run's sockets,
/home, /root, other processes' /proc — does not exist in the view, which is how pathname unix sockets
outside the roots become unreachable (Landlock up to ABI 7 does not check connect(2) on them).
"""

from __future__ import annotations

import os
import stat

from . import _identity, _idmap
from . import _syscalls as sc
from ._grants import Grants
from ._layout import Layout, Mount
from ._one_name import check_one_name

DEV_NODES = ("null", "zero", "full", "random", "urandom")
TMP = "/tmp"
SHM = "/dev/shm"
_STAGE = "/tmp"  # where the new root's tmpfs is mounted before pivot_root (a path every system has)


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
        _cover(root, path, required, devices["null"], operator=True)
    for path in layout.secret_covers:  # never skipped: one gone since `plan` stops the start
        _cover(root, path, True, devices["null"], operator=False)
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


def _cover(root: int, path: str, required: bool, null: int, operator: bool) -> None:
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
        check_one_name(target, f"hide path {path}", path, folders=operator)
        if stat.S_ISDIR(os.fstat(target).st_mode):
            flags = sc.MS_NOSUID | sc.MS_NODEV | sc.MS_RDONLY
            sc.mount("tmpfs", f"/proc/self/fd/{target}", "tmpfs", flags, "mode=000,size=4k")
        else:
            _bind(null, target, writable=False)
    finally:
        os.close(target)
